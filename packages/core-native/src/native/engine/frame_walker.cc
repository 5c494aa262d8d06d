#include "engine/frame_walker.h"

#include <pthread.h>

namespace mate {
namespace engine {

namespace {
// V8's frame layout on x86-64 (frame-constants-x64.h, frame-constants.h).
constexpr intptr_t kCallerFP = 0;
constexpr intptr_t kCallerPC = 8;
constexpr intptr_t kContextOrMarker = -8;  // a typed frame's marker is a small even number
constexpr intptr_t kBytecodeArray = -32;   // interpreted frames
constexpr intptr_t kBytecodeOffset = -40;  // a Smi
// JSEntry frames: the c_entry_fp saved on entry (0: no JS further down).
constexpr intptr_t kEntryNextExitFP = -64;
// Frame type markers (StackFrame::TypeToMarker) of JSEntry / JSConstructEntry.
constexpr uintptr_t kEntryMarker = 2, kConstructEntryMarker = 4;
constexpr int kMaxSteps = 256;

uintptr_t Slot(uintptr_t fp, intptr_t offset) { return *reinterpret_cast<const uintptr_t*>(fp + offset); }

// V8 (TickSample) gives bytecode array + offset when the slots hold a heap
// object and a Smi (upper 32 bits on x86-64 without pointer compression).
bool InterpretedValue(uintptr_t fp, uintptr_t* out) {
  uintptr_t array = Slot(fp, kBytecodeArray), offset = Slot(fp, kBytecodeOffset);
  if ((array & 3) != 1 || (offset & 1) != 0) return false;
  *out = array + static_cast<uintptr_t>(static_cast<intptr_t>(offset) >> 32);
  return true;
}

uintptr_t ThreadStackHigh() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* addr = nullptr;
  size_t size = 0;
  int rc = pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  return rc == 0 ? reinterpret_cast<uintptr_t>(addr) + size : 0;
}
}  // namespace

FrameWalker::FrameWalker(Isolate* isolate) {
#if defined(__x86_64__)
  const V8Api& v8 = V8();
  if (!v8.isolate_address_from_id || !v8.embedded_code_range) return;
  c_entry_fp_ = v8.isolate_address_from_id(isolate, kCEntryFPAddressId);
  const void* start = nullptr;
  size_t length = 0;
  v8.embedded_code_range(isolate, &start, &length);
  builtins_start_ = reinterpret_cast<uintptr_t>(start);
  builtins_size_ = length;
  stack_high_ = ThreadStackHigh();
  usable_ = c_entry_fp_ != nullptr && builtins_size_ != 0 && stack_high_ != 0;
#else
  (void)isolate;
#endif
}

FrameWalker::Kind FrameWalker::PcKindOf(uintptr_t pc) const {
  for (size_t i = (pc * 0x9E3779B97F4A7C15ull) >> 53, n = 0; n < kPcSlots; i = (i + 1) & (kPcSlots - 1), n++) {
    if (pcs_[i].pc == pc) return pcs_[i].kind;
    if (pcs_[i].pc == 0) return kNew;
  }
  return kNew;
}

bool FrameWalker::SetPcKind(uintptr_t pc, Kind kind) {
  if (pcs_used_ + 1 >= kPcSlots / 2) return false;  // full: stays unknown (slow path)
  for (size_t i = (pc * 0x9E3779B97F4A7C15ull) >> 53;; i = (i + 1) & (kPcSlots - 1)) {
    if (pcs_[i].pc == pc) return pcs_[i].kind == kind;
    if (pcs_[i].pc == 0) {
      pcs_[i] = {pc, kind};
      pcs_used_++;
      return true;
    }
  }
}

int FrameWalker::Walk(uintptr_t* frames, size_t limit) const {
  return const_cast<FrameWalker*>(this)->WalkImpl(frames, limit, nullptr, 0, false);
}

int FrameWalker::WalkImpl(uintptr_t* frames, size_t limit, const uintptr_t* v8, size_t v8_n, bool learn) {
  if (!usable_) return kUnsupported;
  uintptr_t low = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  uintptr_t exit_fp = *c_entry_fp_;
  if (!InStack(exit_fp, low)) return kUnsupported;
  uintptr_t pc = Slot(exit_fp, kCallerPC);
  uintptr_t fp = Slot(exit_fp, kCallerFP);
  size_t n = 0;
  for (int step = 0; step < kMaxSteps && n < limit; step++) {
    if (!InStack(fp, low)) return kUnsupported;
    uintptr_t marker = Slot(fp, kContextOrMarker);
    Kind kind;
    uintptr_t value = pc;
    if ((marker & 1) == 0) {  // a typed frame (stub, builtin, entry...)
      if (marker == kEntryMarker || marker == kConstructEntryMarker) {
        // The bottom of the stack, or native code that called JS again: go
        // on below its exit frame, as V8's sampler does.
        uintptr_t outer_exit = Slot(fp, kEntryNextExitFP);
        if (outer_exit == 0) return static_cast<int>(n);
        if (!InStack(outer_exit, fp)) return kUnsupported;
        frames[n++] = kNativeCall;
        pc = Slot(outer_exit, kCallerPC);
        fp = Slot(outer_exit, kCallerFP);
        continue;
      }
      if (marker >= 2 * kMarkers) return kUnsupported;
      Kind& known = markers_[marker >> 1];
      kind = known;
      if (kind == kNew) {
        if (!learn) return kUnknown;
        kind = n < v8_n && v8[n] == pc ? kEmitPc : kSkip;
        known = kind;
      }
    } else if (InBuiltins(pc)) {  // interpreted, or a builtin with JS linkage
      kind = PcKindOf(pc);
      uintptr_t interpreted = 0;
      bool has_interpreted = InterpretedValue(fp, &interpreted);
      if (kind == kNew) {
        if (!learn) return kUnknown;
        if (n < v8_n && has_interpreted && v8[n] == interpreted) kind = kInterpreted;
        else if (n < v8_n && v8[n] == pc) kind = kEmitPc;
        else kind = kSkip;
        if (!SetPcKind(pc, kind)) return kUnsupported;
      }
      if (kind == kInterpreted) value = has_interpreted ? interpreted : pc;
    } else {
      kind = kCode;  // baseline or optimized code on V8's heap
    }
    if (kind != kSkip) frames[n++] = value;
    pc = Slot(fp, kCallerPC);
    fp = Slot(fp, kCallerFP);
  }
  return n == limit ? static_cast<int>(n) : kUnsupported;
}

bool FrameWalker::SameAsV8(const uintptr_t* walk, size_t walk_n, const uintptr_t* v8, size_t v8_n) {
  if (walk_n != v8_n) return false;
  for (size_t i = 0; i < walk_n; i++)
    if (walk[i] != v8[i] && walk[i] != kNativeCall) return false;
  return true;
}

void FrameWalker::Learn(const uintptr_t* v8_frames, size_t n, size_t limit) {
  uintptr_t scratch[64];
  if (limit > 64) limit = 64;
  if (WalkImpl(scratch, limit, v8_frames, n, true) < 0) return;  // odd: nothing learned
  int again = Walk(scratch, limit);
  if (again < 0) return;
  if (!SameAsV8(scratch, static_cast<size_t>(again), v8_frames, n)) usable_ = false;
}

}  // namespace engine
}  // namespace mate
