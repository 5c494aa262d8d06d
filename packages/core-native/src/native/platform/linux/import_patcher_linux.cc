#include "platform/import_patcher.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "platform/guard_pages.h"

namespace mate {
namespace platform {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
constexpr uint32_t kAbs64 = R_X86_64_64;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
constexpr uint32_t kAbs64 = R_AARCH64_ABS64;
#else
#define MATE_NO_IMPORT_PATCHING 1
#endif

struct Dynamic {
  const ElfW(Rela) * rela = nullptr;
  size_t rela_bytes = 0;
  const ElfW(Rela) * jmprel = nullptr;
  size_t jmprel_bytes = 0;
  int64_t pltrel = DT_RELA;
  const ElfW(Sym) * symtab = nullptr;
  const char* strtab = nullptr;
  size_t strsz = 0;
};

// glibc relocates the address entries of a writable dynamic section in
// place, others (read-only dynamic sections, some loaders) leave them as
// virtual addresses: both forms are accepted.
uintptr_t Address(const LoadedObject& obj, ElfW(Addr) v) { return v < obj.base ? obj.base + v : v; }

bool ReadDynamic(const LoadedObject& obj, Dynamic* d) {
  const auto* ph = static_cast<const ElfW(Phdr)*>(obj.phdrs);
  const ElfW(Dyn)* dyn = nullptr;
  for (uint16_t i = 0; i < obj.phnum; i++)
    if (ph[i].p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(obj.base + ph[i].p_vaddr);
  if (dyn == nullptr) return false;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    switch (dyn->d_tag) {
      case DT_RELA:
        d->rela = reinterpret_cast<const ElfW(Rela)*>(Address(obj, dyn->d_un.d_ptr));
        break;
      case DT_RELASZ:
        d->rela_bytes = dyn->d_un.d_val;
        break;
      case DT_JMPREL:
        d->jmprel = reinterpret_cast<const ElfW(Rela)*>(Address(obj, dyn->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        d->jmprel_bytes = dyn->d_un.d_val;
        break;
      case DT_PLTREL:
        d->pltrel = static_cast<int64_t>(dyn->d_un.d_val);
        break;
      case DT_SYMTAB:
        d->symtab = reinterpret_cast<const ElfW(Sym)*>(Address(obj, dyn->d_un.d_ptr));
        break;
      case DT_STRTAB:
        d->strtab = reinterpret_cast<const char*>(Address(obj, dyn->d_un.d_ptr));
        break;
      case DT_STRSZ:
        d->strsz = dyn->d_un.d_val;
        break;
      default:
        break;
    }
  }
  return d->symtab != nullptr && d->strtab != nullptr;
}

struct Write {
  uintptr_t slot;
  void* target;
  // A data slot: written only if it still holds `held` (compare-and-swap);
  // `data` indexes its entry in RedirectResult::data.
  bool is_data;
  void* held;
  size_t data;
};

// Protection of the page holding `addr` as the object's headers describe
// it: RELRO pages are read-only after relocation.
int ProtectionOf(const LoadedObject& obj, uintptr_t addr) {
  const auto* ph = static_cast<const ElfW(Phdr)*>(obj.phdrs);
  int prot = -1;
  for (uint16_t i = 0; i < obj.phnum; i++) {
    uintptr_t lo = obj.base + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
    if (addr < lo || addr >= hi) continue;
    if (ph[i].p_type == PT_GNU_RELRO) return PROT_READ;
    if (ph[i].p_type == PT_LOAD) {
      prot = 0;
      if (ph[i].p_flags & PF_R) prot |= PROT_READ;
      if (ph[i].p_flags & PF_W) prot |= PROT_WRITE;
      if (ph[i].p_flags & PF_X) prot |= PROT_EXEC;
    }
  }
  return prot;
}

// Whether `addr` lies in one of the object's loaded segments (a lazy PLT
// slot still points back into its own object).
bool InObject(const LoadedObject& obj, uintptr_t addr) {
  const auto* ph = static_cast<const ElfW(Phdr)*>(obj.phdrs);
  for (uint16_t i = 0; i < obj.phnum; i++) {
    if (ph[i].p_type != PT_LOAD) continue;
    uintptr_t lo = obj.base + ph[i].p_vaddr;
    if (addr >= lo && addr < lo + ph[i].p_memsz) return true;
  }
  return false;
}

bool HoldsReal(const ImportRedirect& e, void* v) {
  return v != nullptr && (v == e.real[0] || v == e.real[1] || v == e.real[2]);
}

bool Owned(const std::vector<uintptr_t>* owned, uintptr_t slot) {
  if (owned == nullptr) return false;
  for (uintptr_t s : *owned)
    if (s == slot) return true;
  return false;
}

void Collect(const LoadedObject& obj, const Dynamic& d, const ElfW(Rela) * rel, size_t bytes,
             const ImportRedirect* table, size_t n, const std::vector<uintptr_t>* owned, std::vector<Write>* writes,
             RedirectResult* res) {
  if (rel == nullptr) return;
  size_t count = bytes / sizeof(ElfW(Rela));
  for (size_t i = 0; i < count; i++) {
    uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(rel[i].r_info));
    uint32_t sym_index = static_cast<uint32_t>(ELF64_R_SYM(rel[i].r_info));
    if (sym_index == 0 || (type != kJumpSlot && type != kGlobDat && type != kAbs64)) continue;
    const ElfW(Sym) & sym = d.symtab[sym_index];
    if (d.strsz && sym.st_name >= d.strsz) continue;
    const char* name = d.strtab + sym.st_name;
    for (size_t t = 0; t < n; t++) {
      const ImportRedirect& e = table[t];
      if (name[0] != e.symbol[0] || strcmp(name, e.symbol) != 0) continue;
      if (type == kAbs64 && rel[i].r_addend != 0) break;  // &malloc + k: not a call target
      uintptr_t slot = obj.base + rel[i].r_offset;
      bool knows_real = e.real[0] != nullptr || e.real[1] != nullptr || e.real[2] != nullptr;
      if (!e.only_real && sym.st_shndx != SHN_UNDEF) {
        // The object brings its own (a static allocator, exported): its
        // calls may bind to itself; redirecting them would split one heap.
        res->defined |= 1ull << t;
        break;
      }
      if (type == kAbs64 && knows_real) {
        // A variable: the program's once it set it, else libc's function.
        void* held = __atomic_load_n(reinterpret_cast<void* const*>(slot), __ATOMIC_ACQUIRE);
        DataSlot ds;
        ds.slot = slot;
        ds.entry = static_cast<uint32_t>(t);
        ds.held = held;
        ds.program_owned = Owned(owned, slot) || (held != e.target && !HoldsReal(e, held));
        ds.redirected = !ds.program_owned;
        size_t index = res->data.size();
        // DT_RELA may list the slot twice (PLT relocations inside it): once here.
        bool seen = false;
        for (const DataSlot& s : res->data) seen = seen || s.slot == slot;
        if (seen) break;
        res->data.push_back(ds);
        if (!ds.redirected) break;
        writes->push_back(Write{slot, e.target, true, held, index});
        res->symbols |= 1ull << t;
        break;
      }
      if (e.only_real) {
        void* bound = *reinterpret_cast<void* const*>(slot);
        bool lazy = type == kJumpSlot && sym.st_shndx == SHN_UNDEF && InObject(obj, reinterpret_cast<uintptr_t>(bound));
        if (!HoldsReal(e, bound) && bound != e.target && !lazy) break;
      }
      writes->push_back(Write{slot, e.target, false, nullptr, 0});
      res->symbols |= 1ull << t;
      break;
    }
  }
}

}  // namespace

RedirectResult RedirectImports(const LoadedObject& obj, const ImportRedirect* table, size_t n,
                               const std::vector<uintptr_t>* owned) {
  RedirectResult res;
#ifdef MATE_NO_IMPORT_PATCHING
  (void)obj;
  (void)table;
  (void)n;
  (void)owned;
  res.error = "import redirection is not implemented for this CPU architecture";
  return res;
#else
  if (n > 64) {
    res.error = "too many symbols";
    return res;
  }
  Dynamic d;
  if (!ReadDynamic(obj, &d)) {
    res.error = "no dynamic symbol table (a static object?)";
    return res;
  }
  if (d.jmprel != nullptr && d.pltrel != DT_RELA) {
    res.error = "REL-style PLT relocations are not supported";
    return res;
  }
  std::vector<Write> writes;
  Collect(obj, d, d.rela, d.rela_bytes, table, n, owned, &writes, &res);
  Collect(obj, d, d.jmprel, d.jmprel_bytes, table, n, owned, &writes, &res);
  // DT_RELA may cover the PLT relocations too: one write per slot.
  std::sort(writes.begin(), writes.end(), [](const Write& a, const Write& b) { return a.slot < b.slot; });
  writes.erase(
      std::unique(writes.begin(), writes.end(), [](const Write& a, const Write& b) { return a.slot == b.slot; }),
      writes.end());
  res.slots_redirected = static_cast<uint32_t>(writes.size());
  // Page by page; a read-only page (RELRO) is opened, written, closed.
  const uintptr_t page = PageSize();
  for (size_t i = 0; i < writes.size();) {
    uintptr_t pg = writes[i].slot & ~(page - 1);
    size_t j = i;
    while (j < writes.size() && (writes[j].slot & ~(page - 1)) == pg) j++;
    bool changed = false;
    for (size_t k = i; k < j; k++)
      if (*reinterpret_cast<void* const*>(writes[k].slot) != writes[k].target) changed = true;
    if (changed) {
      int prot = ProtectionOf(obj, writes[i].slot);
      bool open = prot >= 0 && !(prot & PROT_WRITE);
      if (open && mprotect(reinterpret_cast<void*>(pg), page, prot | PROT_READ | PROT_WRITE) != 0) {
        res.error = "mprotect of a read-only import page failed";
        res.slots_redirected -= static_cast<uint32_t>(j - i);
        for (size_t k = i; k < j; k++)
          if (writes[k].is_data) res.data[writes[k].data].redirected = false;
        i = j;
        continue;
      }
      for (size_t k = i; k < j; k++) {
        auto** slot = reinterpret_cast<void**>(writes[k].slot);
        if (*slot == writes[k].target) continue;
        if (writes[k].is_data) {
          // Only over what it held: a thread of the program setting the
          // variable meanwhile keeps its value.
          void* expected = writes[k].held;
          if (__atomic_compare_exchange_n(slot, &expected, writes[k].target, false, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE)) {
            res.slots_written++;
          } else {
            res.data[writes[k].data].held = expected;
            res.data[writes[k].data].redirected = false;
            res.data[writes[k].data].program_owned = true;
            res.slots_redirected--;
          }
          continue;
        }
        // One aligned store: a thread calling through the slot meanwhile
        // sees the old or the new target, never half of each.
        __atomic_store_n(slot, writes[k].target, __ATOMIC_RELEASE);
        res.slots_written++;
      }
      if (open) mprotect(reinterpret_cast<void*>(pg), page, prot);
    }
    i = j;
  }
  return res;
#endif
}

namespace {

// Writes `target` into each slot (page by page, RELRO pages opened and
// closed again); false when a page could not be opened.
bool WriteSlots(const LoadedObject& obj, std::vector<std::pair<uintptr_t, void*>>* writes, uint32_t* written) {
  std::sort(writes->begin(), writes->end());
  const uintptr_t page = PageSize();
  bool ok = true;
  for (size_t i = 0; i < writes->size();) {
    uintptr_t pg = (*writes)[i].first & ~(page - 1);
    size_t j = i;
    while (j < writes->size() && ((*writes)[j].first & ~(page - 1)) == pg) j++;
    int prot = ProtectionOf(obj, (*writes)[i].first);
    bool open = prot >= 0 && !(prot & PROT_WRITE);
    if (open && mprotect(reinterpret_cast<void*>(pg), page, prot | PROT_READ | PROT_WRITE) != 0) {
      ok = false;
      i = j;
      continue;
    }
    for (size_t k = i; k < j; k++) {
      auto** slot = reinterpret_cast<void**>((*writes)[k].first);
      if (*slot == (*writes)[k].second) continue;
      __atomic_store_n(slot, (*writes)[k].second, __ATOMIC_RELEASE);
      (*written)++;
    }
    if (open) mprotect(reinterpret_cast<void*>(pg), page, prot);
    i = j;
  }
  return ok;
}

#ifndef MATE_NO_IMPORT_PATCHING
// Calls visit(rela, symbol index) for every JUMP_SLOT and GLOB_DAT import
// slot of `d` (the object's RELA and PLT relocations alike).
template <typename Visit>
void ForEachImportSlot(const Dynamic& d, Visit visit) {
  for (auto [rel, bytes] : {std::pair{d.rela, d.rela_bytes}, std::pair{d.jmprel, d.jmprel_bytes}}) {
    if (rel == nullptr) continue;
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); i++) {
      uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(rel[i].r_info));
      uint32_t index = static_cast<uint32_t>(ELF64_R_SYM(rel[i].r_info));
      if (index != 0 && (type == kJumpSlot || type == kGlobDat)) visit(rel[i], index);
    }
  }
}
#endif

}  // namespace

