#ifndef MATE_BINDING_JS_STACK_CAPTURE_H_
#define MATE_BINDING_JS_STACK_CAPTURE_H_

#include <napi.h>

#include <cstdint>

// The JS stack of something native code does on a JS thread inside a call
// from JS (an addon's malloc, cudaMalloc or kernel launch): the capture
// function the TS layer registered for that thread (the same capture, and
// so the same text, as a JS buffer's), run only when it is safe to call
// into JS, and only once per distinct stack (engine::StackKeys).
namespace mate {

// registerJsStackCapture(fn): fn() -> StackStore id of the current JS stack
// (0: none). For the calling thread; unregistered when its env ends.
void AddJsStackCaptureExports(Napi::Env env, Napi::Object exports);

// The interned JS stack of the current call from JS on this thread, or 0:
// another thread, nothing registered, no JS frames on the stack (a libuv
// callback), inside a garbage collection, or re-entered from the capture.
uint32_t JsStackHere();

}  // namespace mate

#endif  // MATE_BINDING_JS_STACK_CAPTURE_H_
