#include "binding/js_stack_capture.h"

#include "engine/gc_watch.h"
#include "engine/stack_keys.h"

namespace mate {

namespace {

// Plain data: no destructor runs for it on any thread.
struct Registration {
  napi_env env;
  napi_ref capture;
  bool busy;  // the capture is running: allocations it causes get no stack
};
thread_local Registration t_reg;

void Unregister(void* /*arg*/) {
  if (t_reg.capture != nullptr) napi_delete_reference(t_reg.env, t_reg.capture);
  t_reg = Registration{};
}

// Calls the registered capture. Its exception (there should be none: the
// TS capture never throws) is cleared here, so it can never surface in the
// addon's call; a failing call (env shutting down, JS not allowed) gives 0.
uint32_t CallCapture(const Registration& r) {
  bool pending = false;
  if (napi_is_exception_pending(r.env, &pending) != napi_ok || pending) return 0;
  napi_handle_scope scope;
  if (napi_open_handle_scope(r.env, &scope) != napi_ok) return 0;
  uint32_t id = 0;
  napi_value fn, recv, result;
  if (napi_get_reference_value(r.env, r.capture, &fn) == napi_ok && fn != nullptr &&
      napi_get_undefined(r.env, &recv) == napi_ok &&
      napi_call_function(r.env, recv, fn, 0, nullptr, &result) == napi_ok) {
    if (napi_get_value_uint32(r.env, result, &id) != napi_ok) id = 0;
  } else {
    napi_value ignored;
    napi_get_and_clear_last_exception(r.env, &ignored);
  }
  napi_close_handle_scope(r.env, scope);
  return id;
}

Napi::Value RegisterJsStackCapture(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) {
    Napi::TypeError::New(env, "registerJsStackCapture(fn) needs a function").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Without the GC callbacks there is no telling when a call is unsafe:
  // then native allocations get no JS stack.
  if (!engine::WatchGC()) return Napi::Boolean::New(env, false);
  if (t_reg.capture != nullptr) {
    napi_delete_reference(t_reg.env, t_reg.capture);
  } else {
    napi_add_env_cleanup_hook(env, Unregister, nullptr);
  }
  t_reg.env = env;
  t_reg.busy = false;
  if (napi_create_reference(env, info[0], 1, &t_reg.capture) != napi_ok) t_reg.capture = nullptr;
  return Napi::Boolean::New(env, t_reg.capture != nullptr);
}

}  // namespace

uint32_t JsStackHere() {
  Registration& r = t_reg;
  if (r.capture == nullptr || r.busy || engine::InGC()) return 0;
  engine::StackKeys* keys = engine::StackKeys::ForThisThread();
  int32_t token = -1;
  if (keys != nullptr) {
    uint32_t known = keys->Lookup(&token);
    if (known != 0) return known;
    if (token < 0) return 0;  // no JS frames: not inside a call from JS
  }
  r.busy = true;
  uint32_t id = CallCapture(r);
  r.busy = false;
  if (keys != nullptr) keys->Bind(token, id);
  return id;
}

void AddJsStackCaptureExports(Napi::Env env, Napi::Object exports) {
  exports.Set("registerJsStackCapture", Napi::Function::New(env, RegisterJsStackCapture));
}

}  // namespace mate