OwnBindResult BindOwnWeakFunctions(const LoadedObject& obj, const ImportRedirect* skip, size_t n) {
  OwnBindResult res;
#ifdef MATE_NO_IMPORT_PATCHING
  (void)obj;
  (void)skip;
  (void)n;
  res.error = "import redirection is not implemented for this CPU architecture";
  return res;
#else
  Dynamic d;
  if (!ReadDynamic(obj, &d)) {
    res.error = "no dynamic symbol table (a static object?)";
    return res;
  }
  if (d.jmprel != nullptr && d.pltrel != DT_RELA) {
    res.error = "REL-style PLT relocations are not supported";
    return res;
  }
  std::vector<std::pair<uintptr_t, void*>> writes;
  std::vector<uint32_t> seen;          // symbol indexes named already
  uintptr_t self_lo = 0, self_hi = 0;  // mate-guard's own object
  ObjectRange(reinterpret_cast<const void*>(&BindOwnWeakFunctions), &self_lo, &self_hi);
  ForEachImportSlot(d, [&](const ElfW(Rela) & rel, uint32_t index) {
    const ElfW(Sym) & sym = d.symtab[index];
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0 || ELF64_ST_BIND(sym.st_info) != STB_WEAK ||
        ELF64_ST_TYPE(sym.st_info) != STT_FUNC)
      return;
    if (d.strsz && sym.st_name >= d.strsz) return;
    const char* name = d.strtab + sym.st_name;
    bool table = false;
    for (size_t t = 0; t < n && !table; t++) table = strcmp(name, skip[t].symbol) == 0;
    if (table) return;
    uintptr_t slot = obj.base + rel.r_offset;
    void* own = reinterpret_cast<void*>(obj.base + sym.st_value);
    writes.emplace_back(slot, own);
    if (std::find(seen.begin(), seen.end(), index) != seen.end()) return;
    // Bound elsewhere already, or (a lazy slot, still in the object's
    // PLT) the global scope, searched before the object's own, defines it.
    // dlsym searches our own object's local scope too: a copy found in
    // mate-guard itself is none the object would have bound to.
    void* bound = *reinterpret_cast<void* const*>(slot);
    bool elsewhere = bound != own && (!InObject(obj, reinterpret_cast<uintptr_t>(bound)) || [&] {
                       auto global = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, name));
                       return global != 0 && !InObject(obj, global) && !(global >= self_lo && global < self_hi);
                     }());
    if (!elsewhere) return;
    seen.push_back(index);
    res.names.push_back(name);
  });
  writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
  res.slots = static_cast<uint32_t>(writes.size());
  if (!WriteSlots(obj, &writes, &res.written)) res.error = "mprotect of a read-only import page failed";
  return res;
