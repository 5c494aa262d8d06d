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

}  // namespace host
}  // namespace mate

#endif  // MATE_HOST_NUMPY_HANDLER_H_
