// A small CUDA addon with planted bugs: a kernel that writes one float past
// the end of its buffer, one that touches one float before the start, and
// two streams to free memory across. It allocates with plain cudaMalloc /
// cudaMallocAsync: under mate-guard's device guard those calls are
// redirected with no code change. The explicit C ABI (mate_guard.h) is
// shown too: allocAbi/freeAbi and recordStream.
#include <cuda_runtime.h>
#include <mate_guard.h>
#include <napi.h>

#include <cstdint>
#include <string>

#include "kernels.h"

namespace {

Napi::Value Fail(Napi::Env env, const std::string& what, int code) {
  std::string text = code > 0 ? cudaGetErrorString(static_cast<cudaError_t>(code)) : mate_guard_last_error();
  Napi::Error::New(env, "CUDA error in " + what + ": " + text).ThrowAsJavaScriptException();
  return env.Undefined();
}

uint64_t U64(const Napi::Value& v) {
  bool lossless;
  return v.IsBigInt() ? v.As<Napi::BigInt>().Uint64Value(&lossless) : 0;
}

float* Ptr(const Napi::Value& v) { return reinterpret_cast<float*>(U64(v)); }
// An optional stream argument (a BigInt from createStream); absent: the default stream.
cudaStream_t Stream(const Napi::CallbackInfo& info, size_t i) {
  return info.Length() > i ? reinterpret_cast<cudaStream_t>(U64(info[i])) : nullptr;
}
long Num(const Napi::Value& v) { return static_cast<long>(v.As<Napi::Number>().Int64Value()); }
Napi::Value Big(Napi::Env env, const void* p) {
  return Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
}
Napi::Value Done(const Napi::CallbackInfo& info, const char* what, cudaError_t e) {
  return e == cudaSuccess ? info.Env().Undefined() : Fail(info.Env(), what, e);
}

Napi::Value DeviceCount(const Napi::CallbackInfo& info) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  return Napi::Number::New(info.Env(), n);
}

// guarded() -> true while mate-guard's device guard is on in this process.
Napi::Value Guarded(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), mate_guard_cuda_installed());
}

// alloc(floats, stream?) -> BigInt device pointer: cudaMalloc, or
// cudaMallocAsync on a stream.
Napi::Value Alloc(const Napi::CallbackInfo& info) {
  size_t bytes = static_cast<size_t>(Num(info[0])) * sizeof(float);
  void* p = nullptr;
  cudaStream_t s = Stream(info, 1);
  cudaError_t e = info.Length() > 1 ? cudaMallocAsync(&p, bytes, s) : cudaMalloc(&p, bytes);
  return e == cudaSuccess ? Big(info.Env(), p) : Fail(info.Env(), "alloc", e);
}

// free(ptr, stream?): cudaFree, or cudaFreeAsync on a stream.
Napi::Value Free(const Napi::CallbackInfo& info) {
  float* p = Ptr(info[0]);
  cudaError_t e = info.Length() > 1 ? cudaFreeAsync(p, Stream(info, 1)) : cudaFree(p);
  return Done(info, "free", e);
}

// allocAbi / freeAbi: the same through mate_guard.h, falling back to the
// runtime where the guard is not loaded.
Napi::Value AllocAbi(const Napi::CallbackInfo& info) {
  size_t bytes = static_cast<size_t>(Num(info[0])) * sizeof(float);
  void* p = nullptr;
  int r = mate_guard_cuda_alloc(&p, bytes, Stream(info, 1));
  if (r == MATE_GUARD_NOT_INSTALLED) r = cudaMalloc(&p, bytes);
  return r == 0 ? Big(info.Env(), p) : Fail(info.Env(), "allocAbi", r);
}

Napi::Value FreeAbi(const Napi::CallbackInfo& info) {
  float* p = Ptr(info[0]);
  int r = mate_guard_cuda_free(p, Stream(info, 1));
  if (r == MATE_GUARD_NOT_INSTALLED) r = cudaFree(p);
  return r == 0 ? info.Env().Undefined() : Fail(info.Env(), "freeAbi", r);
}

// recordStream(ptr, stream): `stream` uses the memory too (the record_stream rule).
Napi::Value RecordStream(const Napi::CallbackInfo& info) {
  int r = mate_guard_record_stream(Ptr(info[0]), Stream(info, 1));
  return r == 0 || r == MATE_GUARD_NOT_INSTALLED ? info.Env().Undefined() : Fail(info.Env(), "recordStream", r);
}

Napi::Value CreateStream(const Napi::CallbackInfo& info) {
  cudaStream_t s = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  return e == cudaSuccess ? Big(info.Env(), s) : Fail(info.Env(), "createStream", e);
}

// waitFor(waiter, waitee): waiter's later work waits for waitee's work so
// far (an event recorded on waitee, waited on by waiter).
Napi::Value WaitFor(const Napi::CallbackInfo& info) {
  cudaEvent_t ev = nullptr;
  cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(ev, Stream(info, 1));
  if (e == cudaSuccess) e = cudaStreamWaitEvent(Stream(info, 0), ev, 0);
  if (ev) cudaEventDestroy(ev);
  return Done(info, "waitFor", e);
}

