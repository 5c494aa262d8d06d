#ifndef MATE_BINDING_CONFIG_PARSE_H_
#define MATE_BINDING_CONFIG_PARSE_H_

#include <napi.h>

#include <string>

#include "options/options.h"

namespace mate {

// Reads every field of the option table from a JS object; absent keys keep
// their defaults. Values arrive validated by the TS layer, so a wrong type
// here is a programming error and is reported, not coerced.
inline bool ParseOptions(const Napi::Object& obj, Options* out, std::string* error) {
#define MATE_OPTION(type, field, js_name, def, desc)                               \
  if (obj.Has(js_name)) {                                                          \
    Napi::Value v = obj.Get(js_name);                                              \
    if (!v.IsUndefined()) {                                                        \
      if (std::is_same<type, bool>::value) {                                       \
        if (!v.IsBoolean()) { *error = std::string(js_name) + " must be a boolean"; return false; } \
        out->field = static_cast<type>(v.As<Napi::Boolean>().Value());             \
      } else {                                                                     \
        if (!v.IsNumber()) { *error = std::string(js_name) + " must be a number"; return false; } \
        double d = v.As<Napi::Number>().DoubleValue();                             \
        if (d < 0) { *error = std::string(js_name) + " must not be negative"; return false; } \
        out->field = static_cast<type>(d);                                         \
      }                                                                            \
    }                                                                              \
  }
#include "options/options.inc"
#undef MATE_OPTION
  return true;
}

}  // namespace mate

#endif  // MATE_BINDING_CONFIG_PARSE_H_
