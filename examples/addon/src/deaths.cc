// Ways a process dies that are no guard fault: each must still leave a
// mate-guard report that names the running test.
#undef NDEBUG  // the failed assert below must abort in the Release build too
#include "deaths.h"

#include <dlfcn.h>

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace {

// abort(), as a library does when it gives up.
Napi::Value Abort(const Napi::CallbackInfo& info) {
  if (info.Length() < 100) abort();
  return info.Env().Undefined();
}

// A failed assert: glibc prints the expression and aborts.
Napi::Value AssertFails(const Napi::CallbackInfo& info) {
  size_t count = info.Length();
  assert(count == 42 && "the index must be in range");
  return info.Env().Undefined();
}

// A write through a wild pointer (an address nothing maps).
Napi::Value WildWrite(const Napi::CallbackInfo& info) {
  volatile uint8_t* wild = reinterpret_cast<volatile uint8_t*>(static_cast<uintptr_t>(0xdead0000) + info.Length());
  *wild = 1;
  return info.Env().Undefined();
}

// A C++ exception no frame catches: it leaves the addon through Node's
// frames, so std::terminate runs.
Napi::Value ThrowUncaught(const Napi::CallbackInfo& info) {
  if (info.Length() < 100) throw std::out_of_range("row 12 is past the end of the index (10 rows)");
  return info.Env().Undefined();
}

// Frees what its own malloc gave through a pointer to libc's free taken at
// run time from libc itself: a path no import redirection sees (as code
// that keeps allocator function pointers does). Guarded, glibc's checks
// abort. (dlsym(RTLD_DEFAULT, "free") would not bypass it: in node it
// names the executable's PLT entry, whose slot is redirected.)
Napi::Value FreeBypassingRouter(const Napi::CallbackInfo& info) {
  using FreeFn = void (*)(void*);
  static FreeFn libc_free = reinterpret_cast<FreeFn>(dlsym(dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD), "free"));
  void* p = malloc(40);
  static_cast<volatile char*>(p)[0] = static_cast<char>(info.Length());
  libc_free(p);
  return info.Env().Undefined();
}

// A double free of memory mate-guard does not guard (libc's own malloc,
// reached the same way) while a guarded block is live in the same frame:
// glibc's tcache check aborts, and the report must not blame the guarded block.
Napi::Value LibcDoubleFree(const Napi::CallbackInfo& info) {
  using MallocFn = void* (*)(size_t);
  using FreeFn = void (*)(void*);
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  static MallocFn libc_malloc = reinterpret_cast<MallocFn>(dlsym(libc, "malloc"));
  static FreeFn libc_free = reinterpret_cast<FreeFn>(dlsym(libc, "free"));
  volatile char* guarded = static_cast<volatile char*>(malloc(48));
  void* plain = libc_malloc(48);
  guarded[0] = static_cast<char>(info.Length());
  libc_free(plain);
  libc_free(plain);
  guarded[1] = guarded[0];
  free(const_cast<char*>(guarded));
  return info.Env().Undefined();
}

}  // namespace

void InitDeaths(Napi::Env env, Napi::Object exports) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("abort", Napi::Function::New(env, Abort));
  o.Set("assertFails", Napi::Function::New(env, AssertFails));
  o.Set("wildWrite", Napi::Function::New(env, WildWrite));
  o.Set("throwUncaught", Napi::Function::New(env, ThrowUncaught));
  o.Set("freeBypassingRouter", Napi::Function::New(env, FreeBypassingRouter));
  o.Set("libcDoubleFree", Napi::Function::New(env, LibcDoubleFree));
  exports.Set("deaths", o);
}
