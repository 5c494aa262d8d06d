#include "binding/js_stack_capture.h"

#include <cstring>
#include <string>

#include "core/stack_store.h"
#include "engine/call_mark.h"
#include "engine/gc_watch.h"
#include "engine/stack_keys.h"

namespace mate {

namespace {

// The stack id of the native call that is running, while its mark holds
// (engine/call_mark.h): a call that allocates again gets it back with a few
// loads, without its frames walked, its microtask asked for or its key
// looked up again. Whatever else the id depends on is checked too: the
// keys' epoch (a full GC, a new stack formatter), the frame limit and the
// registered capture. Plain data.
struct MarkedCall {
  engine::CallMark mark;
  uint32_t id;
  uint32_t epoch;
  uint32_t frame_limit;
  napi_ref capture;
  // A mark costs a handle and a heap number: after kFreeMarks marks in a
  // row that were never used (calls that allocate once), only every 16th
  // miss marks, until a mark is used again.
  bool used;
  uint8_t unused;  // marks in a row never used
  uint8_t skip;    // misses left before the next mark
};

// Plain data: no destructor runs for it on any thread.
struct Registration {
  napi_env env;
  napi_ref capture;
  bool busy;          // the capture is running: allocations it causes get no stack
  MarkedCall marked;  // here, not a thread_local of its own: one TLS lookup fewer per allocation
};
thread_local Registration t_reg;

// The async tail of the last text captured in a microtask (the frames of
// its awaiting chain, which every stack that reaches its bottom in that
// microtask ends with), for the other call sites of the same microtask.
// Plain data.
struct AsyncTail {
  uintptr_t queue, clock;  // the microtask
  uint32_t epoch;          // of the keys it was learnt under
  uint32_t id;             // StackStore id of the tail's lines
  uint32_t lines;          // complete: the chain ended before the limit
  uint32_t limit;          // frames a text shows
};
thread_local AsyncTail t_tail;

constexpr uint8_t kFreeMarks = 8;
constexpr uint8_t kMarkEvery = 16;

// After a lookup of the running call gave `id`: the call marked with it
// (or not, by the backoff above).
void MarkCall(engine::StackKeys* keys, Registration& r, uint32_t id) {
  MarkedCall& m = r.marked;
  if (m.mark.slot != nullptr && !m.used && m.unused < kFreeMarks) m.unused++;
  m.mark.Clear();
  if (m.skip > 0) {
    m.skip--;
    return;
  }
  if (m.unused >= kFreeMarks) m.skip = kMarkEvery - 1;
  if (!m.mark.Set(keys->isolate())) return;
  m.id = id;
  m.epoch = keys->epoch();
  m.frame_limit = engine::StackKeys::FrameLimit();
  m.capture = r.capture;
  m.used = false;
}

// What the capture answered: the text, and its parts when it ends in a
// complete async tail (see NativeCaptureResult in install/native.ts).
struct Captured {
  uint32_t id = 0, head = 0, tail = 0, head_lines = 0, tail_lines = 0, limit = 0;
};

uint32_t U32(napi_env env, napi_value array, uint32_t i) {
  napi_value v;
  uint32_t out = 0;
  if (napi_get_element(env, array, i, &v) != napi_ok || napi_get_value_uint32(env, v, &out) != napi_ok) return 0;
  return out;
}

void Unregister(void* /*arg*/) {
  if (t_reg.capture != nullptr) napi_delete_reference(t_reg.env, t_reg.capture);
  t_reg = Registration{};
}

// Calls the registered capture. Its exception (there should be none: the
// TS capture never throws) is cleared here, so it can never surface in the
// addon's call; a failing call (env shutting down, JS not allowed) gives 0.
Captured CallCapture(const Registration& r) {
  Captured c;
  bool pending = false;
  if (napi_is_exception_pending(r.env, &pending) != napi_ok || pending) return c;
  napi_handle_scope scope;
  if (napi_open_handle_scope(r.env, &scope) != napi_ok) return c;
  napi_value fn, recv, result;
  if (napi_get_reference_value(r.env, r.capture, &fn) == napi_ok && fn != nullptr &&
      napi_get_undefined(r.env, &recv) == napi_ok &&
      napi_call_function(r.env, recv, fn, 0, nullptr, &result) == napi_ok) {
    bool is_array = false;
    if (napi_is_array(r.env, result, &is_array) == napi_ok && is_array) {
      c.id = U32(r.env, result, 0);
      c.head = U32(r.env, result, 1);
      c.tail = U32(r.env, result, 2);
      c.head_lines = U32(r.env, result, 3);
      c.tail_lines = U32(r.env, result, 4);
      c.limit = U32(r.env, result, 5);
    } else if (napi_get_value_uint32(r.env, result, &c.id) != napi_ok) {
      c.id = 0;
    }
  } else {
    napi_value ignored;
    napi_get_and_clear_last_exception(r.env, &ignored);
  }
  napi_close_handle_scope(r.env, scope);
  return c;
}

// The text of a call site whose frames' own text (`head_id`) an earlier
// capture gave, in the microtask `tail` was captured in: its lines, then
// the tail's first lines up to the limit, as V8 would have shown them.
uint32_t Compose(uint32_t head_id, const AsyncTail& tail) {
  StackStore& store = StackStore::Get();
  const char* head = store.Lookup(head_id);
  const char* rest = store.Lookup(tail.id);
  if (head == nullptr || rest == nullptr) return 0;
  uint32_t head_lines = 1;
  for (const char* p = head; *p; p++) head_lines += *p == '\n';
  if (head_lines >= tail.limit) return 0;
  uint32_t want = tail.limit - head_lines < tail.lines ? tail.limit - head_lines : tail.lines;
  const char* end = rest;
  for (uint32_t k = 0; k < want; k++) {
    const char* nl = strchr(end, '\n');
    end = nl == nullptr ? end + strlen(end) : (k + 1 < want ? nl + 1 : nl);
  }
  std::string text(head);
  text += '\n';
  text.append(rest, static_cast<size_t>(end - rest));
  return store.Intern(text.data(), text.size());
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
  t_reg.marked = MarkedCall{};  // a new env may be a new isolate where the old one was
  if (napi_create_reference(env, info[0], 1, &t_reg.capture) != napi_ok) t_reg.capture = nullptr;
  return Napi::Boolean::New(env, t_reg.capture != nullptr);
}

// The stack id of the current call from JS, found in the keys or captured.
uint32_t Lookup(Registration& r, engine::StackKeys* keys) {
  int32_t token = -1;
  uintptr_t queue = 0, clock = 0;
  bool in_microtask = false;
  if (keys != nullptr) {
    uint32_t known = keys->Lookup(&token);
    if (known != 0) return known;
    if (token < 0) return 0;  // no JS frames: not inside a call from JS
    // A stack that reached its bottom misses in every new microtask: its
    // own text from an earlier capture and the async tail another call
    // site of this microtask was captured with make its text.
    in_microtask = keys->AsyncMiss(token, &queue, &clock);
    const AsyncTail& tail = t_tail;
    if (in_microtask && tail.id != 0 && tail.queue == queue && tail.clock == clock && tail.epoch == keys->epoch()) {
      uint32_t head = keys->SyncPart(token);
      uint32_t id = head != 0 ? Compose(head, tail) : 0;
      if (id != 0) {
        keys->NoteComposed();
        keys->Bind(token, id);
        return id;
      }
    }
  }
  r.busy = true;
  Captured c = CallCapture(r);
  r.busy = false;
  if (keys != nullptr) {
    if (in_microtask && c.head != 0 && c.tail != 0 && c.limit != 0 && c.head_lines + c.tail_lines < c.limit) {
      keys->BindSyncPart(token, c.head);
      t_tail = AsyncTail{queue, clock, keys->epoch(), c.tail, c.tail_lines, c.limit};
    }
    keys->Bind(token, c.id);
  }
  return c.id;
}

}  // namespace

uint32_t JsStackHere() {
  Registration& r = t_reg;
  uint64_t gcs = 0;
  if (r.capture == nullptr || r.busy || !engine::OutsideGC(&gcs)) return 0;
  engine::StackKeys* keys = engine::StackKeys::ForThisThread();
  if (keys != nullptr) {
    MarkedCall& m = r.marked;
    if (m.mark.Holds(keys->isolate(), gcs) && m.epoch == keys->epoch() && m.capture == r.capture &&
        m.frame_limit == engine::StackKeys::FrameLimit()) {
      if (!m.used) {
        m.used = true;
        m.unused = 0;
      }
      keys->NoteSameCall();
      return m.id;
    }
  }
  uint32_t id = Lookup(r, keys);
  if (keys != nullptr && id != 0) MarkCall(keys, r, id);
  return id;
}

void AddJsStackCaptureExports(Napi::Env env, Napi::Object exports) {
  exports.Set("registerJsStackCapture", Napi::Function::New(env, RegisterJsStackCapture));
}

}  // namespace mate