#endif
}

uint64_t ImportedNames(const LoadedObject& obj, const char* const* names, size_t n) {
  uint64_t found = 0;
#ifndef MATE_NO_IMPORT_PATCHING
  Dynamic d;
  if (n > 64 || !ReadDynamic(obj, &d)) return 0;
  ForEachImportSlot(d, [&](const ElfW(Rela) &, uint32_t index) {
    const ElfW(Sym) & sym = d.symtab[index];
    if (sym.st_shndx != SHN_UNDEF || (d.strsz && sym.st_name >= d.strsz)) return;
    for (size_t t = 0; t < n; t++)
      if (strcmp(d.strtab + sym.st_name, names[t]) == 0) found |= 1ull << t;
  });
#else
  (void)obj;
  (void)names;
  (void)n;
#endif
  return found;
}

void* CallTarget(const char* symbol) {
  struct Ctx {
    const char* symbol;
    void* bound;
  } ctx{symbol, nullptr};
#ifndef MATE_NO_IMPORT_PATCHING
  ForEachLoadedObject(
      [](const LoadedObject& obj, void* p) {
        if (!obj.main_program) return true;
        auto& c = *static_cast<Ctx*>(p);
        Dynamic d;
        if (!ReadDynamic(obj, &d) || d.jmprel == nullptr) return false;
        const auto* rel = d.jmprel;
        for (size_t i = 0; i < d.jmprel_bytes / sizeof(ElfW(Rela)); i++) {
          if (static_cast<uint32_t>(ELF64_R_TYPE(rel[i].r_info)) != kJumpSlot) continue;
          const ElfW(Sym) & sym = d.symtab[ELF64_R_SYM(rel[i].r_info)];
          if (strcmp(d.strtab + sym.st_name, c.symbol) != 0) continue;
          void* bound = *reinterpret_cast<void* const*>(obj.base + rel[i].r_offset);
          if (!InObject(obj, reinterpret_cast<uintptr_t>(bound))) c.bound = bound;  // not a lazy stub
          break;
        }
        return false;
      },
      &ctx);
#endif
  if (ctx.bound != nullptr) return ctx.bound;
  uintptr_t lo = 0, hi = 0;
  void* found = dlsym(RTLD_DEFAULT, symbol);
  if (found != nullptr && !(MainProgramRange(&lo, &hi) && reinterpret_cast<uintptr_t>(found) >= lo &&
                            reinterpret_cast<uintptr_t>(found) < hi))
    return found;
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  return libc != nullptr ? dlsym(libc, symbol) : found;
}

}  // namespace platform
}  // namespace mate
