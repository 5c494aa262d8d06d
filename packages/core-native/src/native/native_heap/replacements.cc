// The replacements. Each tries the guarded side first and otherwise calls
// the real function: our own imports are never redirected, so `malloc`
// here is libc's (or whatever the process's allocator is), `::operator new`
// libstdc++'s.
#include "native_heap/replacements.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "native_heap/foreign_quarantine.h"
#include "native_heap/free_router.h"
#include "native_heap/heap_ops.h"

namespace mate {
namespace native_heap {

namespace {

bool PowerOfTwo(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Each allocation entry point marks the chosen module that called it (its
// return address), for the end-of-run line about modules that made none;
// the same address is the call site that site-aware sampling counts.
#define NOTE_CALLER()                             \
  const void* site = __builtin_return_address(0); \
  NoteCaller(site)

// --- C -----------------------------------------------------------------

void* Malloc(size_t n) {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, 0, site)) return p;
  return malloc(n);
}

void* Calloc(size_t n, size_t m) {
  NOTE_CALLER();
  size_t total;
  if (__builtin_mul_overflow(n, m, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (void* p = TryAllocate(total, 0, site)) return p;  // slots come zeroed from the kernel
  return calloc(n, m);
}

// realloc from `site` (realloc and reallocarray: the module's call, not ours).
void* ReallocFrom(void* p, size_t n, const void* site) {
  if (p == nullptr) {
    if (void* q = TryAllocate(n, 0, site)) return q;
    return malloc(n);
  }
  void* out;
  if (TryRealloc(p, n, &out)) return out;
  // libc's block stays libc's (its size is not known exactly); a realloc
  // that allocates still counts as an allocation call of the module.
  if (n != 0) CountUnguarded();
  return realloc(p, n);
}

void* Realloc(void* p, size_t n) {
  NOTE_CALLER();
  return ReallocFrom(p, n, site);
}

void* ReallocArray(void* p, size_t n, size_t m) {
  NOTE_CALLER();
  size_t total;
  if (__builtin_mul_overflow(n, m, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return ReallocFrom(p, total, site);
}

// Memory the module did not get from the guard goes to the foreign
// quarantine (held, filled, checked), which releases it with the same call.
void ReleaseFree(void* p, size_t, size_t) { free(p); }

void Free(void* p) {
  if (p != nullptr && !TryFree(p)) HoldForeign(p, &ReleaseFree, 0, 0, false);
}

int PosixMemalign(void** out, size_t alignment, size_t n) {
  NOTE_CALLER();
  if (!PowerOfTwo(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  if (void* p = TryAllocate(n, alignment, site)) {
    *out = p;
    return 0;
  }
  return posix_memalign(out, alignment, n);
}

void* AlignedAlloc(size_t alignment, size_t n) {
  NOTE_CALLER();
  if (PowerOfTwo(alignment))
    if (void* p = TryAllocate(n, alignment, site)) return p;
  return aligned_alloc(alignment, n);
}

void* Memalign(size_t alignment, size_t n) {
  NOTE_CALLER();
  if (PowerOfTwo(alignment))
    if (void* p = TryAllocate(n, alignment, site)) return p;
  return memalign(alignment, n);
}

void* Valloc(size_t n) {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, static_cast<size_t>(getpagesize()), site)) return p;
  return valloc(n);
}

void* Pvalloc(size_t n) {
  NOTE_CALLER();
  size_t page = static_cast<size_t>(getpagesize());
  size_t rounded = (n + page - 1) & ~(page - 1);
  if (rounded < n) {
    errno = ENOMEM;
    return nullptr;
  }
  if (void* p = TryAllocate(rounded ? rounded : page, page, site)) return p;
  return pvalloc(n);
}

size_t MallocUsableSize(void* p) {
  if (p == nullptr) return 0;
  size_t size;
  if (TryUsableSize(p, &size)) return size;
  return malloc_usable_size(p);
}

char* Strdup(const char* s) {
  NOTE_CALLER();
  size_t n = strlen(s) + 1;
  if (void* p = TryAllocate(n, 0, site)) return static_cast<char*>(memcpy(p, s, n));
  return strdup(s);
}

char* Strndup(const char* s, size_t max) {
  NOTE_CALLER();
  size_t n = strnlen(s, max);
  if (auto* p = static_cast<char*>(TryAllocate(n + 1, 0, site))) {
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
  }
  return strndup(s, max);
}

// --- C++ ---------------------------------------------------------------

size_t Align(std::align_val_t al) { return static_cast<size_t>(al); }

void* New(size_t n) {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, 0, site)) return p;
  return ::operator new(n);
}
void* NewArray(size_t n) {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, 0, site)) return p;
  return ::operator new[](n);
}
void* NewNothrow(size_t n, const std::nothrow_t& tag) noexcept {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, 0, site)) return p;
  return ::operator new(n, tag);
}
void* NewArrayNothrow(size_t n, const std::nothrow_t& tag) noexcept {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, 0, site)) return p;
  return ::operator new[](n, tag);
}
void* NewAligned(size_t n, std::align_val_t al) {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, Align(al), site)) return p;
  return ::operator new(n, al);
}
void* NewArrayAligned(size_t n, std::align_val_t al) {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, Align(al), site)) return p;
  return ::operator new[](n, al);
}
void* NewAlignedNothrow(size_t n, std::align_val_t al, const std::nothrow_t& tag) noexcept {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, Align(al), site)) return p;
  return ::operator new(n, al, tag);
}
void* NewArrayAlignedNothrow(size_t n, std::align_val_t al, const std::nothrow_t& tag) noexcept {
  NOTE_CALLER();
  if (void* p = TryAllocate(n, Align(al), site)) return p;
  return ::operator new[](n, al, tag);
}