Napi::Value Fill(const Napi::CallbackInfo& info) {
  return Done(info, "fill", LaunchFill(Ptr(info[0]), Num(info[1]), 1.0f, Stream(info, 2)));
}

Napi::Value FillInclusive(const Napi::CallbackInfo& info) {
  return Done(info, "fillInclusive", LaunchFillInclusive(Ptr(info[0]), Num(info[1]), 1.0f, Stream(info, 2)));
}

Napi::Value SmoothFromMinusOne(const Napi::CallbackInfo& info) {
  return Done(info, "smoothFromMinusOne", LaunchSmoothFromMinusOne(Ptr(info[0]), Num(info[1]), Stream(info, 2)));
}

// addInto(dst, src, floats, stream?)
Napi::Value AddInto(const Napi::CallbackInfo& info) {
  return Done(info, "addInto", LaunchAddInto(Ptr(info[0]), Ptr(info[1]), Num(info[2]), Stream(info, 3)));
}

// slowTouch(ptr, microseconds, stream?): a use that stays in flight a while.
Napi::Value SlowTouch(const Napi::CallbackInfo& info) {
  int khz = 1000000;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  long long cycles = static_cast<long long>(Num(info[1])) * khz / 1000;
  return Done(info, "slowTouch", LaunchSlowTouch(Ptr(info[0]), cycles, Stream(info, 2)));
}

// sum(ptr, floats) -> number; synchronizes.
Napi::Value Sum(const Napi::CallbackInfo& info) {
  float* out = nullptr;
  cudaError_t e = cudaMalloc(&out, sizeof(float));
  if (e == cudaSuccess) e = LaunchSum(Ptr(info[0]), Num(info[1]), out, nullptr);
  float host = 0;
  if (e == cudaSuccess) e = cudaMemcpy(&host, out, sizeof(float), cudaMemcpyDeviceToHost);
  if (out) cudaFree(out);
  return e == cudaSuccess ? Napi::Number::New(info.Env(), host) : Fail(info.Env(), "sum", e);
}

// sync(): where CUDA reports a kernel's fault.
Napi::Value Sync(const Napi::CallbackInfo& info) { return Done(info, "sync", cudaDeviceSynchronize()); }

// captureGraph(stream) -> the error a stream capture gets (null when it began).
Napi::Value CaptureGraph(const Napi::CallbackInfo& info) {
  cudaStream_t s = Stream(info, 0);
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (e != cudaSuccess)
    return Napi::String::New(info.Env(), mate_guard_cuda_installed() ? mate_guard_last_error() : cudaGetErrorString(e));
  cudaGraph_t g = nullptr;
  cudaStreamEndCapture(s, &g);
  if (g) cudaGraphDestroy(g);
  return info.Env().Null();
}

// ipcHandle(ptr) -> null when cudaIpcGetMemHandle gave a handle, else why not.
Napi::Value IpcHandle(const Napi::CallbackInfo& info) {
  cudaIpcMemHandle_t handle;
  cudaError_t e = cudaIpcGetMemHandle(&handle, Ptr(info[0]));
  if (e == cudaSuccess) return info.Env().Null();
  return Napi::String::New(info.Env(), mate_guard_cuda_installed() ? mate_guard_last_error() : cudaGetErrorString(e));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("deviceCount", Napi::Function::New(env, DeviceCount));
  exports.Set("guarded", Napi::Function::New(env, Guarded));
  exports.Set("alloc", Napi::Function::New(env, Alloc));
  exports.Set("free", Napi::Function::New(env, Free));
  exports.Set("allocAbi", Napi::Function::New(env, AllocAbi));
  exports.Set("freeAbi", Napi::Function::New(env, FreeAbi));
  exports.Set("recordStream", Napi::Function::New(env, RecordStream));
  exports.Set("createStream", Napi::Function::New(env, CreateStream));
  exports.Set("waitFor", Napi::Function::New(env, WaitFor));
  exports.Set("fill", Napi::Function::New(env, Fill));
  exports.Set("fillInclusive", Napi::Function::New(env, FillInclusive));
  exports.Set("smoothFromMinusOne", Napi::Function::New(env, SmoothFromMinusOne));
  exports.Set("addInto", Napi::Function::New(env, AddInto));
  exports.Set("slowTouch", Napi::Function::New(env, SlowTouch));
  exports.Set("sum", Napi::Function::New(env, Sum));
  exports.Set("sync", Napi::Function::New(env, Sync));
  exports.Set("captureGraph", Napi::Function::New(env, CaptureGraph));
  exports.Set("ipcHandle", Napi::Function::New(env, IpcHandle));
  return exports;
}

}  // namespace

NODE_API_MODULE(cuda_example, Init)
