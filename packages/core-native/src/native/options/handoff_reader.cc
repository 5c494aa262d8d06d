#include "options/handoff_reader.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace mate {

namespace {

// A JSON value, just enough of it: the handoff is small and read once.
struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<Value> items;
  std::map<std::string, Value> fields;
  const Value* Get(const char* key) const {
    auto it = fields.find(key);
    return kind == kObject && it != fields.end() ? &it->second : nullptr;
  }
};

class Parser {
 public:
  explicit Parser(const char* p) : p_(p) {}
  bool Parse(Value* out) {
    if (!ParseValue(out, 0)) return false;
    Space();
    return *p_ == '\0';
  }

 private:
  void Space() {
    while (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t') p_++;
  }
  bool Word(const char* w) {
    size_t n = strlen(w);
    if (strncmp(p_, w, n) != 0) return false;
    p_ += n;
    return true;
  }
  bool ParseString(std::string* out) {
    if (*p_ != '"') return false;
    p_++;
    while (*p_ && *p_ != '"') {
      char c = *p_++;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      char e = *p_++;
      switch (e) {
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'u': {
          unsigned cp = 0;
          for (int i = 0; i < 4; i++) {
            char h = *p_++;
            cp = cp * 16 + (h >= '0' && h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          }
          // UTF-8 (surrogate pairs are not expected in paths and names here: kept as is).
          if (cp < 0x80) {
            out->push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        case '\0':
          return false;
        default:
          out->push_back(e);  // \" \\ \/
      }
    }
    if (*p_ != '"') return false;
    p_++;
    return true;
  }
  bool ParseValue(Value* v, int depth) {
    if (depth > 32) return false;
    Space();
    if (*p_ == '{') {
      p_++;
      v->kind = Value::kObject;
      Space();
      if (*p_ == '}') return p_++, true;
      for (;;) {
        Space();
        std::string key;
        if (!ParseString(&key)) return false;
        Space();
        if (*p_++ != ':') return false;
        if (!ParseValue(&v->fields[key], depth + 1)) return false;
        Space();
        if (*p_ == ',') {
          p_++;
          continue;
        }
        if (*p_ == '}') return p_++, true;
        return false;
      }
    }
    if (*p_ == '[') {
      p_++;
      v->kind = Value::kArray;
      Space();
      if (*p_ == ']') return p_++, true;
      for (;;) {
        v->items.emplace_back();
        if (!ParseValue(&v->items.back(), depth + 1)) return false;
        Space();
        if (*p_ == ',') {
          p_++;
          continue;
        }
        if (*p_ == ']') return p_++, true;
        return false;
      }
    }
    if (*p_ == '"') {
      v->kind = Value::kString;
      return ParseString(&v->s);
    }
    if (Word("true")) {
      v->kind = Value::kBool;
      v->b = true;
      return true;
    }
    if (Word("false")) {
      v->kind = Value::kBool;
      v->b = false;
      return true;
    }
    if (Word("null")) {
      v->kind = Value::kNull;
      return true;
    }
    char* end = nullptr;
    v->n = strtod(p_, &end);
    if (end == p_) return false;
    v->kind = Value::kNumber;
    p_ = end;
    return true;
  }
  const char* p_;
};

// One reader per field type of the options table. A value of the wrong
// type is an error: the handoff is ours, so it is foreign or stale.
bool ReadJson(const Value& v, bool* out) {
  if (v.kind != Value::kBool) return false;
  *out = v.b;
  return true;
}
bool ReadJson(const Value& v, uint32_t* out) {
  if (v.kind != Value::kNumber || v.n < 0) return false;
  *out = static_cast<uint32_t>(v.n);
  return true;
}
bool ReadJson(const Value& v, uint64_t* out) {
  if (v.kind != Value::kNumber || v.n < 0) return false;
  *out = static_cast<uint64_t>(v.n);
  return true;
}
bool ReadJson(const Value& v, Tristate* out) {
  if (v.kind == Value::kNull) return *out = Tristate::kUnset, true;
  if (v.kind != Value::kBool) return false;
  *out = v.b ? Tristate::kOn : Tristate::kOff;
  return true;
}
bool ReadJson(const Value& v, Mode* out) {
  if (v.kind != Value::kString || (v.s != "tail" && v.s != "head")) return false;
  *out = v.s == "tail" ? Mode::kTail : Mode::kHead;
  return true;
}
bool ReadJson(const Value& v, CudaQuarantine* out) {
  if (v.kind != Value::kString || (v.s != "adaptive" && v.s != "strict")) return false;
  *out = v.s == "strict" ? CudaQuarantine::kStrict : CudaQuarantine::kAdaptive;
  return true;
}

bool ReadJson(const Value& v, std::string* out) {
  if (v.kind == Value::kNull) return out->clear(), true;
  if (v.kind != Value::kString) return false;
  *out = v.s;
  return true;
}

}  // namespace

bool ReadHandoff(const char* json, Handoff* out, std::string* error) {
  Value root;
  if (json == nullptr || !Parser(json).Parse(&root) || root.kind != Value::kObject) {
    *error = "MATE_GUARD_SETTINGS is internal to mate-guard and is not JSON";
    return false;
  }
  const Value* version = root.Get("version");
  const Value* s = root.Get("settings");
  if (version == nullptr || version->kind != Value::kNumber || version->n != 1 || s == nullptr ||
      s->kind != Value::kObject) {
    *error = "MATE_GUARD_SETTINGS is not a version 1 handoff (a different mate-guard started this run?)";
    return false;
  }
  // Absent keys keep their defaults (JSON has no undefined: an unset
  // setting is absent).
#define MATE_OPTION(type, field, js_name, def)                                                                        \
  if (const Value* v = s->Get(js_name); v != nullptr && !ReadJson(*v, &out->options.field)) {                         \
    *error = std::string("MATE_GUARD_SETTINGS has a bad ") + js_name + " (a different mate-guard started this run?)"; \
    return false;                                                                                                     \
  }
#include "options/options.inc"
#undef MATE_OPTION
  if (const Value* d = s->Get("reportDir"); d && d->kind == Value::kString) out->report_dir = d->s;
  const Value* owner = root.Get("ownerPid");
  out->owned = owner != nullptr && owner->kind == Value::kNumber;
  return true;
}

}  // namespace mate
