#include "binding/format_binding.h"

#include <cxxabi.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "report/format/earlier_header.h"
#include "report/format/escape.h"
#include "report/format/event_schema.h"
#include "report/format/format_options.h"
#include "report/format/format_reports.h"
#include "report/format/suppressions.h"
#include "report/symbolizer.h"
#include "report/format/format_text.h"
#include "report/format/json_value.h"
#include "report/format/rerun_block.h"

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
  return true;
}

// formatReport(eventJson, options): the text report (the CI forms are formatReports').
Napi::Value FormatReport(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "formatReport: the event must be a JSON string");
  FormatOptions o;
  if (!ReadOptions(info[1], &o)) return Fail(env, "formatReport: the options must be an object");
  return Napi::String::New(env, FormatTextJson(info[0].As<Napi::String>().Utf8Value(), o));
}

// formatRerun(eventJson, options): what the event's filed rerun found, as the run's terminal prints it under the
// report ("" when nothing); the rerun's fault and death are symbolized by the caller.
Napi::Value FormatRerun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "formatRerun: the event must be a JSON string");
  FormatOptions o;
  if (!ReadOptions(info[1], &o)) return Fail(env, "formatRerun: the options must be an object");
  JsonValue event;
  std::string error;
  if (!ParseJson(info[0].As<Napi::String>().Utf8Value(), &event, &error))
    return Fail(env, ("formatRerun: " + error).c_str());
  return Napi::String::New(env, RerunBlock(event, o));
}

// validateEvent(text) -> "" or why the event cannot be read (naming the field).
Napi::Value ValidateEvent(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "validateEvent: the event must be a string");
  return Napi::String::New(env, EventTextProblem(info[0].As<Napi::String>().Utf8Value()));
}

// formatReports(inputJson, format, options): `mate report`'s sarif and github output (format_reports.h says what
// the input holds); the events' native frames are symbolized by the caller.
Napi::Value FormatReportsJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString())
    return Fail(env, "formatReports(inputJson, format, options) needs two strings");
  FormatOptions o;
  if (!ReadOptions(info[2], &o)) return Fail(env, "formatReports: the options must be an object");
  std::string format = info[1].As<Napi::String>().Utf8Value();
  if (format != "sarif" && format != "github") return Fail(env, "formatReports: format must be sarif or github");
  JsonValue input;
  std::string error;
  // Every event of the merged runs at once: the per-event cap does not apply.
  JsonLimits limits;
  limits.max_bytes = size_t{1} << 31;
  limits.max_depth = 64;
  if (!ParseJson(info[0].As<Napi::String>().Utf8Value(), &input, &error, limits))
    return Fail(env, ("formatReports: " + error).c_str());
  return Napi::String::New(env, FormatReports(input, format, o));
}

// suppressionsProblem(text, file): "" when the suppressions file's text is good, else the error naming file:line.
Napi::Value SuppressionsProblem(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString())
    return Fail(env, "suppressionsProblem(text, file) needs two strings");
  std::vector<SuppressionRule> rules;
  std::string error;
  ParseSuppressions(info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::String>().Utf8Value(), &rules, &error);
  return Napi::String::New(env, error);
}

// matchSuppression(eventJson, text, file): the first rule of the file's text that matches the event, as the
// event records it ({file, line, rule} as JSON), or "".
Napi::Value MatchSuppressionJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() || !info[2].IsString())
    return Fail(env, "matchSuppression(eventJson, text, file) needs three strings");
  std::vector<SuppressionRule> rules;
  std::string error;
  JsonValue e;
  if (!ParseSuppressions(info[1].As<Napi::String>().Utf8Value(), info[2].As<Napi::String>().Utf8Value(), &rules,
                         &error) ||
      !ParseJson(info[0].As<Napi::String>().Utf8Value(), &e, &error)) {
    return Napi::String::New(env, "");
  }
  JsonValue verdict = MatchSuppression(e, rules);
  return Napi::String::New(env, verdict.IsObject() ? WriteJson(verdict) : "");
}

