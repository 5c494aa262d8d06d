#ifndef MATE_ENGINE_FRAME_WALKER_H_
#define MATE_ENGINE_FRAME_WALKER_H_

#include <cstddef>
#include <cstdint>

#include "engine/v8_symbols.h"

namespace mate {
namespace engine {

// Gives what V8's sampler (Isolate::GetStackSample) gives for the JS frames
// of the running API call (a code address per frame, bytecode
// array + offset for interpreted frames) in a small fraction of its time:
// V8's sampler looks each return address up in its builtins table, twice,
// about 0.2 us a frame. This walker follows the frame pointers from the
// isolate's c_entry_fp and reads V8's fixed frame slots (x86-64 layout).
//
// Nothing it assumes is trusted until checked: a return address inside V8's
// builtins or a typed frame marker it has not met before makes it answer
// kUnknown; the caller then asks V8's sampler and hands the result to Learn,
// which classifies what was unknown by matching V8's answer and then checks
// that a fresh walk reproduces V8's sample exactly. The caller also compares
// every walk that becomes a new key with V8's sample. Any disagreement
// switches the walker off for the thread (keys then come from V8's sampler).
class FrameWalker {
 public:
  static constexpr int kUnknown = -1;      // something new: ask V8, then Learn
  static constexpr int kUnsupported = -2;  // odd stack: ask V8
  // Stands for the native function between two JS activations (JS -> native
  // -> JS), where V8's sampler gives the native callback's address: stack
  // texts never show it, the JS frames on both sides make the key.
  static constexpr uintptr_t kNativeCall = 1;

  // Whether a walk matches V8's sample of the same stack.
  static bool SameAsV8(const uintptr_t* walk, size_t walk_n, const uintptr_t* v8, size_t v8_n);

  explicit FrameWalker(Isolate* isolate);
  bool usable() const { return usable_; }
  void Disable() { usable_ = false; }

  int Walk(uintptr_t* frames, size_t limit) const;
  // `v8_frames`: V8's sample of the same stack, taken just now.
  void Learn(const uintptr_t* v8_frames, size_t n, size_t limit);

 private:
  enum Kind : uint8_t { kNew = 0, kInterpreted, kCode, kSkip, kEmitPc };
  struct PcKind {
    uintptr_t pc;
    Kind kind;
  };
  static constexpr size_t kPcSlots = 2048;
  static constexpr size_t kMarkers = 64;

  // A frame pointer whose slots we read (fp - 64 .. fp + 16) lies inside
  // this thread's stack, above the walker's own frame.
  bool InStack(uintptr_t fp, uintptr_t low) const { return fp >= low + 64 && fp + 16 <= stack_high_ && (fp & 7) == 0; }
  bool InBuiltins(uintptr_t pc) const { return pc - builtins_start_ < builtins_size_; }
  Kind PcKindOf(uintptr_t pc) const;
  bool SetPcKind(uintptr_t pc, Kind kind);
  // One walk; with `learn`, unknown things are classified against `v8`.
  int WalkImpl(uintptr_t* frames, size_t limit, const uintptr_t* v8, size_t v8_n, bool learn);

  bool usable_ = false;
  const uintptr_t* c_entry_fp_ = nullptr;
  uintptr_t builtins_start_ = 0;
  size_t builtins_size_ = 0;
  uintptr_t stack_high_ = 0;
  Kind markers_[kMarkers] = {};
  PcKind pcs_[kPcSlots] = {};
  size_t pcs_used_ = 0;
};

}  // namespace engine
}  // namespace mate

#endif  // MATE_ENGINE_FRAME_WALKER_H_
