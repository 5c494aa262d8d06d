#ifndef MATE_REPORT_FORMAT_JSON_VALUE_H_
#define MATE_REPORT_FORMAT_JSON_VALUE_H_

// A report event as read back for formatting: a small JSON tree. Events
// are untrusted data (a report folder anyone could write), so the reader
// bounds the text's size and the nesting depth, and the accessors return a
// null value for a missing or mistyped field instead of failing.
#include <stddef.h>
#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

namespace mate {

struct JsonValue {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = kNull;
  bool boolean = false;
  double number = 0;
  std::string text;  // a string's value, or a number as written (integers print as JS prints them)
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> fields;

  // The field `key` of an object; a null value when absent or not an object.
  const JsonValue& operator[](const char* key) const;
  const JsonValue& At(size_t i) const;
  bool IsNull() const { return kind == kNull; }
  bool IsString() const { return kind == kString; }
  bool IsNumber() const { return kind == kNumber; }
  bool IsObject() const { return kind == kObject; }
  bool IsArray() const { return kind == kArray; }
  bool Truthy() const;
  // A string's text, or "" (a number's text for numbers).
  const std::string& Str() const;
  double Num(double fallback = 0) const { return kind == kNumber ? number : fallback; }
  // A hex (`0x7f...`) or decimal string, or a number, as an unsigned 64-bit value.
  uint64_t U64() const;
  bool Has(const char* key) const { return !(*this)[key].IsNull(); }
  static const JsonValue& Null();

  // Building and changing a tree (the crash printer adds symbolized frames).
  JsonValue& Field(const std::string& key);  // this object's field, added (null) when absent
  static JsonValue String(const std::string& s);
  static JsonValue Object();  // empty
  static JsonValue Array();   // empty
  static JsonValue Number(long long n);
};

// The tree as compact JSON (numbers as they were written).
std::string WriteJson(const JsonValue& v);

struct JsonLimits {
  size_t max_bytes = 16u << 20;  // an event bigger than this is no event a writer makes
  int max_depth = 32;            // the deepest real event nests about 8 levels
};

// False, with `error` (`nesting deeper than 32 levels at byte 123`), when
// `text` is not one JSON value within the limits.
bool ParseJson(const std::string& text, JsonValue* out, std::string* error, const JsonLimits& limits = JsonLimits());

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_JSON_VALUE_H_
