// Node-API surface of the CUDA device guard. Addons reach the guard through
// the C ABI (include/mate_guard.h) or, with no code change, through their
// redirected CUDA calls; from JS it is only configured, asked for counters
// and stopped. Its findings come back as events through checkCanaries.
#include "binding/device_binding.h"

#include <mutex>

#include "binding/config_parse.h"
#include "binding/counters.h"
#include "binding/js_stack_capture.h"
#include "device/device_guard.h"
#include "device/allocator/device_options.h"
#include "device/device_report.h"
#include "device/launch/launch_tracker.h"
#include "device/embed/redirect.h"

namespace mate {
namespace {

class NodeSink : public device::EventSink {
 public:
  void OnEvent(const device::DeviceEvent& e) override {
    std::string json = device::DeviceEventJson(e);
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(json));
  }
  void Take(std::vector<std::string>* out) {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string& e : events_) out->push_back(std::move(e));
    events_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<std::string> events_;
};

NodeSink g_sink;

// configureDevice(options) -> { trackingOff } | throws. `options`: the
// same settings object as configure() (options.inc: each setting with a
// device meaning), and redirectGlobs (modules besides addons whose CUDA
// calls are redirected).
Napi::Value ConfigureDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    Napi::TypeError::New(env, "configureDevice(options) needs an object").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Object o = info[0].As<Napi::Object>();
  Options options;
  std::string error;
  if (!ParseOptions(o, &options, &error)) {
    Napi::Error::New(env, "mate-guard: " + error).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Node processes run tests: by default a free checks at once, failing the test that freed.
  device::DeviceConfig c = device::DeviceConfigFrom(options, true);
  device::RedirectOptions redirect;
  redirect.log = c.settings.log_allocations;
  Napi::Value globs = o.Get("redirectGlobs");
  if (globs.IsArray()) {
    Napi::Array arr = globs.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++)
      if (arr.Get(i).IsString()) redirect.globs.push_back(arr.Get(i).As<Napi::String>().Utf8Value());
  }
  // JS stacks of allocations, frees and launches made inside calls from JS
  // (where the TS layer registered its capture: captureStacks).
  device::SetStackProvider(JsStackHere);
  device::SetFreeStackProvider(JsStackHere);
  device::SetSiteProvider(JsStackHere);
  if (!device::Install(c, &g_sink, &error)) {
    Napi::Error::New(env, "mate-guard: device 'cuda': " + error).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  device::StartRedirect(redirect);
  Napi::Object out = Napi::Object::New(env);
  out.Set("trackingOff", device::TrackingOff());
  return out;
}

Napi::Value DeviceStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!device::Installed()) return env.Null();
  device::DeviceStats s = device::TotalStats();
  device::TrackerStats t = device::GetTrackerStats();
  auto num = [&](uint64_t v) { return CountToJs(env, v); };
  Napi::Object o = Napi::Object::New(env);
  SetAllocationCounts(env, o, s);
  o.Set("physicalBytes", num(s.physical_bytes));
  o.Set("chunksCreated", num(s.chunks_created));
  o.Set("readyHits", num(s.ready_hits));
  o.Set("readyMisses", num(s.ready_misses));
  o.Set("recycled", num(s.recycled));
  o.Set("violations", num(s.violations));
  o.Set("outOfMemory", num(s.out_of_memory));
  o.Set("granule", num(s.granule));
  o.Set("launchTracking", Napi::Boolean::New(env, device::TrackingOn()));
  o.Set("trackingOff", device::TrackingOff());
  o.Set("launches", num(t.launches));
  o.Set("launchesUnread", num(t.no_layout));
  o.Set("guardedArgs", num(t.guarded_args));
  o.Set("trackMs", Napi::Number::New(env, t.ns / 1e6));
  std::vector<device::RedirectedModule> mods = device::RedirectedModules();
  Napi::Array arr = Napi::Array::New(env);
  uint32_t k = 0;
  for (const device::RedirectedModule& m : mods) {
    if (m.slots == 0) continue;
    Napi::Object mo = Napi::Object::New(env);
    mo.Set("path", m.path);
    mo.Set("slots", num(m.slots));
    arr.Set(k++, mo);
  }
  o.Set("redirected", arr);
  return o;
}

Napi::Value DeviceRefresh(const Napi::CallbackInfo& info) {
  if (device::Installed()) device::RefreshRedirect();
  return info.Env().Undefined();
}

Napi::Value ShutdownDevice(const Napi::CallbackInfo& info) {
  if (device::Installed()) device::ShutdownAll();
  // What the device does from now on (frees at exit) calls no more JS.
  device::SetStackProvider(nullptr);
  device::SetFreeStackProvider(nullptr);
  device::SetSiteProvider(nullptr);
  return info.Env().Undefined();
}

}  // namespace

void TakeDeviceEvents(std::vector<std::string>* out) {
  if (!device::Installed()) return;
  device::CheckHealthAll("the check after the test");
  g_sink.Take(out);
}

void AddDeviceExports(Napi::Env env, Napi::Object exports) {
  exports.Set("configureDevice", Napi::Function::New(env, ConfigureDevice));
  exports.Set("deviceStats", Napi::Function::New(env, DeviceStats));
  exports.Set("deviceRefresh", Napi::Function::New(env, DeviceRefresh));
  exports.Set("shutdownDevice", Napi::Function::New(env, ShutdownDevice));
}

}  // namespace mate