// Each delete passes a pointer that is not ours to the foreign quarantine,
// which gives it back to the same form of the real operator, so libstdc++
// sees exactly the call the module made.
void RelDelete(void* p, size_t, size_t) { ::operator delete(p); }
void RelDeleteArray(void* p, size_t, size_t) { ::operator delete[](p); }
void RelDeleteSized(void* p, size_t n, size_t) { ::operator delete(p, n); }
void RelDeleteArraySized(void* p, size_t n, size_t) { ::operator delete[](p, n); }
void RelDeleteAligned(void* p, size_t, size_t al) { ::operator delete(p, std::align_val_t(al)); }
void RelDeleteArrayAligned(void* p, size_t, size_t al) { ::operator delete[](p, std::align_val_t(al)); }
void RelDeleteSizedAligned(void* p, size_t n, size_t al) { ::operator delete(p, n, std::align_val_t(al)); }
void RelDeleteArraySizedAligned(void* p, size_t n, size_t al) { ::operator delete[](p, n, std::align_val_t(al)); }

#define DELETE_FOREIGN(release, n, al) \
  if (p && !TryFree(p)) HoldForeign(p, &release, n, al, true)

void Delete(void* p) noexcept { DELETE_FOREIGN(RelDelete, 0, 0); }
void DeleteArray(void* p) noexcept { DELETE_FOREIGN(RelDeleteArray, 0, 0); }
void DeleteSized(void* p, size_t n) noexcept { DELETE_FOREIGN(RelDeleteSized, n, 0); }
void DeleteArraySized(void* p, size_t n) noexcept { DELETE_FOREIGN(RelDeleteArraySized, n, 0); }
// The nothrow forms are the plain ones (libstdc++'s call them).
void DeleteNothrow(void* p, const std::nothrow_t&) noexcept { DELETE_FOREIGN(RelDelete, 0, 0); }
void DeleteArrayNothrow(void* p, const std::nothrow_t&) noexcept { DELETE_FOREIGN(RelDeleteArray, 0, 0); }
void DeleteAligned(void* p, std::align_val_t al) noexcept { DELETE_FOREIGN(RelDeleteAligned, 0, Align(al)); }
void DeleteArrayAligned(void* p, std::align_val_t al) noexcept { DELETE_FOREIGN(RelDeleteArrayAligned, 0, Align(al)); }
void DeleteSizedAligned(void* p, size_t n, std::align_val_t al) noexcept {
  DELETE_FOREIGN(RelDeleteSizedAligned, n, Align(al));
}
void DeleteArraySizedAligned(void* p, size_t n, std::align_val_t al) noexcept {
  DELETE_FOREIGN(RelDeleteArraySizedAligned, n, Align(al));
}
void DeleteAlignedNothrow(void* p, std::align_val_t al, const std::nothrow_t&) noexcept {
  DELETE_FOREIGN(RelDeleteAligned, 0, Align(al));
}
void DeleteArrayAlignedNothrow(void* p, std::align_val_t al, const std::nothrow_t&) noexcept {
  DELETE_FOREIGN(RelDeleteArrayAligned, 0, Align(al));
}

