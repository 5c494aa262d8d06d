#ifndef MATE_ENGINE_CALL_MARK_H_
#define MATE_ENGINE_CALL_MARK_H_

#include <cstdint>

#include "engine/v8_symbols.h"

namespace mate {
namespace engine {

// Tells, with a few loads and no call into V8, whether the native call from
// JS that is running now is the one a mark was left in, so that what was
// learnt about that call's JS stack (its stack id) is reused for the next
// native allocation it makes instead of being looked up again.
//
// The mark is a handle to a number object made for it (V8 allocates a fresh
// heap number for a non-integer value; nothing else ever holds it), created
// in the call's innermost HandleScope. The mark still holds when:
// - the isolate is the same, and no collection started since (objects move
//   only in a collection: without one the number's address is its own);
// - the isolate's c_entry_fp is the same: no deeper call from JS (JS called
//   back from the native code, calling native code again) is running, whose
//   exit frame would lie lower on the stack;
// - the handle is still live and still holds the number: the HandleScope
//   block is the same (its limit) and the handle lies below the scope's next
//   free slot. A handle dies when its scope closes, and every scope of the
//   marked call closes when the call returns to JS; a slot below `next` was
//   written by the latest handle made there, and a handle to the number can
//   only be ours.
// So a mark that holds means: the same call, not yet returned, and nothing
// running above it. JS called back from that call and returned in between
// changes neither its JS frames nor the microtask it runs in (a microtask
// finishes only after its JS frames return).
//
// Plain data (thread_local without a destructor); one per thread.
struct CallMark {
  Isolate* isolate;
  const uintptr_t* c_entry_fp_at;  // the isolate's c_entry_fp
  uintptr_t* const* next_at;       // the isolate's HandleScope data: next free slot
  uintptr_t* const* limit_at;      //   and the end of the current block
  uintptr_t c_entry_fp;
  const uintptr_t* slot;  // the mark's handle
  uintptr_t value;        // what it held: the number's tagged address
  const uintptr_t* limit;
  uint64_t gc_count;

  // Leaves a mark in the running call; false (and no mark) where V8's
  // entry points are missing or the handle is not where the layout above
  // says it must be.
  bool Set(Isolate* isolate);
  // `gc_count`: GCCount() now.
  bool Holds(Isolate* isolate, uint64_t gc_count) const;
  void Clear() { slot = nullptr; }
};

}  // namespace engine
}  // namespace mate

#endif  // MATE_ENGINE_CALL_MARK_H_
