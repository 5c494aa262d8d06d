#ifndef MATE_REPORT_ELF_SYMBOLS_H_
#define MATE_REPORT_ELF_SYMBOLS_H_

// Function names from an ELF object's own symbol tables (.symtab, else
// .dynsym), for frames no symbolizer tool could name (none installed: a
// machine without binutils or LLVM). Names only, no lines. Addresses are
// link-time virtual addresses, the same as a frame's offset (pc - load
// bias), for executables, PIE and shared objects alike.
#include <cstdint>
#include <string>
#include <vector>

namespace mate {

class ElfFunctions {
 public:
  // Reads `file`'s function symbols; empty when it is not a readable ELF object or has none.
  explicit ElfFunctions(const std::string& file);
  // The (demangled) name of the function whose [start, start + size) holds `address`; "" when none does.
  std::string At(uint64_t address) const;

 private:
  struct Function {
    uint64_t start, size;
    uint32_t name;
    bool local;
  };
  std::vector<Function> functions_;
  std::string strings_;
};

}  // namespace mate

#endif  // MATE_REPORT_ELF_SYMBOLS_H_
