// Node-API surface of the allocator. No C++ exceptions cross it: errors
// become JS exceptions.
#include <napi.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "binding/config_parse.h"
#include "core/guarded_allocator.h"
#include "core/stack_store.h"
#include "crash/fault_handler.h"
#include "crash/report_writer.h"
#include "native_heap/native_heap.h"

namespace mate {
namespace {

struct Pending {
  std::string kind, text, json;
};

std::mutex g_pending_mu;
std::vector<Pending> g_pending;  // violations found in finalizers, surfaced at the next check
uint64_t g_violations = 0;       // reported by this process (fault reports excluded: they end it)

Napi::Value Throw(Napi::Env env, const std::string& msg) {
  Napi::Error::New(env, msg).ThrowAsJavaScriptException();
  return env.Undefined();
}

GuardedAllocator* Need(Napi::Env env) {
  GuardedAllocator* a = GuardedAllocator::Instance();
  if (a == nullptr) Napi::Error::New(env, "mate-guard: the guard allocator is not installed").ThrowAsJavaScriptException();
  return a;
}

std::string TestName(uint32_t id) {
  const char* s = StackStore::Get().Lookup(id);
  return s ? s : "";
}

Pending RenderViolation(const Violation& v) {
  std::vector<char> text(64 * 1024), json(160 * 1024);
  EmitReport(v, text.data(), text.size(), json.data(), json.size(), false);
  return Pending{v.kind, text.data(), json.data()};
}

Pending Render(const GuardedAllocator& a, const CanaryViolation& c) { return RenderViolation(DescribeCanary(a, c)); }

// Native-heap findings (bad frees, damage found at free) from any thread,
// rendered here on the JS thread.
void TakeNativeFindings(const GuardedAllocator& a, std::vector<Pending>* out) {
  if (!native_heap::Active()) return;
  native_heap::Refresh();  // also the cheap "anything new loaded?" check at each test's start and end
  for (const native_heap::Finding& f : native_heap::TakeFindings()) {
    if (f.kind == native_heap::FindingKind::kCanary) {
      out->push_back(Render(a, f.canary));
      continue;
    }
    Violation v = DescribeBadFree(a, f.kind == native_heap::FindingKind::kDoubleFree,
                                  f.has_record ? &f.record : nullptr, f.address, f.frames, f.test);
    out->push_back(RenderViolation(v));
  }
}

Napi::Object ToJs(Napi::Env env, const Pending& p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("kind", p.kind);
  o.Set("text", p.text);
  o.Set("json", p.json);
  return o;
}

void FinalizeBuffer(napi_env /*env*/, void* data, void* /*hint*/) {
  GuardedAllocator* a = GuardedAllocator::Instance();
  FreeResult r = a->Free(data, FreedBy::kGarbageCollector, 0);
  if (r.status == FreeStatus::kNotGuarded) {
    free(data);  // an unguarded fallback
    return;
  }
  if (a->options().log_allocations && r.status == FreeStatus::kFreed)
    dprintf(2, "[mate-guard] free #%llu ptr=%p requested=%llu mode=%s backend=host test=\"%s\"\n",
            static_cast<unsigned long long>(r.record.alloc_id), data,
            static_cast<unsigned long long>(r.record.size), ModeName(r.record.mode),
            TestName(a->CurrentTest()).c_str());
  if (r.has_violation) {
    Pending p = Render(*a, r.violation);
    std::lock_guard<std::mutex> lock(g_pending_mu);
    g_pending.push_back(std::move(p));
  }
}

// configure(options, reportDir): creates the allocator once and installs
// the fault handler.
Napi::Value Configure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) return Throw(env, "configure(options) needs an object");
  Options options;
  std::string error;
  if (!ParseOptions(info[0].As<Napi::Object>(), &options, &error)) return Throw(env, "mate-guard: " + error);
  if (info.Length() > 1 && info[1].IsString()) SetReportDir(info[1].As<Napi::String>().Utf8Value().c_str());
  GuardedAllocator* a = GuardedAllocator::Create(options, &error);
  if (a == nullptr) return Throw(env, "mate-guard: " + error);
  if (!InstallFaultHandler()) return Throw(env, "mate-guard: could not install the SIGSEGV/SIGBUS handler");
  Napi::Object o = Napi::Object::New(env);
  o.Set("backend", a->backend() == Backend::kGuardInstall ? "madvise-guard" : "mprotect");
  o.Set("pageSize", Napi::Number::New(env, static_cast<double>(a->page_size())));
  return o;
}

