#ifndef MATE_CORE_STACK_STORE_H_
#define MATE_CORE_STACK_STORE_H_

#include <cstddef>
#include <cstdint>

namespace mate {

// Interned, never-freed strings (JS stacks, test names) and native stacks
// (raw PCs) addressed by a 32-bit id, so slot records stay small and the
// crash handler can read an entry by id without locks: the table and the
// entries never move. Strings and frames share the id space; each lookup
// answers only for ids of its own kind.
class StackStore {
 public:
  static StackStore& Get();
  // Returns 0 for an empty string or when the store is full (4M strings or
  // 256 MiB of text: the store is bounded).
  uint32_t Intern(const char* text, size_t len);
  // Lock-free; nullptr for id 0 or unknown ids.
  const char* Lookup(uint32_t id) const;

  // Native call stacks: `n` raw PCs, innermost first. Returns 0 for n == 0
  // or when the store is full.
  uint32_t InternFrames(const uintptr_t* pcs, size_t n);
  // Lock-free; sets *pcs to the stored frames and returns their count (0
  // for id 0, unknown ids or ids of strings).
  size_t LookupFrames(uint32_t id, const uintptr_t** pcs) const;

 private:
  StackStore();
  uint32_t InternBytes(uint8_t kind, const void* data, size_t len);
  struct Impl;
  Impl* impl_;
};

}  // namespace mate

#endif  // MATE_CORE_STACK_STORE_H_
