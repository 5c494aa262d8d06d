#include "binding/format_binding.h"

#include <string>

#include "report/format/event_schema.h"
#include "report/format/format_options.h"
#include "report/format/format_text.h"

namespace mate {

namespace {

Napi::Value Fail(Napi::Env env, const char* msg) {
  Napi::TypeError::New(env, msg).ThrowAsJavaScriptException();
  return env.Undefined();
}

bool ReadOptions(const Napi::Value& v, FormatOptions* o) {
  if (v.IsUndefined()) return true;
  if (!v.IsObject()) return false;
  Napi::Object obj = v.As<Napi::Object>();
  Napi::Value cwd = obj.Get("cwd");
  if (cwd.IsString()) o->cwd = cwd.As<Napi::String>().Utf8Value();
  Napi::Value runtime = obj.Get("runtime");
  if (runtime.IsString()) o->runtime = runtime.As<Napi::String>().Utf8Value();
  Napi::Value dirs = obj.Get("dropDirs");
  if (dirs.IsArray()) {
    Napi::Array arr = dirs.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++) {
      Napi::Value d = arr.Get(i);
      if (d.IsString()) o->drop_dirs.push_back(d.As<Napi::String>().Utf8Value());
    }
  }
  return true;
}

Napi::Value FormatReport(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "formatReport: the event must be a JSON string");
  FormatOptions o;
  if (!ReadOptions(info[1], &o)) return Fail(env, "formatReport: the options must be an object");
  return Napi::String::New(env, FormatTextJson(info[0].As<Napi::String>().Utf8Value(), o));
}

// validateEvent(text) -> "" or why the event cannot be read (naming the field).
Napi::Value ValidateEvent(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "validateEvent: the event must be a string");
  return Napi::String::New(env, EventTextProblem(info[0].As<Napi::String>().Utf8Value()));
}

}  // namespace

void AddFormatExports(Napi::Env env, Napi::Object exports) {
  exports.Set("formatReport", Napi::Function::New(env, FormatReport));
  exports.Set("validateEvent", Napi::Function::New(env, ValidateEvent));
}

}  // namespace mate
