#include "device/launch/stream_clocks.h"

#include <algorithm>

namespace mate {
namespace device {

using cuda::CUstream;

void StreamClocks::Join(Clock* into, const Clock& other) {
  for (size_t i = 0; i < kMaxStreams; i++) (*into)[i] = std::max((*into)[i], other[i]);
}

uint16_t StreamClocks::IndexOf(CUstream s, bool ptsz) {
  if (s == nullptr) return ptsz ? kPerThread : kLegacy;
  if (reinterpret_cast<uintptr_t>(s) == cuda::kStreamLegacy) return kLegacy;
  if (reinterpret_cast<uintptr_t>(s) == cuda::kStreamPerThread) return kPerThread;
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  uint16_t i = count_ < kOverflow ? count_++ : kOverflow;
  if (i != kOverflow) {
    // A stream we did not see created (made before tracking started): ask.
    unsigned flags = cuda::kStreamNonBlocking;
    drv_->cuStreamGetFlags(s, &flags);
    blocking_stream_[i] = (flags & cuda::kStreamNonBlocking) == 0;
    handles_[i] = s;
  }
  index_.emplace(s, i);
  return i;
}

// What work queued on stream `i` now is ordered after: its own clock, plus
// the legacy default stream's implicit synchronization with blocking streams.
StreamClocks::Clock StreamClocks::Effective(uint16_t i) const {
  Clock c = clock_[i];
  c[i] = std::max(c[i], seq_[i]);
  if (i == kLegacy) {
    for (uint16_t b = 1; b < count_; b++) {
      if (!blocking_stream_[b]) continue;
      Join(&c, clock_[b]);
      c[b] = std::max(c[b], seq_[b]);
    }
  } else if (blocking_stream_[i]) {
    Join(&c, clock_[kLegacy]);
    c[kLegacy] = std::max(c[kLegacy], seq_[kLegacy]);
  }
  return c;
}

StreamUse StreamClocks::Launch(CUstream s, bool ptsz) {
  uint16_t i = IndexOf(s, ptsz);
  clock_[i] = Effective(i);
  seq_[i]++;
  clock_[i][i] = seq_[i];
  return StreamUse{i, seq_[i], 0};
}

void StreamClocks::EventRecorded(cuda::CUevent ev, CUstream s, bool ptsz) { events_[ev] = Effective(IndexOf(s, ptsz)); }

void StreamClocks::StreamWaited(CUstream s, cuda::CUevent ev, bool ptsz) {
  auto it = events_.find(ev);
  if (it == events_.end()) return;  // recorded before tracking started
  Join(&clock_[IndexOf(s, ptsz)], it->second);
}

void StreamClocks::StreamDone(CUstream s, bool ptsz) { Join(&host_, Effective(IndexOf(s, ptsz))); }

void StreamClocks::EventDone(cuda::CUevent ev) {
  auto it = events_.find(ev);
  if (it != events_.end()) Join(&host_, it->second);
}

void StreamClocks::ContextDone() {
  for (size_t i = 0; i < kMaxStreams; i++) host_[i] = std::max(host_[i], seq_[i]);
}

void StreamClocks::EventDestroyed(cuda::CUevent ev) { events_.erase(ev); }

void StreamClocks::StreamCreated(CUstream s, unsigned flags) {
  uint16_t i = IndexOf(s, false);
  if (i != kOverflow) blocking_stream_[i] = (flags & cuda::kStreamNonBlocking) == 0;
}

void StreamClocks::LaunchDone(const StreamUse& use) { done_[use.stream] = std::max(done_[use.stream], use.seq); }

bool StreamClocks::Ordered(CUstream stream, const StreamUse& use) {
  uint16_t f = IndexOf(stream, false);
  if (use.stream == f || use.stream == kOverflow || f == kOverflow) return true;  // same stream, or not told apart
  Clock c = Effective(f);
  Join(&c, host_);
  return c[use.stream] >= use.seq;
}

bool StreamClocks::Finished(uint16_t stream, uint64_t seq) const {
  return std::max(host_[stream], done_[stream]) >= seq;
}

CUstream StreamClocks::Handle(uint16_t index) const {
  if (index == kLegacy) return nullptr;
  if (index == kPerThread) return reinterpret_cast<CUstream>(cuda::kStreamPerThread);
  return index < kMaxStreams ? handles_[index] : nullptr;
}

}  // namespace device
}  // namespace mate
