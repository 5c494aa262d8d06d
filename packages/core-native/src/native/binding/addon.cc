// Node-API surface of the allocator. No C++ exceptions cross it: errors
// become JS exceptions.
#include <napi.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "binding/config_parse.h"
#include "binding/counters.h"
#include "binding/device_binding.h"
#include "binding/event_json.h"
#include "binding/external_buffer.h"
#include "binding/format_binding.h"
#include "binding/js_stack_capture.h"
#include "binding/native_heap_binding.h"
#include "binding/native_stack_binding.h"
#include "binding/stack_keys_binding.h"
#include "core/alloc_log.h"
#include "core/guarded_allocator.h"
#include "core/stack_store.h"
#include "crash/describe.h"
#include "report/event_origin.h"
#include "report/printer.h"
#include "report/report_event.h"
#include "report/report_file.h"
#include "crash/signal_handler.h"
#include "report/writer.h"
#include "crash/backtrace.h"
#include "engine/gc_watch.h"
#include "engine/stack_keys.h"
#include "platform/linux/module_map.h"

namespace mate {
namespace {

std::mutex g_pending_mu;
std::vector<std::string> g_pending;  // events of violations found at free, surfaced at the next check
uint64_t g_violations = 0;           // reported by this process (fault reports excluded: they end it)

Napi::Value Throw(Napi::Env env, const std::string& msg) {
  Napi::Error::New(env, msg).ThrowAsJavaScriptException();
  return env.Undefined();
}

GuardedAllocator* Need(Napi::Env env) {
  GuardedAllocator* a = GuardedAllocator::Instance();
  if (a == nullptr)
    Napi::Error::New(env, "mate-guard: the guard allocator is not installed").ThrowAsJavaScriptException();
  return a;
}

std::string EventOf(const GuardedAllocator& a, const CanaryViolation& c) { return EventJson(DescribeCanary(a, c)); }

// Called once per buffer when the engine frees it: during GC on any thread
// (V8 deleters) or a turn later (Node-API finalizer).
void ReleaseBuffer(void* data) {
  GuardedAllocator* a = GuardedAllocator::Instance();
  FreeResult r = a->Free(data, FreedBy::kGarbageCollector, 0);
  if (r.status == FreeStatus::kNotGuarded) {
    free(data);  // an unguarded fallback
    return;
  }
  if (a->options().log_allocations && r.status == FreeStatus::kFreed)
    LogFree(r.record.alloc_id, reinterpret_cast<uintptr_t>(data), r.record.size, r.record.mode, "host",
            a->CurrentTest());
}

// Canary damage found when a freed allocation is checked (any thread): the
// event is rendered now, the report surfaces at the next check.
void OnFreeViolation(const CanaryViolation& violation) {
  std::string event = EventOf(*GuardedAllocator::Instance(), violation);
  std::lock_guard<std::mutex> lock(g_pending_mu);
  g_pending.push_back(std::move(event));
}

// An array's strings, one a line (what the event origin's setters take).
std::string Lines(const Napi::Array& arr) {
  std::string out;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value d = arr.Get(i);
    if (d.IsString()) out += (out.empty() ? "" : "\n") + d.As<Napi::String>().Utf8Value();
  }
  return out;
}

std::string StringProp(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
}

// configure(options, reportDir, printer: { path, withEarlier, machineryDirs, machineryPackages }): creates
// the allocator once and installs the fault handler.
Napi::Value Configure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject() || !info[1].IsString() || !info[2].IsObject())
    return Throw(env, "configure(options, reportDir, printer) needs an object, a string and an object");
  Options options;
  std::string error;
  if (!ParseOptions(info[0].As<Napi::Object>(), &options, &error)) return Throw(env, "mate-guard: " + error);
  options.quarantine_max_bytes = QuarantineBytes(options, kHostQuarantineBytes);
  SetReportDir(info[1].As<Napi::String>().Utf8Value().c_str());
  Napi::Object printer = info[2].As<Napi::Object>();
  if (!ConfigurePrinter(StringProp(printer, "path").c_str(), printer.Get("withEarlier").ToBoolean().Value()))
    return Throw(env, "mate-guard: PATH is too long for the report printer");
  ConfigureNativePrinter();
  Napi::Value drop = printer.Get("machineryDirs");
  if (drop.IsArray()) SetEventMachineryDirs(Lines(drop.As<Napi::Array>()).c_str());
  Napi::Value packages = printer.Get("machineryPackages");
  if (packages.IsArray()) SetEventMachineryPackages(Lines(packages.As<Napi::Array>()).c_str());
  GuardedAllocator* a = GuardedAllocator::Create(options, &error);
  if (a == nullptr) return Throw(env, "mate-guard: " + error);
  if (!InstallFaultHandler()) return Throw(env, "mate-guard: could not install the SIGSEGV/SIGBUS handler");
  // Frees from the GC's threads come in bursts: close their slots in
  // batches. Node-API finalizers free on the JS thread just before JS runs
  // again, so there every free closes its slot at once.
  a->SetFreeViolationSink(OnFreeViolation);
  a->SetBatchedClose(ReleasedDuringGC(env));
  // The handler resolves frames through the module map and must never load
  // the unwinder itself: both are made ready now.
  RefreshModuleMap(true);
  WarmUpBacktrace();
  Napi::Object o = Napi::Object::New(env);
  o.Set("guardMethod", GuardMethodName(a->guard_method()));
  o.Set("pageSize", Napi::Number::New(env, static_cast<double>(a->page_size())));
  return o;
}

