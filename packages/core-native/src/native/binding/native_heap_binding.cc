// Node-API surface of the native-heap guard.
#include "binding/native_heap_binding.h"

#include "binding/counters.h"
#include "binding/event_json.h"
#include "binding/js_stack_capture.h"
#include "crash/describe.h"
#include "crash/signal_handler.h"
#include "native_heap/foreign_quarantine.h"
#include "native_heap/heap_ops.h"
#include "native_heap/native_heap.h"
#include "native_heap/site_sampler.h"

namespace mate {

namespace {

Napi::Array Strings(Napi::Env env, const std::vector<std::string>& v) {
  Napi::Array arr = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); i++) arr.Set(i, v[i]);
  return arr;
}

Napi::Value Throw(Napi::Env env, const std::string& msg) {
  Napi::Error::New(env, msg).ThrowAsJavaScriptException();
  return env.Undefined();
}

// guardNativeModules(globs): redirects the allocator imports of matching
// modules, loaded now and later (the executable's dlopen is watched;
// nativeHeapRefresh checks again).
Napi::Value GuardNativeModules(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = GuardedAllocator::Instance();
  if (a == nullptr) return Throw(env, "mate-guard: the guard allocator is not installed");
  if (info.Length() < 1 || !info[0].IsArray()) return Throw(env, "guardNativeModules(globs) needs an array of strings");
  native_heap::StartOptions options;
  Napi::Array globs = info[0].As<Napi::Array>();
  for (uint32_t i = 0; i < globs.Length(); i++) {
    Napi::Value g = globs.Get(i);
    if (!g.IsString()) return Throw(env, "guardNativeModules(globs) needs an array of strings");
    options.globs.push_back(g.As<Napi::String>().Utf8Value());
  }
  options.sample_rate = a->options().native_sample_rate;
  options.site_first = a->options().native_site_first;
  options.log = a->options().log_allocations;
  options.on_new_thread = EnsureAltStack;
  options.js_stack = JsStackHere;
  std::string error;
  if (!native_heap::Start(a, options, &error)) return Throw(env, "mate-guard: " + error);
  return env.Undefined();
}

Napi::Value NativeHeapRefresh(const Napi::CallbackInfo& info) {
  native_heap::Refresh();
  return info.Env().Undefined();
}

Napi::String Hex(Napi::Env env, uintptr_t v) {
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(v));
  return Napi::String::New(env, buf);
}

// [{ address, symbol, redirected, owner: 'mate-guard' | 'program', since: 'install' | 'later' | null,
//    firstHeld, held }]: the module's variables initialised to an allocator function.
Napi::Array Variables(Napi::Env env, const std::vector<platform::RedirectedVariable>& vars) {
  Napi::Array arr = Napi::Array::New(env, vars.size());
  for (size_t i = 0; i < vars.size(); i++) {
    const platform::RedirectedVariable& v = vars[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("address", Hex(env, v.slot));
    o.Set("symbol", v.symbol);
    o.Set("redirected", Napi::Boolean::New(env, v.redirected));
    bool owned = v.owned_at_install || v.owned_later;
    o.Set("owner", owned ? "program" : "mate-guard");
    o.Set("since", owned ? Napi::Value(Napi::String::New(env, v.owned_at_install ? "install" : "later")) : env.Null());
    o.Set("firstHeld", Hex(env, reinterpret_cast<uintptr_t>(v.first_held)));
    o.Set("held", Hex(env, reinterpret_cast<uintptr_t>(v.held)));
    arr.Set(i, o);
  }
  return arr;
}

// nativeHeap() -> { globs, unmatched, modules: [{ path, slots, symbols, own, error, variables, allocationCalls,
// rebound, memoryImports }] }
Napi::Value NativeHeap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("globs", Strings(env, native_heap::Globs()));
  o.Set("unmatched", Strings(env, native_heap::UnmatchedGlobs()));
  std::vector<native_heap::PatchedModule> mods = native_heap::Modules();
  Napi::Array arr = Napi::Array::New(env, mods.size());
  for (size_t i = 0; i < mods.size(); i++) {
    Napi::Object m = Napi::Object::New(env);
    m.Set("path", mods[i].path);
    m.Set("slots", Napi::Number::New(env, mods[i].slots));
    m.Set("symbols", Strings(env, mods[i].symbols));
    m.Set("own", Strings(env, mods[i].own));
    m.Set("error", mods[i].error.empty() ? env.Null() : Napi::Value(Napi::String::New(env, mods[i].error)));
    m.Set("variables", Variables(env, mods[i].variables));
    m.Set("allocationCalls", Napi::Boolean::New(env, native_heap::MadeAllocationCalls(mods[i].base)));
    m.Set("rebound", Strings(env, mods[i].rebound));
    m.Set("memoryImports", Strings(env, mods[i].noted_imports));
    arr.Set(i, m);
  }
  o.Set("modules", arr);
  return o;
}

}  // namespace

