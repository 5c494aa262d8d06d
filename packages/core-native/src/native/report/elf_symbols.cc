#include "report/elf_symbols.h"

#include <cxxabi.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include "platform/regular_file.h"

namespace mate {

namespace {

// Past this a table is not worth reading for a report (node's own is ~8 MiB).
constexpr uint64_t kMaxTableBytes = 256ull << 20;

bool ReadAt(int fd, uint64_t offset, void* buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, static_cast<char*>(buf) + done, len - done, static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

// 64-bit little- or native-endian objects (the platforms mate-guard builds for: x86-64, aarch64).
ElfFunctions::ElfFunctions(const std::string& file) {
  // The module is an event's word: a FIFO there would block a plain open (and a device's reads) for ever.
  platform::OwnedFd f{platform::OpenRegularFile(file.c_str(), nullptr)};
  if (f.fd < 0) return;
  Elf64_Ehdr eh;
  if (!ReadAt(f.fd, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shoff == 0 || eh.e_shentsize < sizeof(Elf64_Shdr))
    return;
  uint64_t shnum = eh.e_shnum;
  if (shnum == 0) {  // extended numbering: the count is in section 0's size
    Elf64_Shdr first;
    if (!ReadAt(f.fd, eh.e_shoff, &first, sizeof(first))) return;
    shnum = first.sh_size;
  }
  if (shnum == 0 || shnum > 65536 * 4) return;
  std::vector<Elf64_Shdr> sections(shnum);
  for (uint64_t i = 0; i < shnum; i++) {
    if (!ReadAt(f.fd, eh.e_shoff + i * eh.e_shentsize, &sections[i], sizeof(Elf64_Shdr))) return;
  }
  // .symtab has everything .dynsym has and the local functions too.
  const Elf64_Shdr* table = nullptr;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type == SHT_SYMTAB) table = &s;
  }
  for (const Elf64_Shdr& s : sections) {
    if (table == nullptr && s.sh_type == SHT_DYNSYM) table = &s;
  }
  if (table == nullptr || table->sh_size == 0 || table->sh_size > kMaxTableBytes || table->sh_link >= shnum) return;
  const Elf64_Shdr& strtab = sections[table->sh_link];
  if (strtab.sh_size > kMaxTableBytes) return;
  std::vector<Elf64_Sym> syms(table->sh_size / sizeof(Elf64_Sym));
  strings_.resize(strtab.sh_size);
  if (!ReadAt(f.fd, table->sh_offset, syms.data(), syms.size() * sizeof(Elf64_Sym)) ||
      !ReadAt(f.fd, strtab.sh_offset, &strings_[0], strings_.size())) {
    strings_.clear();
    return;
  }
  for (const Elf64_Sym& s : syms) {
    int type = ELF64_ST_TYPE(s.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || s.st_value == 0) continue;
    functions_.push_back({s.st_value, s.st_size, s.st_name, ELF64_ST_BIND(s.st_info) == STB_LOCAL});
  }
  // Aliases share an address: keep one, a global name before a local one.
  std::sort(functions_.begin(), functions_.end(), [](const Function& a, const Function& b) {
    return a.start != b.start ? a.start < b.start : (!a.local && b.local);
  });
  functions_.erase(std::unique(functions_.begin(), functions_.end(),
                               [](const Function& a, const Function& b) { return a.start == b.start; }),
                   functions_.end());
}

std::string ElfFunctions::At(uint64_t address) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [](uint64_t a, const Function& f) { return a < f.start; });
  // Nearest start at or below; a few back in case a small symbol sits inside
  // a bigger one. A symbol that does not cover the address is no answer:
  // naming a neighbour would be worse than none.
  for (int back = 0; back < 8 && it != functions_.begin(); back++) {
    const Function& f = *--it;
    if (address < f.start + f.size || (f.size == 0 && address == f.start)) {
      if (f.name >= strings_.size()) return "";
      const char* mangled = strings_.c_str() + f.name;
      int status = 0;
      char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
      std::string name = status == 0 && d != nullptr ? d : mangled;
      free(d);
      return name;
    }
  }
  return "";
}

}  // namespace mate