// alloc(size, stackId?) -> ArrayBuffer over guarded memory (zero-filled).
Napi::Value Alloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  double want = info[0].As<Napi::Number>().DoubleValue();
  size_t size = static_cast<size_t>(want);
  uint32_t stack = 0;
  if (info.Length() > 1 && info[1].IsNumber()) stack = info[1].As<Napi::Number>().Uint32Value();  // from internString
  AllocResult r = a->Allocate(size, stack);
  void* ptr = r.ptr;
  if (ptr == nullptr) {
    ptr = calloc(size ? size : 1, 1);
    if (ptr == nullptr) return Throw(env, "mate-guard: out of memory allocating " + std::to_string(size) + " bytes");
    if (a->options().log_allocations)
      dprintf(2, "[mate-guard] alloc unguarded ptr=%p requested=%zu reason=\"%s\" test=\"%s\"\n", ptr, size,
              r.fallback_reason, TestName(a->CurrentTest()).c_str());
  } else if (a->options().log_allocations) {
    dprintf(2, "[mate-guard] alloc #%llu ptr=%p requested=%zu mapped=%zu mode=%s backend=host test=\"%s\"\n",
            static_cast<unsigned long long>(r.id), ptr, size, r.mapped,
            a->options().tail_mode ? "tail" : "head", TestName(a->CurrentTest()).c_str());
  }
  napi_value ab;
  napi_status st = napi_create_external_arraybuffer(env, ptr, size, FinalizeBuffer, nullptr, &ab);
  if (st != napi_ok) {
    FinalizeBuffer(env, ptr, nullptr);
    return Throw(env, "mate-guard: napi_create_external_arraybuffer failed");
  }
  return Napi::Value(env, ab);
}

Napi::Value SetCurrentTest(const Napi::CallbackInfo& info) {
  GuardedAllocator* a = Need(info.Env());
  if (a == nullptr) return info.Env().Undefined();
  uint32_t id = 0;
  if (info.Length() > 0 && info[0].IsString()) {
    std::string s = info[0].As<Napi::String>().Utf8Value();
    id = StackStore::Get().Intern(s.data(), s.size());
  }
  a->SetCurrentTest(id);
  return info.Env().Undefined();
}

// checkCanaries(all) -> violations found now, plus those found at free.
Napi::Value CheckCanaries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  bool all = info.Length() > 0 && info[0].ToBoolean().Value();
  std::vector<Pending> found;
  {
    std::lock_guard<std::mutex> lock(g_pending_mu);
    found.swap(g_pending);
  }
  TakeNativeFindings(*a, &found);
  for (const CanaryViolation& c : all ? a->CheckAll() : a->CheckRecent()) found.push_back(Render(*a, c));
  Napi::Array arr = Napi::Array::New(env, found.size());
  for (size_t i = 0; i < found.size(); i++) arr.Set(i, ToJs(env, found[i]));
  g_violations += found.size();
  return arr;
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  AllocatorStats s = a->Stats();
  auto num = [&](uint64_t v) { return Napi::Number::New(env, static_cast<double>(v)); };
  Napi::Object o = Napi::Object::New(env);
  o.Set("allocations", num(s.allocations));
  o.Set("frees", num(s.frees));
  o.Set("live", num(s.live));
  o.Set("peakLive", num(s.peak_live));
  o.Set("liveBytes", num(s.live_bytes));
  o.Set("fallbacks", num(s.fallbacks));
  o.Set("fallbackReason", s.last_fallback_reason ? Napi::Value(Napi::String::New(env, s.last_fallback_reason)) : env.Null());
  o.Set("quarantined", num(s.quarantined));
  o.Set("quarantinedBytes", num(s.quarantined_bytes));
  o.Set("reservedBytes", num(s.reserved_bytes));
  o.Set("maxLive", num(s.max_live));
  o.Set("violations", num(g_violations));
  o.Set("backend", s.backend == Backend::kGuardInstall ? "madvise-guard" : "mprotect");
  native_heap::Counters nc = native_heap::GetCounters();
  o.Set("nativeAllocations", num(s.native_allocations));
  o.Set("nativeUnguarded", num(nc.unguarded));
  o.Set("nativeForeignFrees", num(nc.foreign_frees));
  o.Set("nativeBadFrees", num(nc.bad_frees));
  return o;
}