template <typename F>
void* Fn(F f) {
  return reinterpret_cast<void*>(f);
}

const platform::ImportRedirect kNames[] = {
    {"malloc", Fn(&Malloc)},
    {"calloc", Fn(&Calloc)},
    {"realloc", Fn(&Realloc)},
    {"reallocarray", Fn(&ReallocArray)},
    {"free", Fn(&Free)},
    {"posix_memalign", Fn(&PosixMemalign)},
    {"aligned_alloc", Fn(&AlignedAlloc)},
    {"memalign", Fn(&Memalign)},
    {"valloc", Fn(&Valloc)},
    {"pvalloc", Fn(&Pvalloc)},
    {"malloc_usable_size", Fn(&MallocUsableSize)},
    {"strdup", Fn(&Strdup)},
    {"strndup", Fn(&Strndup)},
    {"__strdup", Fn(&Strdup)},
    {"__strndup", Fn(&Strndup)},
    {"_Znwm", Fn(&New)},                       // new(size_t)
    {"_Znam", Fn(&NewArray)},                  // new[](size_t)
    {"_ZnwmRKSt9nothrow_t", Fn(&NewNothrow)},  // new(size_t, nothrow_t)
    {"_ZnamRKSt9nothrow_t", Fn(&NewArrayNothrow)},
    {"_ZnwmSt11align_val_t", Fn(&NewAligned)},  // new(size_t, align_val_t)
    {"_ZnamSt11align_val_t", Fn(&NewArrayAligned)},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", Fn(&NewAlignedNothrow)},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", Fn(&NewArrayAlignedNothrow)},
    {"_ZdlPv", Fn(&Delete)},  // delete(void*)
    {"_ZdaPv", Fn(&DeleteArray)},
    {"_ZdlPvm", Fn(&DeleteSized)},  // delete(void*, size_t)
    {"_ZdaPvm", Fn(&DeleteArraySized)},
    {"_ZdlPvRKSt9nothrow_t", Fn(&DeleteNothrow)},
    {"_ZdaPvRKSt9nothrow_t", Fn(&DeleteArrayNothrow)},
    {"_ZdlPvSt11align_val_t", Fn(&DeleteAligned)},  // delete(void*, align_val_t)
    {"_ZdaPvSt11align_val_t", Fn(&DeleteArrayAligned)},
    {"_ZdlPvmSt11align_val_t", Fn(&DeleteSizedAligned)},  // delete(void*, size_t, align_val_t)
    {"_ZdaPvmSt11align_val_t", Fn(&DeleteArraySizedAligned)},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", Fn(&DeleteAlignedNothrow)},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", Fn(&DeleteArrayAlignedNothrow)},
};

constexpr size_t kCount = sizeof(kNames) / sizeof(kNames[0]);

}  // namespace

// libstdc++'s operator new takes its memory from malloc and its delete
// gives it to free, so malloc_usable_size may measure a deleted block;
// another operator new (a program's own, tcmalloc's) may not be malloc's.
bool NewTakesFromMalloc() {
  for (const char* symbol : {"_Znwm", "_ZdlPv"}) {
    Dl_info info;
    void* fn = dlsym(RTLD_DEFAULT, symbol);
    if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return false;
    const char* base = strrchr(info.dli_fname, '/');
    if (strncmp(base ? base + 1 : info.dli_fname, "libstdc++", 9) != 0) return false;
  }
  return true;
}

// Each entry with the values a variable initialised to the real function
// holds (its canonical address, as data relocations and `&free` see it;
// where calls bind), and the free router's entry, which an earlier pass may
// have written there before the module was chosen.
const platform::ImportRedirect* Replacements(size_t* count) {
  static platform::ImportRedirect table[kCount];
  static bool built = false;
  if (!built) {
    size_t routes = 0;
    const platform::ImportRedirect* routed = FreeRoutes(&routes);
    for (size_t i = 0; i < kCount; i++) {
      table[i] = kNames[i];
      table[i].real[0] = dlsym(RTLD_DEFAULT, kNames[i].symbol);
      table[i].real[1] = platform::CallTarget(kNames[i].symbol);
      for (size_t r = 0; r < routes; r++)
        if (strcmp(routed[r].symbol, kNames[i].symbol) == 0) table[i].real[2] = routed[r].target;
    }
    built = true;
  }
  *count = kCount;
  return table;
}

}  // namespace native_heap
}  // namespace mate
