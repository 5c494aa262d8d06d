#include "engine/gc_watch.h"

#include "engine/v8_symbols.h"

namespace mate {
namespace engine {

namespace {
// Plain data: no destructor runs for it on any thread.
struct GCState {
  bool watching;
  int depth;       // prologues minus epilogues: collections nest (weak callbacks of a full GC)
  uint64_t count;  // prologues
};
thread_local GCState t_gc;

// GC callbacks run on the isolate's own thread.
void Prologue(Isolate*, int, int, void*) {
  t_gc.depth++;
  t_gc.count++;
}
void Epilogue(Isolate*, int, int, void*) { t_gc.depth--; }
}  // namespace

bool WatchGC() {
  if (t_gc.watching) return true;
  const V8Api& v8 = V8();
  if (!v8.get_current || !v8.add_gc_prologue_callback || !v8.add_gc_epilogue_callback) return false;
  Isolate* isolate = v8.get_current();
  if (isolate == nullptr) return false;
  v8.add_gc_prologue_callback(isolate, &Prologue, nullptr, kGCTypeAll);
  v8.add_gc_epilogue_callback(isolate, &Epilogue, nullptr, kGCTypeAll);
  t_gc.watching = true;
  return true;
}

bool InGC() { return !t_gc.watching || t_gc.depth > 0; }

uint64_t GCCount() { return t_gc.count; }

bool OutsideGC(uint64_t* count) {
  const GCState& g = t_gc;
  *count = g.count;
  return g.watching && g.depth == 0;
}

bool CollectNow() {
  const V8Api& v8 = V8();
  if (!v8.get_current || !v8.memory_pressure_notification) return false;
  Isolate* isolate = v8.get_current();
  if (isolate == nullptr) return false;
  v8.memory_pressure_notification(isolate, kMemoryPressureCritical);
  return true;
}

}  // namespace engine
}  // namespace mate
