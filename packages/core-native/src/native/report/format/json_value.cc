#include "report/format/json_value.h"

#include "report/format/escape.h"

#include <stdlib.h>
#include <string.h>

namespace mate {

namespace {

const JsonValue kNullValue;

class Parser {
 public:
  Parser(const std::string& text, const JsonLimits& limits) : s_(text), limits_(limits) {}

  bool Parse(JsonValue* out, std::string* error) {
    if (s_.size() > limits_.max_bytes) {
      *error = std::to_string(s_.size()) + " bytes, more than the " + std::to_string(limits_.max_bytes) +
               " an event may have";
      return false;
    }
    if (!Value(out, 0) || (Space(), pos_ != s_.size())) {
      if (error_.empty()) error_ = pos_ >= s_.size() ? "cut short" : "unexpected text";
      *error = error_ + " at byte " + std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) pos_++;
  }
  bool Eat(char c) {
    Space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      pos_++;
      return true;
    }
    return false;
  }
  bool Literal(const char* word) {
    size_t n = strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }
  static void Utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool Hex4(uint32_t* v) {
    if (pos_ + 4 > s_.size()) return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
      char c = s_[pos_++];
      *v <<= 4;
      if (c >= '0' && c <= '9') *v |= c - '0';
      else if (c >= 'a' && c <= 'f') *v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') *v |= c - 'A' + 10;
      else return false;
    }
    return true;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= s_.size()) return false;
      char e = s_[pos_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
            size_t at = pos_;
            pos_ += 2;
            uint32_t lo;
            if (Hex4(&lo) && lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else pos_ = at;
          }
          // A lone surrogate has no UTF-8 form: shown as the replacement character.
          if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
          Utf8(cp, out);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool Number(JsonValue* v) {
    size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') pos_++;
    while (pos_ < s_.size() && strchr("0123456789.eE+-", s_[pos_]) != nullptr) pos_++;
    if (pos_ == start) return false;
    v->kind = JsonValue::kNumber;
    v->text = s_.substr(start, pos_ - start);
    char* end = nullptr;
    v->number = strtod(v->text.c_str(), &end);
    return end != nullptr && *end == '\0';
  }
  bool Value(JsonValue* v, int depth) {
    if (depth > limits_.max_depth) {
      error_ = "nesting deeper than " + std::to_string(limits_.max_depth) + " levels";
      return false;
    }
    Space();
    if (pos_ >= s_.size()) return false;
    char c = s_[pos_];
    if (c == '{') {
      pos_++;
      v->kind = JsonValue::kObject;
      if (Eat('}')) return true;
      do {
        std::string key;
        Space();
        if (!String(&key) || !Eat(':')) return false;
        v->fields.emplace_back(std::move(key), JsonValue());
        if (!Value(&v->fields.back().second, depth + 1)) return false;
      } while (Eat(','));
      return Eat('}');
    }
    if (c == '[') {
      pos_++;
      v->kind = JsonValue::kArray;
      if (Eat(']')) return true;
      do {
        v->items.emplace_back();
        if (!Value(&v->items.back(), depth + 1)) return false;
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '"') {
      v->kind = JsonValue::kString;
      return String(&v->text);
    }
    if (Literal("true")) {
      v->kind = JsonValue::kBool;
      v->boolean = true;
      return true;
    }
    if (Literal("false")) {
      v->kind = JsonValue::kBool;
      return true;
    }
    if (Literal("null")) return true;
    return Number(v);
  }

  const std::string& s_;
  const JsonLimits& limits_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const JsonValue& JsonValue::operator[](const char* key) const {
  if (kind != kObject) return kNullValue;
  // The last of a repeated key wins, as in JSON.parse.
  for (size_t i = fields.size(); i-- > 0;) {
    if (fields[i].first == key) return fields[i].second;
  }
  return kNullValue;
}

const JsonValue& JsonValue::Null() { return kNullValue; }

const JsonValue& JsonValue::At(size_t i) const { return kind == kArray && i < items.size() ? items[i] : kNullValue; }

bool JsonValue::Truthy() const {
  switch (kind) {
    case kNull:
      return false;
    case kBool:
      return boolean;
    case kNumber:
      return number != 0;
    case kString:
      return !text.empty();
    default:
      return true;
  }
}

const std::string& JsonValue::Str() const {
  static const std::string empty;
  return kind == kString || kind == kNumber ? text : empty;
}

uint64_t JsonValue::U64() const {
  if (kind == kNumber) return number < 0 ? 0 : static_cast<uint64_t>(number);
  if (kind != kString) return 0;
  return strtoull(text.c_str(), nullptr, 0);
}

JsonValue& JsonValue::Field(const std::string& key) {
  for (size_t i = fields.size(); i-- > 0;) {
    if (fields[i].first == key) return fields[i].second;
  }
  fields.emplace_back(key, JsonValue());
  return fields.back().second;
}

JsonValue JsonValue::Object() {
  JsonValue v;
  v.kind = kObject;
  return v;
}

JsonValue JsonValue::Array() {
  JsonValue v;
  v.kind = kArray;
  return v;
}

JsonValue JsonValue::String(const std::string& s) {
  JsonValue v;
  v.kind = kString;
  v.text = s;
  return v;
}

JsonValue JsonValue::Number(long long n) {
  JsonValue v;
  v.kind = kNumber;
  v.number = static_cast<double>(n);
  v.text = std::to_string(n);
  return v;
}

namespace {

void Write(const JsonValue& v, std::string* out) {
  switch (v.kind) {
    case JsonValue::kNull:
      *out += "null";
      break;
    case JsonValue::kBool:
      *out += v.boolean ? "true" : "false";
      break;
    case JsonValue::kNumber:
      *out += v.text;
      break;
    case JsonValue::kString:
      *out += JsonQuote(v.text);
      break;
    case JsonValue::kArray:
      *out += '[';
      for (size_t i = 0; i < v.items.size(); i++) {
        if (i) *out += ',';
        Write(v.items[i], out);
      }
      *out += ']';
      break;
    case JsonValue::kObject:
      *out += '{';
      for (size_t i = 0; i < v.fields.size(); i++) {
        if (i) *out += ',';
        *out += JsonQuote(v.fields[i].first) + ":";
        Write(v.fields[i].second, out);
      }
      *out += '}';
      break;
  }
}

}  // namespace

std::string WriteJson(const JsonValue& v) {
  std::string out;
  Write(v, &out);
  return out;
}

bool ParseJson(const std::string& text, JsonValue* out, std::string* error, const JsonLimits& limits) {
  *out = JsonValue();
  return Parser(text, limits).Parse(out, error);
}

}  // namespace mate