Napi::Array Strings(Napi::Env env, const std::vector<std::string>& v) {
  Napi::Array arr = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); i++) arr.Set(i, v[i]);
  return arr;
}

// guardNativeModules(globs): redirects the allocator imports of matching
// modules, loaded now and later (the executable's dlopen is watched;
// nativeHeapRefresh checks again).
Napi::Value GuardNativeModules(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  if (info.Length() < 1 || !info[0].IsArray()) return Throw(env, "guardNativeModules(globs) needs an array of strings");
  native_heap::StartOptions options;
  Napi::Array globs = info[0].As<Napi::Array>();
  for (uint32_t i = 0; i < globs.Length(); i++) {
    Napi::Value g = globs.Get(i);
    if (!g.IsString()) return Throw(env, "guardNativeModules(globs) needs an array of strings");
    options.globs.push_back(g.As<Napi::String>().Utf8Value());
  }
  options.sample_rate = a->options().native_sample_rate;
  options.log = a->options().log_allocations;
  options.on_new_thread = EnsureAltStack;
  std::string error;
  if (!native_heap::Start(a, options, &error)) return Throw(env, "mate-guard: " + error);
  return env.Undefined();
}

Napi::Value NativeHeapRefresh(const Napi::CallbackInfo& info) {
  native_heap::Refresh();
  return info.Env().Undefined();
}

// nativeHeap() -> { globs, unmatched, modules: [{ path, slots, symbols, own, error }] }
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
    arr.Set(i, m);
  }
  o.Set("modules", arr);
  return o;
}

Napi::Value Snapshot(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  std::vector<SlotRecord> live = a->LiveRecords();
  Napi::Array arr = Napi::Array::New(env, live.size());
  const StackStore& st = StackStore::Get();
  for (size_t i = 0; i < live.size(); i++) {
    const SlotRecord& r = live[i];
    Napi::Object o = Napi::Object::New(env);
    char ptr[32];
    snprintf(ptr, sizeof(ptr), "0x%lx", static_cast<unsigned long>(r.user));
    o.Set("id", Napi::Number::New(env, static_cast<double>(r.alloc_id)));
    o.Set("size", Napi::Number::New(env, static_cast<double>(r.size)));
    o.Set("ptr", ptr);
    o.Set("mode", ModeName(r.mode));
    o.Set("backend", SlotBackendName(r.backend));
    o.Set("test", st.Lookup(r.alloc_test) ? Napi::Value(Napi::String::New(env, st.Lookup(r.alloc_test))) : env.Null());
    o.Set("stack", st.Lookup(r.alloc_stack) ? Napi::Value(Napi::String::New(env, st.Lookup(r.alloc_stack))) : env.Null());
    arr.Set(i, o);
  }
  return arr;
}

// internString(text) -> id usable as alloc's stack argument.
Napi::Value InternString(const Napi::CallbackInfo& info) {
  std::string s = info[0].As<Napi::String>().Utf8Value();
  return Napi::Number::New(info.Env(), StackStore::Get().Intern(s.data(), s.size()));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("configure", Napi::Function::New(env, Configure));
  exports.Set("alloc", Napi::Function::New(env, Alloc));
  exports.Set("setCurrentTest", Napi::Function::New(env, SetCurrentTest));
  exports.Set("checkCanaries", Napi::Function::New(env, CheckCanaries));
  exports.Set("stats", Napi::Function::New(env, Stats));
  exports.Set("snapshot", Napi::Function::New(env, Snapshot));
  exports.Set("internString", Napi::Function::New(env, InternString));
  exports.Set("guardNativeModules", Napi::Function::New(env, GuardNativeModules));
  exports.Set("nativeHeapRefresh", Napi::Function::New(env, NativeHeapRefresh));
  exports.Set("nativeHeap", Napi::Function::New(env, NativeHeap));
  return exports;
}

}  // namespace
}  // namespace mate

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return mate::Init(env, exports); }
NODE_API_MODULE(mate_guard, InitModule)