// Near the mprotect backend's live-allocation cap: dead buffers the engine
// has not collected yet hold slots, so it collects them now (their frees run
// inside that collection) instead of this allocation and the next ones
// running unguarded. Here we are in a call from JS, outside any collection;
// a buffer made while the collection runs (a weak callback) does not start
// another.
void CollectNearCap(GuardedAllocator* a) {
  static thread_local bool collecting = false;
  if (collecting) return;
  collecting = true;
  uint64_t live_before = a->Stats().live;
  auto t0 = std::chrono::steady_clock::now();
  bool ran = engine::CollectNow();
  auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
  a->Collected(live_before, ran, static_cast<uint64_t>(took.count()));
  collecting = false;
}

// A guarded ArrayBuffer of `size` bytes (zero-filled) whose allocation
// stack is `stack` (an interned id, 0 = none). `one_byte`: its elements
// are bytes (a Buffer, a Uint8Array): with exactPlacement it is placed
// byte-exact, so a read past its end faults instead of landing in the
// alignment gap (which only a write would show, as canary damage).
Napi::Value AllocWith(Napi::Env env, GuardedAllocator* a, size_t size, uint32_t stack, bool one_byte) {
  if (a->CollectionWanted()) CollectNearCap(a);
  AllocRequest req;
  req.size = size;
  req.stack_id = stack;
  if (one_byte && a->options().exact_placement) req.alignment = 1;
  AllocResult r = a->Allocate(req);
  void* ptr = r.ptr;
  if (ptr == nullptr) {
    ptr = calloc(size ? size : 1, 1);
    if (ptr == nullptr) return Throw(env, "mate-guard: out of memory allocating " + std::to_string(size) + " bytes");
    if (a->options().log_allocations)
      LogUnguarded(reinterpret_cast<uintptr_t>(ptr), size, r.fallback_reason, "host", a->CurrentTest());
  } else if (a->options().log_allocations) {
    LogAlloc(r.id, reinterpret_cast<uintptr_t>(ptr), size, r.mapped, a->options().mode, "host", a->CurrentTest());
  }
  napi_value ab = NewExternalArrayBuffer(env, ptr, size, ReleaseBuffer);
  if (ab == nullptr) {
    ReleaseBuffer(ptr);
    return Throw(env, "mate-guard: creating an external ArrayBuffer failed");
  }
  return Napi::Value(env, ab);
}

size_t SizeArg(const Napi::CallbackInfo& info) { return static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue()); }

// Whether the call's argument `i` says the buffer has 1-byte elements.
bool OneByte(const Napi::CallbackInfo& info, size_t i) {
  return info.Length() > i && info[i].IsBoolean() && info[i].As<Napi::Boolean>().Value();
}

// alloc(size, stackId?, token?, oneByte?) -> ArrayBuffer over guarded memory. `token`
// (from allocKeyed) names the stack key that `stackId` is the text of.
Napi::Value Alloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  uint32_t stack = 0;
  if (info.Length() > 1 && info[1].IsNumber()) stack = info[1].As<Napi::Number>().Uint32Value();  // from internString
  if (info.Length() > 2 && info[2].IsNumber()) {
    if (engine::StackKeys* keys = engine::StackKeys::ForThisThread())
      keys->Bind(info[2].As<Napi::Number>().Int32Value(), stack);
  }
  return AllocWith(env, a, SizeArg(info), stack, OneByte(info, 3));
}