// symbolizeFrames(framesJson, options): the frames symbolized by the one symbolizer (report/symbolizer.h), as JSON.
// options: {path, timeoutMs, llvmSymbolizer, addr2line (a path, or false: not used), cache}.
Napi::Value SymbolizeFramesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "symbolizeFrames: the frames must be a JSON string");
  SymbolizeOptions o;
  const char* path = getenv("PATH");
  o.search_path = path != nullptr ? path : "";
  if (info.Length() > 1 && info[1].IsObject()) {
    Napi::Object opt = info[1].As<Napi::Object>();
    if (opt.Get("path").IsString()) o.search_path = opt.Get("path").As<Napi::String>().Utf8Value();
    if (opt.Get("timeoutMs").IsNumber()) o.timeout_ms = opt.Get("timeoutMs").As<Napi::Number>().Int32Value();
    Napi::Value llvm = opt.Get("llvmSymbolizer");
    if (llvm.IsString()) o.llvm_symbolizer = llvm.As<Napi::String>().Utf8Value();
    o.no_llvm_symbolizer = llvm.IsBoolean() && !llvm.As<Napi::Boolean>().Value();
    Napi::Value a2l = opt.Get("addr2line");
    if (a2l.IsString()) o.addr2line = a2l.As<Napi::String>().Utf8Value();
    o.no_addr2line = a2l.IsBoolean() && !a2l.As<Napi::Boolean>().Value();
    o.cache = !opt.Get("cache").IsBoolean() || opt.Get("cache").As<Napi::Boolean>().Value();
  }
  JsonValue frames;
  std::string error;
  JsonLimits limits;
  limits.max_bytes = size_t{1} << 30;
  if (!ParseJson(info[0].As<Napi::String>().Utf8Value(), &frames, &error, limits) || !frames.IsArray()) {
    return Fail(env, "symbolizeFrames: the frames must be a JSON array");
  }
  SymbolizeFrames(&frames, o);
  return Napi::String::New(env, WriteJson(frames));
}

// demangleNames(names): each C++ name demangled (libstdc++'s demangler, as c++filt's), "" where it is none.
Napi::Value DemangleNamesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) return Fail(env, "demangleNames(names) needs an array of strings");
  Napi::Array names = info[0].As<Napi::Array>();
  Napi::Array out = Napi::Array::New(env, names.Length());
  for (uint32_t i = 0; i < names.Length(); i++) {
    std::string name = names.Get(i).IsString() ? names.Get(i).As<Napi::String>().Utf8Value() : "";
    int status = -1;
    char* d = name.compare(0, 2, "_Z") == 0 ? abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status) : nullptr;
    out.Set(i, Napi::String::New(env, status == 0 && d != nullptr ? d : ""));
    free(d);
  }
  return out;
}

Napi::Value ClearSymbolCacheJs(const Napi::CallbackInfo& info) {
  ClearSymbolCache();
  return info.Env().Undefined();
}

// earlierReportsHeader(crashJson, count, who): the line above the reports a dying process's runner never showed.
Napi::Value EarlierReportsHeaderJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsString())
    return Fail(env, "earlierReportsHeader(crashJson, count, who) needs a string, a number and a string");
  JsonValue crash;
  std::string error;
  if (!ParseJson(info[0].As<Napi::String>().Utf8Value(), &crash, &error))
    return Fail(env, ("earlierReportsHeader: " + error).c_str());
  size_t count = static_cast<size_t>(info[1].As<Napi::Number>().Int64Value());
  return Napi::String::New(env, EarlierReportsHeader(crash, count, info[2].As<Napi::String>().Utf8Value()));
}

// visibleLines(text): a report's text from an artifact with what a terminal would obey spelled out (escape.h).
Napi::Value VisibleLinesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) return Fail(env, "visibleLines(text) needs a string");
  return Napi::String::New(env, VisibleLines(info[0].As<Napi::String>().Utf8Value()));
}

}  // namespace

void AddFormatExports(Napi::Env env, Napi::Object exports) {
  exports.Set("formatReport", Napi::Function::New(env, FormatReport));
  exports.Set("formatRerun", Napi::Function::New(env, FormatRerun));
  exports.Set("validateEvent", Napi::Function::New(env, ValidateEvent));
  exports.Set("formatReports", Napi::Function::New(env, FormatReportsJs));
  exports.Set("suppressionsProblem", Napi::Function::New(env, SuppressionsProblem));
  exports.Set("symbolizeFrames", Napi::Function::New(env, SymbolizeFramesJs));
  exports.Set("clearSymbolCache", Napi::Function::New(env, ClearSymbolCacheJs));
  exports.Set("demangleNames", Napi::Function::New(env, DemangleNamesJs));
  exports.Set("matchSuppression", Napi::Function::New(env, MatchSuppressionJs));
  exports.Set("earlierReportsHeader", Napi::Function::New(env, EarlierReportsHeaderJs));
  exports.Set("visibleLines", Napi::Function::New(env, VisibleLinesJs));
}

}  // namespace mate
