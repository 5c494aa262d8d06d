#ifndef MATE_CORE_FREE_STATUS_H_
#define MATE_CORE_FREE_STATUS_H_

namespace mate {

// What a free did, for every backend: JS buffers and the native heap
// (core/guarded_allocator.h) and CUDA device memory (device/).
enum class FreeStatus {
  kFreed,
  kNotGuarded,   // not a pointer of this allocator's: the caller hands it on
  kInvalidFree,  // inside the region but no allocation's start: recorded, ignored
  kDoubleFree,   // an allocation freed already: recorded, ignored
  kFailed,       // device only: the driver call to release it failed
};

}  // namespace mate

#endif  // MATE_CORE_FREE_STATUS_H_