// allocKeyed(size, oneByte?) -> ArrayBuffer when the caller's JS stack was seen before
// (its text is known), else a number: capture the stack text, intern it and
// call alloc(size, stackId, thatNumber). Nothing is allocated on a miss.
Napi::Value AllocKeyed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  engine::StackKeys* keys = engine::StackKeys::ForThisThread();
  int32_t token = -1;
  uint32_t stack = keys ? keys->Lookup(&token) : 0;
  if (stack == 0) return Napi::Number::New(env, token);
  return AllocWith(env, a, SizeArg(info), stack, OneByte(info, 1));
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
  if (id != 0) KeepFaultHandlerFirst();
  return info.Env().Undefined();
}

// checkCanaries(all) -> events (JSON) of violations found now, plus those
// found at free.
Napi::Value CheckCanaries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  bool all = info.Length() > 0 && info[0].ToBoolean().Value();
  // Checks first: they also check freed allocations still waiting to be
  // closed, whose damage reaches g_pending.
  std::vector<CanaryViolation> now = all ? a->CheckAll() : a->CheckRecent();
  std::vector<std::string> found;
  {
    std::lock_guard<std::mutex> lock(g_pending_mu);
    found.swap(g_pending);
  }
  TakeNativeHeapEvents(*a, &found);
  TakeDeviceEvents(&found);
  for (const CanaryViolation& c : now) found.push_back(EventOf(*a, c));
  Napi::Array arr = Napi::Array::New(env, found.size());
  for (size_t i = 0; i < found.size(); i++) arr.Set(i, found[i]);
  g_violations += found.size();
  return arr;
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  GuardedAllocator* a = Need(env);
  if (a == nullptr) return env.Undefined();
  AllocatorStats s = a->Stats();
  auto num = [&](uint64_t v) { return CountToJs(env, v); };
  Napi::Object o = Napi::Object::New(env);
  SetAllocationCounts(env, o, s);
  // { reason: count }: each reason an allocation ran unguarded, counted.
  Napi::Object reasons = Napi::Object::New(env);
  for (const AllocatorStats::ReasonCount& rc : s.fallback_reasons)
    if (rc.reason != nullptr) reasons.Set(rc.reason, CountToJs(env, rc.count));
  o.Set("fallbackReasons", reasons);
  o.Set("quarantinedBytes", num(s.quarantined_bytes));
  o.Set("reservedBytes", num(s.reserved_bytes));
  o.Set("maxLive", num(s.max_live));
  o.Set("collectionsNearCap", num(s.collections));
  o.Set("primedAllocations", num(s.primed_allocations));
  o.Set("violations", num(g_violations));
  o.Set("guardMethod", GuardMethodName(s.guard_method));
  o.Set("releasedDuringGc", Napi::Boolean::New(env, ReleasedDuringGC(env)));
  AddStackKeyStats(env, o);
  AddNativeHeapStats(env, o, s);
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
    o.Set("stack",
          st.Lookup(r.alloc_stack) ? Napi::Value(Napi::String::New(env, st.Lookup(r.alloc_stack))) : env.Null());
    arr.Set(i, o);
  }
  return arr;
}

// internString(text) -> id usable as alloc's stack argument.
Napi::Value InternString(const Napi::CallbackInfo& info) {
  std::string s = info[0].As<Napi::String>().Utf8Value();
  return Napi::Number::New(info.Env(), StackStore::Get().Intern(s.data(), s.size()));
}

// reportKinds() -> every kind's name, in enum order (a test compares the TS list).
Napi::Value ReportKinds(const Napi::CallbackInfo& info) {
  Napi::Array arr = Napi::Array::New(info.Env(), kReportKindCount);
  for (int i = 0; i < kReportKindCount; i++) arr.Set(i, ReportKindName(static_cast<ReportKind>(i)));
  return arr;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("configure", Napi::Function::New(env, Configure));
  exports.Set("alloc", Napi::Function::New(env, Alloc));
  exports.Set("allocKeyed", Napi::Function::New(env, AllocKeyed));
  exports.Set("setCurrentTest", Napi::Function::New(env, SetCurrentTest));
  exports.Set("checkCanaries", Napi::Function::New(env, CheckCanaries));
  exports.Set("stats", Napi::Function::New(env, Stats));
  exports.Set("snapshot", Napi::Function::New(env, Snapshot));
  exports.Set("internString", Napi::Function::New(env, InternString));
  exports.Set("reportKinds", Napi::Function::New(env, ReportKinds));
  AddNativeStackExports(env, exports);
  AddStackKeyExports(env, exports);
  AddJsStackCaptureExports(env, exports);
  AddNativeHeapExports(env, exports);
  AddDeviceExports(env, exports);
  AddFormatExports(env, exports);
  return exports;
}

}  // namespace
}  // namespace mate

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return mate::Init(env, exports); }
NODE_API_MODULE(mate_guard, InitModule)
