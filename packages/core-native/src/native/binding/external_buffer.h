#ifndef MATE_BINDING_EXTERNAL_BUFFER_H_
#define MATE_BINDING_EXTERNAL_BUFFER_H_

#include <node_api.h>

#include <cstddef>

namespace mate {

// Frees memory handed out by NewExternalArrayBuffer. Called once per buffer,
// from any thread (V8 may release backing stores on its GC threads).
using ReleaseFn = void (*)(void* data);

// An ArrayBuffer over [data, data + length) that calls `release(data)` when
// the engine frees it. Where V8's own backing-store deleters can be reached,
// the release happens during garbage collection (so a synchronous loop of
// dropped buffers does not keep them all); otherwise through a Node-API
// finalizer, one event-loop turn after the collection. Returns nullptr on
// failure (memory not released).
napi_value NewExternalArrayBuffer(napi_env env, void* data, size_t length, ReleaseFn release);

// True when buffers are released during GC (V8 deleters in use).
bool ReleasedDuringGC(napi_env env);

}  // namespace mate

#endif  // MATE_BINDING_EXTERNAL_BUFFER_H_
