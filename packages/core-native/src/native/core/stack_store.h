#ifndef MATE_CORE_STACK_STORE_H_
#define MATE_CORE_STACK_STORE_H_

#include <cstddef>
#include <cstdint>

namespace mate {

// Interned, never-freed strings (JS stacks, test names) addressed by a 32-bit
// id, so slot records stay small and the crash handler can read a string by
// id without locks: the table and the strings never move.
class StackStore {
 public:
  static StackStore& Get();
  // Returns 0 for an empty string or when the store is full (4M strings or
  // 256 MiB of text: the store is bounded).
  uint32_t Intern(const char* text, size_t len);
  // Lock-free; nullptr for id 0 or unknown ids.
  const char* Lookup(uint32_t id) const;

 private:
  StackStore();
  struct Impl;
  Impl* impl_;
};

}  // namespace mate

#endif  // MATE_CORE_STACK_STORE_H_
