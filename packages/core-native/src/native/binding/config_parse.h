#ifndef MATE_BINDING_CONFIG_PARSE_H_
#define MATE_BINDING_CONFIG_PARSE_H_

#include <napi.h>

#include <string>

#include "options/options.h"

namespace mate {

// One reader per field type of the option table. Values arrive validated by
// the TS settings table, so a wrong type here is a programming error and is
// reported, not coerced.
inline bool ReadOption(const Napi::Value& v, bool* out, const char* name, std::string* error) {
  if (!v.IsBoolean()) {
    *error = std::string(name) + " must be a boolean";
    return false;
  }
  *out = v.As<Napi::Boolean>().Value();
  return true;
}

inline bool ReadNumber(const Napi::Value& v, double* out, const char* name, std::string* error) {
  if (!v.IsNumber()) {
    *error = std::string(name) + " must be a number";
    return false;
  }
  *out = v.As<Napi::Number>().DoubleValue();
  if (*out < 0) {
    *error = std::string(name) + " must not be negative";
    return false;
  }
  return true;
}

inline bool ReadOption(const Napi::Value& v, uint32_t* out, const char* name, std::string* error) {
  double d;
  if (!ReadNumber(v, &d, name, error)) return false;
  *out = static_cast<uint32_t>(d);
  return true;
}

inline bool ReadOption(const Napi::Value& v, uint64_t* out, const char* name, std::string* error) {
  double d;
  if (!ReadNumber(v, &d, name, error)) return false;
  *out = static_cast<uint64_t>(d);
  return true;
}

inline bool ReadOption(const Napi::Value& v, Mode* out, const char* name, std::string* error) {
  std::string s = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (s == "tail") *out = Mode::kTail;
  else if (s == "head") *out = Mode::kHead;
  else {
    *error = std::string(name) + " must be 'tail' or 'head'";
    return false;
  }
  return true;
}

inline bool ReadOption(const Napi::Value& v, Tristate* out, const char* name, std::string* error) {
  if (v.IsNull()) {
    *out = Tristate::kUnset;
    return true;
  }
  bool b;
  if (!ReadOption(v, &b, name, error)) return false;
  *out = b ? Tristate::kOn : Tristate::kOff;
  return true;
}

inline bool ReadOption(const Napi::Value& v, CudaQuarantine* out, const char* name, std::string* error) {
  std::string s = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (s == "adaptive") *out = CudaQuarantine::kAdaptive;
  else if (s == "strict") *out = CudaQuarantine::kStrict;
  else {
    *error = std::string(name) + " must be 'adaptive' or 'strict'";
    return false;
  }
  return true;
}

inline bool ReadOption(const Napi::Value& v, std::string* out, const char* name, std::string* error) {
  if (v.IsNull()) {
    out->clear();
    return true;
  }
  if (!v.IsString()) {
    *error = std::string(name) + " must be a string";
    return false;
  }
  *out = v.As<Napi::String>().Utf8Value();
  return true;
}

// Reads every field of the option table from a JS object; absent keys keep
// their defaults.
inline bool ParseOptions(const Napi::Object& obj, Options* out, std::string* error) {
#define MATE_OPTION(type, field, js_name, def)                    \
  if (obj.Has(js_name) && !obj.Get(js_name).IsUndefined() &&      \
      !ReadOption(obj.Get(js_name), &out->field, js_name, error)) \
    return false;
#include "options/options.inc"
#undef MATE_OPTION
  return true;
}

}  // namespace mate

#endif  // MATE_BINDING_CONFIG_PARSE_H_
