#ifndef MATE_ENGINE_GC_WATCH_H_
#define MATE_ENGINE_GC_WATCH_H_

#include <cstdint>

namespace mate {
namespace engine {

// Whether the calling thread's isolate is inside a garbage collection (from
// its prologue to its epilogue, weak-callback processing included): native
// code that runs then (a finalizer that allocates) must not call into JS or
// create handles.
//
// Watch() starts counting on the calling thread's isolate (once per
// thread); false where V8's GC callbacks cannot be found, and then InGC()
// answers true, so a caller that needs the answer stays on the safe side.
bool WatchGC();
bool InGC();
// Collections of the calling thread's isolate started since WatchGC (any
// kind: objects move only in one).
uint64_t GCCount();
// InGC and GCCount in one look at the thread's state: false inside a
// collection (or unwatched), else true with the count.
bool OutsideGC(uint64_t* count);

// A full collection of the calling thread's isolate, now (V8's critical
// memory-pressure notification). Only from JS-thread code that may allocate
// JS objects (a Node-API call from JS), never inside a collection or a
// signal handler. False where the engine's entry point is missing.
bool CollectNow();

}  // namespace engine
}  // namespace mate

#endif  // MATE_ENGINE_GC_WATCH_H_
