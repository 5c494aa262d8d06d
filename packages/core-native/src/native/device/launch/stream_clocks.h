#ifndef MATE_DEVICE_STREAM_CLOCKS_H_
#define MATE_DEVICE_STREAM_CLOCKS_H_

#include <array>
#include <cstdint>
#include <unordered_map>

#include "device/driver/cuda_driver.h"
#include "device/launch/launch_tracker.h"

// Per-stream vector clocks, for the record_stream rule (cross-stream-free):
// for each stream, what work queued on it now is ordered after (the
// launches of every stream it waited for through events, the legacy default
// stream's implicit synchronization with blocking streams), and what the
// host knows finished (synchronizes, queries). Not locked: the launch
// tracker's lock guards it.
namespace mate {
namespace device {

class StreamClocks {
 public:
  static constexpr size_t kMaxStreams = 32;  // streams told apart; more share the last index
  static constexpr uint16_t kLegacy = 0;     // the legacy default stream (null, 0x1)
  static constexpr uint16_t kPerThread = 1;  // the per-thread default stream (0x2)
  static constexpr uint16_t kOverflow = kMaxStreams - 1;
  using Clock = std::array<uint64_t, kMaxStreams>;

  void SetDriver(const cuda::Driver* drv) { drv_ = drv; }

  // The index of a stream (`ptsz`: the call's null stream is the per-thread default stream).
  uint16_t IndexOf(cuda::CUstream s, bool ptsz);
  // A launch on `s`: it runs after everything its stream is ordered after.
  // Returns its use (stream index and sequence number; launch left 0).
  StreamUse Launch(cuda::CUstream s, bool ptsz);

  void EventRecorded(cuda::CUevent ev, cuda::CUstream s, bool ptsz);
  void StreamWaited(cuda::CUstream s, cuda::CUevent ev, bool ptsz);
  void StreamDone(cuda::CUstream s, bool ptsz);  // synchronized or queried idle
  void EventDone(cuda::CUevent ev);
  void ContextDone();
  void EventDestroyed(cuda::CUevent ev);
  void StreamCreated(cuda::CUstream s, unsigned flags);
  // A launch the guard itself waited for (launch blocking): finished, for reports.
  void LaunchDone(const StreamUse& use);

  // Whether work queued on `stream` now (or the host) is ordered after `use`.
  bool Ordered(cuda::CUstream stream, const StreamUse& use);
  // Whether `use` is known finished (the guard's own synchronizes included).
  bool Finished(uint16_t stream, uint64_t seq) const;
  cuda::CUstream Handle(uint16_t index) const;

 private:
  static void Join(Clock* into, const Clock& other);
  Clock Effective(uint16_t i) const;

  const cuda::Driver* drv_ = nullptr;
  cuda::CUstream handles_[kMaxStreams] = {};
  bool blocking_stream_[kMaxStreams] = {};
  uint16_t count_ = 2;  // the legacy and per-thread default streams are always there
  std::unordered_map<cuda::CUstream, uint16_t> index_;
  Clock seq_{};
  Clock clock_[kMaxStreams] = {};
  Clock host_{};
  Clock done_{};  // launches known finished, the guard's own synchronizes included (for reports only)
  std::unordered_map<cuda::CUevent, Clock> events_;
};

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_STREAM_CLOCKS_H_
