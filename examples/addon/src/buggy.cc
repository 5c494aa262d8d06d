// A small addon with planted memory bugs, each the kind mate-guard catches; `sum` is correct.
#include <napi.h>

#include <cstdint>
#include <cstring>

#include "borders.h"
#include "deaths.h"
#include "native_heap.h"

namespace {

uint8_t* Data(const Napi::Value& v, size_t* len) {
  if (v.IsBuffer()) {
    auto b = v.As<Napi::Buffer<uint8_t>>();
    *len = b.Length();
    return b.Data();
  }
  if (v.IsTypedArray()) {
    auto t = v.As<Napi::TypedArray>();
    *len = t.ByteLength();
    return static_cast<uint8_t*>(t.ArrayBuffer().Data()) + t.ByteOffset();
  }
  auto ab = v.As<Napi::ArrayBuffer>();
  *len = ab.ByteLength();
  return static_cast<uint8_t*>(ab.Data());
}

// Volatile so the compiler keeps every planted access. Macros, not helper
// functions, so the debug info puts each access on the buggy function's own
// line (an inlined helper would be the innermost frame of every report).
#define POKE(p, value) (*reinterpret_cast<volatile uint8_t*>(p) = static_cast<uint8_t>(value))
#define PEEK(p) (*reinterpret_cast<const volatile uint8_t*>(p))

// Bug: `<=` writes one byte past the end.
Napi::Value FillInclusive(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  for (size_t i = 0; i <= len; i++) POKE(p + i, 0x41);
  return info.Env().Undefined();
}

// Bug: walks backwards one byte too far.
Napi::Value ReverseFill(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  for (ptrdiff_t i = static_cast<ptrdiff_t>(len) - 1; i >= -1; i--) POKE(p + i, 0x42);
  return info.Env().Undefined();
}

// Writes `value` at any offset (negative too): the planted bugs' building block.
Napi::Value WriteAt(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  int64_t off = info[1].As<Napi::Number>().Int64Value();
  uint32_t value = info.Length() > 2 ? info[2].As<Napi::Number>().Uint32Value() : 0x43;
  POKE(p + off, value);
  return info.Env().Undefined();
}

Napi::Value ReadAt(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  int64_t off = info[1].As<Napi::Number>().Int64Value();
  return Napi::Number::New(info.Env(), PEEK(p + off));
}

// Bug: keeps a raw pointer without a reference; the buffer may be collected.
uint8_t* g_retained = nullptr;
Napi::Value Retain(const Napi::CallbackInfo& info) {
  size_t len;
  g_retained = Data(info[0], &len);
  return info.Env().Undefined();
}
Napi::Value TouchRetained(const Napi::CallbackInfo& info) {
  POKE(g_retained, 0x44);
  return info.Env().Undefined();
}

// Bug: hands Node-API a string length past the end of the buffer; node's
// UTF-8 decoder over-reads it, several runtime frames below this function.
Napi::Value ExtractStrings(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  napi_value s;
  napi_create_string_utf8(info.Env(), reinterpret_cast<const char*>(p), len + 4096, &s);
  return Napi::Value(info.Env(), s);
}

// Correct code: sums the bytes.
Napi::Value Sum(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  double s = 0;
  for (size_t i = 0; i < len; i++) s += p[i];
  return Napi::Number::New(info.Env(), s);
}

// A crash that is not about guarded memory: must behave as without mate-guard.
Napi::Value NullWrite(const Napi::CallbackInfo& info) {
  POKE(reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(info.Length() > 100 ? 1 : 0)), 1);
  return info.Env().Undefined();
}

// The off-by-one on a libuv pool thread.
class OverflowWorker : public Napi::AsyncWorker {
 public:
  OverflowWorker(Napi::Function cb, uint8_t* p, size_t len) : Napi::AsyncWorker(cb), p_(p), len_(len) {}
  void Execute() override {
    for (size_t i = 0; i <= len_; i++) POKE(p_ + i, 0x45);
  }

 private:
  uint8_t* p_;
  size_t len_;
};
Napi::Value FillInclusiveAsync(const Napi::CallbackInfo& info) {
  size_t len;
  uint8_t* p = Data(info[0], &len);
  (new OverflowWorker(info[1].As<Napi::Function>(), p, len))->Queue();
  return info.Env().Undefined();
}

// The off-by-one in a Node-API finalizer: cleanup of a buffer the addon
// kept, run after the holder object is collected.
struct KeptBuffer {
  napi_ref ref;
  uint8_t* p;
  size_t len;
};
void FinalizeKept(napi_env env, void* data, void* /*hint*/) {
  auto* kept = static_cast<KeptBuffer*>(data);
  for (size_t i = 0; i <= kept->len; i++) POKE(kept->p + i, 0x46);
  napi_delete_reference(env, kept->ref);
  delete kept;
}
Napi::Value FillInclusiveOnCollect(const Napi::CallbackInfo& info) {
  auto* kept = new KeptBuffer{nullptr, nullptr, 0};
  kept->p = Data(info[0], &kept->len);
  napi_create_reference(info.Env(), info[0], 1, &kept->ref);
  napi_value holder;
  napi_create_external(info.Env(), kept, FinalizeKept, nullptr, &holder);
  return Napi::Value(info.Env(), holder);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("fillInclusive", Napi::Function::New(env, FillInclusive));
  exports.Set("reverseFill", Napi::Function::New(env, ReverseFill));
  exports.Set("writeAt", Napi::Function::New(env, WriteAt));
  exports.Set("readAt", Napi::Function::New(env, ReadAt));
  exports.Set("retain", Napi::Function::New(env, Retain));
  exports.Set("touchRetained", Napi::Function::New(env, TouchRetained));
  exports.Set("extractStrings", Napi::Function::New(env, ExtractStrings));
  exports.Set("sum", Napi::Function::New(env, Sum));
  exports.Set("nullWrite", Napi::Function::New(env, NullWrite));
  exports.Set("fillInclusiveAsync", Napi::Function::New(env, FillInclusiveAsync));
  exports.Set("fillInclusiveOnCollect", Napi::Function::New(env, FillInclusiveOnCollect));
  InitNativeHeap(env, exports);
  InitBorders(env, exports);
  InitDeaths(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(buggy_addon, Init)
