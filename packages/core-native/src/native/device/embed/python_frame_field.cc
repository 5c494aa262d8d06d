#include "device/embed/python_frame_field.h"

#include <pthread.h>

#include <cstdint>
#include <cstring>

#include "platform/thread_stack.h"

namespace mate {
namespace device {

namespace {

// Where the field may be: within the first 256 bytes of the thread state
// (every CPython 3.9-3.14 keeps it there; the struct is larger, so the
// scan reads inside it), directly or through a pointer to a struct on the
// thread's C stack whose first or second word is the frame (3.11's and
// 3.12's _PyCFrame).
constexpr uintptr_t kScanBytes = 256;

struct Place {
  int16_t offset = -1;  // in the thread state
  int16_t via = -1;     // -1: the field itself; else the offset in the struct it points to
  bool operator==(const Place& o) const { return offset == o.offset && via == o.via; }
};

// 0 still learning; kGaveUp; else Encode(the place): published once, read lock-free.
constexpr uint32_t kGaveUp = ~0u;
uint32_t g_place = 0;
// The first capture's finding, waiting for a second (another frame) to agree.
// The target is also read outside the lock: a capture from the same frame
// (a flat script's loop) learns nothing new and takes no lock.
Place g_candidate;
const void* g_candidate_target = nullptr;
int g_tries = 0;  // gives up after a few disagreements
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

uint32_t Encode(const Place& p) { return 1 + static_cast<uint32_t>(p.offset) * 64 + static_cast<uint32_t>(p.via + 1); }
Place Decode(uint32_t e) { return Place{static_cast<int16_t>((e - 1) / 64), static_cast<int16_t>((e - 1) % 64 - 1)}; }

// The one place in `tstate` that holds `target`; none where there are none or several.
bool FindPlace(const void* tstate, const void* target, Place* out) {
  uintptr_t lo, hi;
  if (!platform::CurrentThreadStack(&lo, &hi)) return false;
  // The interpreter's C frames are older than this one: above it, where the stack is mapped.
  lo = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const char* ts = static_cast<const char*>(tstate);
  int found = 0;
  for (uintptr_t off = 0; off < kScanBytes; off += sizeof(void*)) {
    const void* w;
    memcpy(&w, ts + off, sizeof(w));
    if (w == target) {
      *out = Place{static_cast<int16_t>(off), -1};
      found++;
      continue;
    }
    uintptr_t p = reinterpret_cast<uintptr_t>(w);
    if (p < lo || p + 2 * sizeof(void*) > hi || p % sizeof(void*) != 0) continue;  // read only this thread's stack
    for (int via = 0; via < 2; via++) {
      const void* v;
      memcpy(&v, reinterpret_cast<const char*>(p) + via * sizeof(void*), sizeof(v));
      if (v == target) {
        *out = Place{static_cast<int16_t>(off), static_cast<int16_t>(via * sizeof(void*))};
        found++;
      }
    }
  }
  return found == 1;
}

}  // namespace

bool FrameFieldSettled() { return __atomic_load_n(&g_place, __ATOMIC_ACQUIRE) != 0; }

void LearnFrameField(const void* tstate, const void* frame, bool interpreter_frames) {
  if (FrameFieldSettled() || tstate == nullptr || frame == nullptr) return;
  // 3.11+: PyFrameObject is {PyObject_HEAD; f_back; f_frame; ...}: f_frame after two words of header and one pointer.
  const void* target = frame;
  if (interpreter_frames) memcpy(&target, static_cast<const char*>(frame) + 3 * sizeof(void*), sizeof(target));
  if (target == nullptr || target == __atomic_load_n(&g_candidate_target, __ATOMIC_RELAXED)) return;
  // Learning is a chance taken, never waited for: a capture on another
  // thread (or a lock a fork left held in the child) just skips it.
  if (pthread_mutex_trylock(&g_mu) != 0) return;
  Place p;
  if (!FrameFieldSettled() && target != g_candidate_target) {
    if (!FindPlace(tstate, target, &p)) {
      g_tries++;
    } else if (g_candidate.offset >= 0 && p == g_candidate) {
      __atomic_store_n(&g_place, Encode(p), __ATOMIC_RELEASE);
    } else {
      if (g_candidate.offset >= 0) g_tries++;  // two captures disagreed
      g_candidate = p;
      __atomic_store_n(&g_candidate_target, target, __ATOMIC_RELAXED);
    }
    if (g_tries >= 8 && !FrameFieldSettled()) __atomic_store_n(&g_place, kGaveUp, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_mu);
}

ThreadFrames FramesOf(const void* tstate, const void** innermost) {
  uint32_t e = __atomic_load_n(&g_place, __ATOMIC_ACQUIRE);
  if (e == 0 || e == kGaveUp || tstate == nullptr) return ThreadFrames::kUnknown;
  Place p = Decode(e);
  const void* w;
  memcpy(&w, static_cast<const char*>(tstate) + p.offset, sizeof(w));
  if (p.via >= 0) {
    // 3.11/3.12: the thread's current _PyCFrame, in its thread state (the
    // root one) or on its C stack; never null.
    if (w == nullptr) return ThreadFrames::kUnknown;
    memcpy(&w, static_cast<const char*>(w) + p.via, sizeof(w));
  }
  if (w == nullptr) return ThreadFrames::kNone;
  if (innermost != nullptr) *innermost = w;
  return ThreadFrames::kSome;
}

}  // namespace device
}  // namespace mate
