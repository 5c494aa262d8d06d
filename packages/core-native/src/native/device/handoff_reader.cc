#include "device/handoff_reader.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace mate {
namespace device {

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
        case 'n': out->push_back('\n'); break;
        case 't': out->push_back('\t'); break;
        case 'r': out->push_back('\r'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
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
        case '\0': return false;
        default: out->push_back(e);  // \" \\ \/
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
        if (*p_ == ',') { p_++; continue; }
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
        if (*p_ == ',') { p_++; continue; }
        if (*p_ == ']') return p_++, true;
        return false;
      }
    }
    if (*p_ == '"') {
      v->kind = Value::kString;
      return ParseString(&v->s);
    }
    if (Word("true")) { v->kind = Value::kBool; v->b = true; return true; }
    if (Word("false")) { v->kind = Value::kBool; v->b = false; return true; }
    if (Word("null")) { v->kind = Value::kNull; return true; }
    char* end = nullptr;
    v->n = strtod(p_, &end);
    if (end == p_) return false;
    v->kind = Value::kNumber;
    p_ = end;
    return true;
  }
  const char* p_;
};

}  // namespace

bool ReadHandoff(const char* json, HandoffSettings* out, std::string* error) {
  Value root;
  if (json == nullptr || !Parser(json).Parse(&root) || root.kind != Value::kObject) {
    *error = "MATE_GUARD_SETTINGS is internal to mate-guard and is not JSON";
    return false;
  }
  const Value* version = root.Get("version");
  const Value* s = root.Get("settings");
  if (version == nullptr || version->kind != Value::kNumber || version->n != 1 || s == nullptr || s->kind != Value::kObject) {
    *error = "MATE_GUARD_SETTINGS is not a version 1 handoff (a different mate-guard started this run?)";
    return false;
  }
  auto str = [&](const char* k) -> const std::string* {
    const Value* v = s->Get(k);
    return v && v->kind == Value::kString ? &v->s : nullptr;
  };
  auto flag = [&](const char* k, bool* into) {
    const Value* v = s->Get(k);
    if (v && v->kind == Value::kBool) *into = v->b;
  };
  if (const std::string* m = str("mode")) out->tail_mode = *m != "head";
  if (const Value* a = s->Get("alignment"); a && a->kind == Value::kNumber) out->alignment = static_cast<uint32_t>(a->n);
  if (const Value* q = s->Get("quarantineMaxCount"); q && q->kind == Value::kNumber)
    out->quarantine_max_count = static_cast<uint64_t>(q->n);
  flag("logAllocations", &out->log_allocations);
  flag("captureStacks", &out->capture_stacks);
  flag("trackLaunches", &out->track_launches);
  flag("launchBlocking", &out->launch_blocking);
  if (const Value* v = s->Get("syncOnFree"); v && v->kind == Value::kBool) out->sync_on_free = v->b ? 1 : 0;
  if (const std::string* q = str("cudaQuarantine")) out->strict_quarantine = *q == "strict";
  if (const std::string* d = str("reportDir")) out->report_dir = *d;
  const Value* owner = root.Get("ownerPid");
  out->owned = owner != nullptr && owner->kind == Value::kNumber;
  return true;
}

}  // namespace device
}  // namespace mate
