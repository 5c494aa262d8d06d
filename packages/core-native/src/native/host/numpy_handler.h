#ifndef MATE_HOST_NUMPY_HANDLER_H_
#define MATE_HOST_NUMPY_HANDLER_H_

#include <cstddef>
#include <cstdint>

// numpy's data-allocation handler (NEP 49, numpy >= 1.22), declared here
// so the library builds without numpy's headers: the layout of
// PyDataMem_Handler version 1 (numpy/ndarraytypes.h), which numpy keeps
// stable ("only add new fields after this line").
namespace mate {
namespace host {

struct NumpyAllocator {
  void* ctx;
  void* (*malloc)(void* ctx, size_t size);
  void* (*calloc)(void* ctx, size_t nelem, size_t elsize);
  void* (*realloc)(void* ctx, void* ptr, size_t new_size);
  void (*free)(void* ctx, void* ptr, size_t size);
};

struct NumpyHandler {
  char name[127];
  uint8_t version;
  NumpyAllocator allocator;
};

// The guard's handler ("mate_guard", version 1). `previous` is the handler
// numpy had (PyDataMem_SetHandler's answer): blocks the guard did not hand
// out (a fallback when no slot could be had) are made and freed by it.
NumpyHandler* GuardNumpyHandler(const NumpyHandler* previous);

// numpy's default handler, counted: the capsule every new context starts
// with (PyDataMem_DefaultHandler; arrays made before install hold it too)
// is pointed at this copy of `numpy_default`, which keeps its name and
// makes and frees memory with numpy's own functions, so an array holding
// that capsule still has numpy's memory (a library may take it over on
// that promise). It counts the arrays made before install as they are
// freed, and the arrays made after install in a context the guard's
// handler was not set in (a thread started before install or from C).
NumpyHandler* CountingDefaultHandler(const NumpyHandler* numpy_default);

}  // namespace host
}  // namespace mate

#endif  // MATE_HOST_NUMPY_HANDLER_H_
