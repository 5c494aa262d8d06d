#ifndef MATE_BINDING_NATIVE_HEAP_BINDING_H_
#define MATE_BINDING_NATIVE_HEAP_BINDING_H_

#include <napi.h>

#include <string>
#include <vector>

#include "core/guarded_allocator.h"

namespace mate {

// Node-API surface of the native-heap guard: guardNativeModules(globs),
// nativeHeapRefresh(), nativeHeap().
void AddNativeHeapExports(Napi::Env env, Napi::Object exports);

// Events (JSON) of what the native heap found since the last call (bad
// frees, damage found at free, from any thread), for checkCanaries. Also
// the cheap "anything new loaded?" check.
void TakeNativeHeapEvents(const GuardedAllocator& a, std::vector<std::string>* out);

// The native heap's counters, added to stats().
void AddNativeHeapStats(Napi::Env env, Napi::Object stats, const AllocatorStats& s);

}  // namespace mate

#endif  // MATE_BINDING_NATIVE_HEAP_BINDING_H_
