// Node-API surface of the module map and native backtraces.
#include "binding/native_stack_binding.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "crash/backtrace.h"
#include "platform/linux/module_map.h"

namespace mate {

namespace {

Napi::Object FrameToJs(Napi::Env env, const NativeFrame& f) {
  char pc[32];
  snprintf(pc, sizeof(pc), "0x%lx", static_cast<unsigned long>(f.pc));
  Napi::Object o = Napi::Object::New(env);
  o.Set("pc", pc);
  o.Set("module", f.module ? Napi::Value(Napi::String::New(env, f.module)) : env.Null());
  o.Set("moduleIndex", f.module_index == kNoModule ? Napi::Value(env.Null()) : Napi::Number::New(env, f.module_index));
  o.Set("offset", Napi::Number::New(env, static_cast<double>(f.offset)));
  o.Set("returnAddress", Napi::Boolean::New(env, f.return_address));
  return o;
}

// refreshModuleMap(force = false) -> whether the map was rebuilt. Call it
// after loading an addon (and cheaply at test start): a report can only
// name modules the map knew when the fault happened.
Napi::Value Refresh(const Napi::CallbackInfo& info) {
  bool force = info.Length() > 0 && info[0].ToBoolean().Value();
  return Napi::Boolean::New(info.Env(), RefreshModuleMap(force));
}

// Test-only: the native frames of this call.
Napi::Value CaptureHere(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RefreshModuleMap();
  WarmUpBacktrace();
  NativeFrame frames[kMaxNativeFrames];
  size_t n = CaptureBacktraceHere(frames, kMaxNativeFrames);
  Napi::Array arr = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) arr.Set(i, FrameToJs(env, frames[i]));
  return arr;
}

// Test-only: addressOf(modulePath, symbol) -> the exported symbol's frame
// as the module map resolves it, or null.
Napi::Value AddressOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = info[0].As<Napi::String>().Utf8Value();
  std::string symbol = info[1].As<Napi::String>().Utf8Value();
  void* handle = dlopen(path.empty() ? nullptr : path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return env.Null();
  void* address = dlsym(handle, symbol.c_str());
  dlclose(handle);
  if (address == nullptr) return env.Null();
  NativeFrame f;
  ModuleRef m;
  LookupModule(reinterpret_cast<uintptr_t>(address), &m);
  f.pc = reinterpret_cast<uintptr_t>(address);
  f.offset = m.offset;
  f.module = m.path;
  f.module_index = m.index;
  return FrameToJs(env, f);
}

// Test-only: the module table, index order.
Napi::Value ModuleTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t n = ModuleCount();
  Napi::Array arr = Napi::Array::New(env, n);
  for (uint32_t i = 0; i < n; i++) arr.Set(i, Napi::String::New(env, ModulePath(i)));
  return arr;
}

}  // namespace

void AddNativeStackExports(Napi::Env env, Napi::Object exports) {
  exports.Set("refreshModuleMap", Napi::Function::New(env, Refresh));
  Napi::Object testing = Napi::Object::New(env);
  testing.Set("captureHere", Napi::Function::New(env, CaptureHere));
  testing.Set("addressOf", Napi::Function::New(env, AddressOf));
  testing.Set("moduleTable", Napi::Function::New(env, ModuleTable));
  exports.Set("nativeStackTesting", testing);
}

}  // namespace mate