void TakeNativeHeapEvents(const GuardedAllocator& a, std::vector<std::string>* out) {
  if (!native_heap::Active()) return;
  native_heap::Refresh();
  for (const native_heap::Finding& f : native_heap::TakeFindings()) out->push_back(EventJson(DescribeFinding(a, f)));
}

void AddNativeHeapStats(Napi::Env env, Napi::Object o, const AllocatorStats& s) {
  auto num = [&](uint64_t v) { return CountToJs(env, v); };
  native_heap::Counters nc = native_heap::GetCounters();
  o.Set("nativeAllocations", num(s.native_allocations));
  o.Set("nativeUnguarded", num(nc.unguarded));
  o.Set("nativeForeignFrees", num(nc.foreign_frees));
  o.Set("nativeBadFrees", num(nc.bad_frees));
  o.Set("nativeRoutedFrees", num(nc.routed_frees));
  // The foreign quarantine (frees of memory the guard did not allocate).
  native_heap::ForeignCounters fc = native_heap::GetForeignCounters();
  o.Set("nativeForeignHeld", num(fc.held));
  o.Set("nativeForeignReleasedAtOnce", num(fc.released_at_once));
  o.Set("nativeForeignWritten", num(fc.written));
  o.Set("nativeKeptMarkerCloses", num(s.kept_marker_closes));
  o.Set("nativeKeptMprotectCloses", num(s.kept_mprotect_closes));
  Napi::Object by = Napi::Object::New(env);
  by.Set("sampledOut", num(nc.sampled_out));
  by.Set("reentrant", num(nc.reentrant));
  by.Set("noSlot", num(nc.no_slot));
  by.Set("libcBlocks", num(nc.libc_blocks));
  o.Set("nativeUnguardedBy", by);
  // Site-aware sampling: present only while it is on (sampling, K > 0).
  if (uint32_t first = native_heap::SiteFirst()) {
    native_heap::SiteCoverage sc = native_heap::GetSiteCoverage();
    Napi::Object sites = Napi::Object::New(env);
    sites.Set("first", num(first));
    sites.Set("seen", num(sc.sites));
    sites.Set("reachedFirst", num(sc.reached_first));
    sites.Set("missed", num(sc.missed));
    sites.Set("forced", num(sc.forced));
    sites.Set("untrackedCalls", num(sc.untracked_calls));
    sites.Set("capacity", num(sc.capacity));
    o.Set("nativeSites", sites);
  }
}

void AddNativeHeapExports(Napi::Env env, Napi::Object exports) {
  exports.Set("guardNativeModules", Napi::Function::New(env, GuardNativeModules));
  exports.Set("nativeHeapRefresh", Napi::Function::New(env, NativeHeapRefresh));
  exports.Set("nativeHeap", Napi::Function::New(env, NativeHeap));
}

}  // namespace mate
