// A CUDA driver function by name, for the bench's pluggable allocators
// (quarantine_floor.cc, layout_floor.cc): they load libcuda themselves, as
// the guard does, so they build without linking it. Aborts where it is missing.
#pragma once
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

template <typename F>
F DriverSymbol(const char* name) {
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  void* f = lib ? dlsym(lib, name) : nullptr;
  if (f == nullptr) {
    fprintf(stderr, "bench allocator: no %s in libcuda.so.1\n", name);
    abort();
  }
  return reinterpret_cast<F>(f);
}
