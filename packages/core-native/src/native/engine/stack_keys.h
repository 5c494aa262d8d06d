#ifndef MATE_ENGINE_STACK_KEYS_H_
#define MATE_ENGINE_STACK_KEYS_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/frame_walker.h"

namespace mate {
namespace engine {

// Maps the JS stack of the current call to the id of its already-captured
// text, without building any string: the frame walker (or V8's own sampler,
// Isolate::GetStackSample, where the walker does not know the stack yet)
// gives raw frame addresses (code addresses; bytecode array + offset for
// interpreted frames), and each distinct sample is remembered once, per
// thread (per isolate), in a bounded table (4096 keys).
//
// A key never names another call site's stack:
// - the sample covers every frame the captured text can show (the caller
//   asks for its own frames + the text's frames);
// - a sample that reaches the bottom of the stack may be followed in the
//   text by async frames (the awaiting callers), which the sample cannot
//   see: such keys also hold the microtask clock, so they are only reused
//   within the same microtask, where the awaiting chain cannot change;
// - code and bytecode move or die only in a full GC: every mark-compact
//   starts a new epoch and keys of older epochs are never matched;
// - frames are compared in full, not by hash alone.
// What a key does not see: the receiver's type name and a renamed function
// (`at A.m` vs `at B.m` for the same code called from the same place), which
// come from the first allocation seen at that stack.
class StackKeys {
 public:
  static constexpr uint32_t kMaxFrames = 24;

  // The calling thread's keys; nullptr where V8's sampler is unavailable.
  static StackKeys* ForThisThread();
  // Frames per sample: the allocation path's own frames + the text's frames.
  static void SetFrameLimit(uint32_t frames);
  static uint32_t FrameLimit();
  // The isolate these keys are for (the thread's current one).
  Isolate* isolate() const { return static_cast<Isolate*>(isolate_); }

  // The stack id for the current JS stack, or 0 with `*token` set: capture
  // the text, then Bind(token, id). `*token` is -1 when the stack can't be
  // keyed (no JS frames).
  uint32_t Lookup(int32_t* token);
  void Bind(int32_t token, uint32_t stack_id);
  // Forgets every key (the stack formatter changed).
  void Reset() { epoch_++; }
  // Changes with every Reset and full GC: what was learnt under another
  // epoch is not to be used.
  uint32_t epoch() const { return epoch_; }

  // Stacks that reach their bottom in a microtask (a test body after an
  // `await`) miss once per microtask: the text may end in async frames,
  // which come from the microtask's awaiting chain, not from the frames.
  // After such a miss (token from the last Lookup), the microtask it
  // happened in; false for any other miss.
  bool AsyncMiss(int32_t token, uintptr_t* queue, uintptr_t* clock);
  // The text of the same frames without their async tail (an id bound by
  // BindSyncPart from an earlier capture), or 0: keyed by the frames alone,
  // compared in full, so a later microtask can reuse it with its own tail.
  uint32_t SyncPart(int32_t token);
  void BindSyncPart(int32_t token, uint32_t head_id);

  struct Counters {
    uint64_t hits, misses;
    uint64_t v8_samples;  // keys that needed V8's own sampler (not the walker)
    uint64_t composed;    // misses whose text was put together, not captured
    uint64_t same_call;   // hits that were the same native call's last stack (call_mark.h), not looked up
  };
  Counters counters() const { return {hits_, misses_, v8_samples_, composed_, same_call_}; }
  void NoteComposed() { composed_++; }
  void NoteSameCall() {
    hits_++;
    same_call_++;
  }

 private:
  StackKeys();
  static void OnFullGC(void* isolate, int gc_type, int flags, void* data);
  size_t Sample(uintptr_t* frames, size_t limit);  // V8's sampler
  // The raw frames of the current stack: the walker's when it knows the
  // stack, else V8's (and the walker learns from them).
  size_t Frames(uintptr_t* frames, size_t limit, bool* from_walker);

  struct Key {
    uint64_t hash;
    uint32_t epoch;
    uint32_t stack_id;  // 0 = empty
    uint32_t n;
    uint32_t seq;     // pending keys: the token's sequence number
    uintptr_t queue;  // pending keys with a clock: the microtask queue it counts
    uintptr_t frames[kMaxFrames + 1];
  };
  // The pending key of a token from the last Lookups, or nullptr (stale).
  Key* Pending(int32_t token);
  // The table's stack id for `key` (compared in full), or 0.
  uint32_t Find(const Key& key) const;
  void Store(const Key& key, uint32_t stack_id);
  // A key whose last word is a microtask clock (the stack reached its bottom).
  static bool EndsInClock(const Key& p);
  // The pending key's frames with the clock replaced by the sync-part tag.
  bool SyncKey(int32_t token, Key* out);
  static constexpr uint32_t kSlots = 4096;  // direct-mapped, per thread
  static constexpr uint32_t kPending = 8;

  void* isolate_ = nullptr;
  Isolate* (*get_current_)() = nullptr;  // v8::Isolate::GetCurrent
  uint32_t epoch_ = 1;
  Key* table_ = nullptr;
  Key pending_[kPending];
  uint32_t pending_seq_ = 0;  // 28 bits used
  uint64_t hits_ = 0, misses_ = 0, v8_samples_ = 0, composed_ = 0, same_call_ = 0;
  std::unique_ptr<FrameWalker> walker_;
};

}  // namespace engine
}  // namespace mate

#endif  // MATE_ENGINE_STACK_KEYS_H_
