#ifndef MATE_DEVICE_DRIVER_INTERNAL_CALLS_H_
#define MATE_DEVICE_DRIVER_INTERNAL_CALLS_H_

namespace mate {
namespace device {

namespace internal_calls {
// How many InternalCalls are alive on this thread (constant-initialized:
// read without a TLS wrapper call).
inline thread_local int t_depth = 0;
}  // namespace internal_calls

// The guard's own driver calls (fences, canary reads, mapping) are not the
// program's synchronization: launch tracking ignores the driver calls made
// while one of these is alive on the thread. Here, below the allocator and
// the tracker, so the allocator marks its calls without knowing the tracker.
class InternalCalls {
 public:
  InternalCalls() { internal_calls::t_depth++; }
  ~InternalCalls() { internal_calls::t_depth--; }
  InternalCalls(const InternalCalls&) = delete;
  InternalCalls& operator=(const InternalCalls&) = delete;
};

inline bool InInternalCalls() { return internal_calls::t_depth != 0; }

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DRIVER_INTERNAL_CALLS_H_
