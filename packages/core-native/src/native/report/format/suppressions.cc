#include "report/format/suppressions.h"

#include "report/format/escape.h"
#include "report/format/js_frames.h"
#include "report/format/native_frames.h"
#include "report/format/text_parts.h"
#include "report/report_kind.h"

namespace mate {

namespace {

enum Field { kFunction, kModule, kAccess, kAllocation, kTest, kFieldCount };
const char* const kFieldNames[kFieldCount] = {"function", "module", "access", "allocation", "test"};

bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// `*` any characters, `?` one character (a UTF-8 sequence), the rest literally; the whole string.
bool Glob(const char* p, const char* s) {
  const char* star = nullptr;
  const char* retry = nullptr;
  while (*s) {
    if (*p == '*') {
      star = p++;
      retry = s;
    } else if (*p == '?') {
      p++;
      s++;
      while ((*s & 0xC0) == 0x80) s++;
    } else if (*p != '\0' && *p == *s) {
      p++;
      s++;
    } else if (star != nullptr) {
      p = star + 1;
      s = ++retry;
    } else {
      return false;
    }
  }
  while (*p == '*') p++;
  return *p == '\0';
}

bool AnyMatches(const SuppressionRule& r, Field f, const std::vector<std::string>& values) {
  if (!r.given[f]) return true;
  for (const std::string& v : values) {
    if (Glob(r.globs[f].c_str(), v.c_str())) return true;
  }
  return false;
}

struct Candidates {
  std::vector<std::string> functions, modules, parts;
};

// `at fn (file:line:col)` / `at file:line:col` -> fn, file, line, col and the whole frame.
void AddJsFrame(const std::string& raw, Candidates* c) {
  std::string whole = Trim(raw).substr(2);
  size_t k = 0;
  while (k < whole.size() && IsWs(whole[k])) k++;
  whole = whole.substr(k);
  std::string fn, rest = whole;
  size_t open = whole.find(" (");
  if (open != std::string::npos) {
    fn = whole.substr(0, open);
    rest = whole.substr(open + 2);
  }
  if (!rest.empty() && rest.back() == ')') rest.pop_back();
  // Up to two `:digits` from the end: line, then column.
  std::string nums[2];
  int count = 0;
  for (; count < 2; count++) {
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon + 1 == rest.size()) break;
    bool digits = true;
    for (size_t i = colon + 1; i < rest.size(); i++) digits = digits && rest[i] >= '0' && rest[i] <= '9';
    if (!digits) break;
    nums[count] = rest.substr(colon + 1);
    rest.resize(colon);
  }
  std::string line = count == 2 ? nums[1] : count == 1 ? nums[0] : "";
  std::string col = count == 2 ? nums[0] : "";
  std::string file = rest.compare(0, 7, "file://") == 0 ? rest.substr(7) : rest;
  if (!fn.empty()) {
    c->functions.push_back(fn);
    std::string bare =
        fn.compare(0, 6, "async ") == 0 || fn.compare(0, 4, "new ") == 0 ? fn.substr(fn[0] == 'a' ? 6 : 4) : fn;
    c->functions.push_back(bare);
  }
  c->parts.push_back(whole);
  if (!fn.empty()) c->parts.push_back(fn);
  if (!file.empty()) {
    c->parts.push_back(file);
    if (!line.empty()) c->parts.push_back(file + ":" + line);
    if (!col.empty()) c->parts.push_back(file + ":" + line + ":" + col);
  }
}

void AddJsStack(const JsonValue& stack, Candidates* c) {
  const std::string& text = stack.Str();
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string l = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (Trim(l).compare(0, 3, "at ") == 0) AddJsFrame(l, c);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
}

void AddNames(const JsonValue& fn, std::vector<std::string>* to) {
  if (!fn.Truthy() || !fn.IsString()) return;
  to->push_back(fn.text);
  to->push_back(ShortFunctionName(fn.text));
}

void AddNativeStack(const JsonValue& stack, Candidates* c) {
  for (const JsonValue& f : stack["frames"].items) {
    std::vector<std::string> names;
    AddNames(f["function"], &names);
    for (const JsonValue& in : f["inlined"].items) AddNames(in["function"], &names);
    c->functions.insert(c->functions.end(), names.begin(), names.end());
    c->parts.insert(c->parts.end(), names.begin(), names.end());
    if (f["module"].Truthy()) {
      const std::string& m = f["module"].Str();
      c->modules.push_back(m);
      c->modules.push_back(Basename(m));
      c->parts.push_back(m);
      c->parts.push_back(Basename(m));
    }
    if (f["file"].Truthy()) {
      const std::string& file = f["file"].Str();
      c->parts.push_back(file);
      c->parts.push_back(file + ":" + (f["line"].IsNull() ? std::string("0") : NumText(f["line"])));
    }
  }
}

bool Matches(const SuppressionRule& r, const JsonValue& e) {
  if (r.kind != "*" && r.kind != e["kind"].Str()) return false;
  Candidates access, alloc;
  AddNativeStack(e["accessStack"], &access);
  // The allocation's stack: JS frames, or native ones (native-heap allocations).
  const JsonValue& a = e["allocation"];
  AddJsStack(a["allocStack"], &alloc);
  AddNativeStack(a["allocFrames"], &alloc);
  std::vector<std::string> functions = access.functions;
  functions.insert(functions.end(), alloc.functions.begin(), alloc.functions.end());
  const JsonValue& test = !e["test"].IsNull() ? e["test"] : a["allocTest"];
  return AnyMatches(r, kFunction, functions) && AnyMatches(r, kModule, access.modules) &&
         AnyMatches(r, kAccess, access.parts) && AnyMatches(r, kAllocation, alloc.parts) &&
         (!r.given[kTest] || (test.IsString() && Glob(r.globs[kTest].c_str(), test.text.c_str())));
}

std::string KindList() {
  std::string out;
#define MATE_KIND_NAME(id, name) out += std::string(out.empty() ? "" : ", ") + name;
  MATE_REPORT_KINDS(MATE_KIND_NAME)
#undef MATE_KIND_NAME
  return out;
}

bool KnownKind(const std::string& kind) {
#define MATE_KIND_IS(id, name) \
  if (kind == name) return true;
  MATE_REPORT_KINDS(MATE_KIND_IS)
#undef MATE_KIND_IS
  return false;
}

// `key=value` tokens of one rule; a value is a bare word or a JSON string. false with `why`.
bool Tokens(const std::string& rest, std::vector<std::pair<std::string, std::string>>* out, std::string* why) {
  size_t i = 0;
  while (i < rest.size()) {
    if (IsWs(rest[i])) {
      i++;
      continue;
    }
    size_t k = i;
    while (k < rest.size() &&
           ((rest[k] >= 'A' && rest[k] <= 'Z') || (rest[k] >= 'a' && rest[k] <= 'z') || rest[k] == '-'))
      k++;
    if (k == i || k >= rest.size() || rest[k] != '=') {
      size_t end = i;
      while (end < rest.size() && !IsWs(rest[end])) end++;
      *why = "expected field=glob at " + JsonQuote(rest.substr(i, end - i));
      return false;
    }
    std::string name = rest.substr(i, k - i);
    i = k + 1;
    std::string value;
    if (i < rest.size() && rest[i] == '"') {
      size_t j = i + 1;
      while (j < rest.size() && rest[j] != '"') j += rest[j] == '\\' && j + 1 < rest.size() ? 2 : 1;
      if (j >= rest.size()) {
        *why = "unterminated quoted value for " + name + "=";
        return false;
      }
      JsonValue v;
      std::string error;
      std::string quoted = rest.substr(i, j + 1 - i);
      if (!ParseJson(quoted, &v, &error) || !v.IsString()) {
        *why = "bad quoted value for " + name + "=: " + quoted;
        return false;
      }
      value = v.text;
      i = j + 1;
    } else {
      size_t end = i;
      while (end < rest.size() && !IsWs(rest[end])) end++;
      value = rest.substr(i, end - i);
      i = end;
    }
    if (value.empty()) {
      *why = "empty value for " + name + "=";
      return false;
    }
    out->push_back({name, value});
  }
  return true;
}

}  // namespace

bool ParseSuppressions(const std::string& text, const std::string& file, std::vector<SuppressionRule>* rules,
                       std::string* error) {
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string raw = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    number++;
    std::string body = Trim(raw);
    while (!body.empty() && IsWs(body.back())) body.pop_back();
    if (!body.empty() && body[0] != '#') {
      std::string why;
      size_t cut = 0;
      while (cut < body.size() && !IsWs(body[cut])) cut++;
      SuppressionRule rule;
      rule.kind = body.substr(0, cut);
      std::vector<std::pair<std::string, std::string>> tokens;
      if (rule.kind != "*" && !KnownKind(rule.kind)) {
        why = "unknown kind " + JsonQuote(rule.kind) + "; kinds: " + KindList() + " or *";
      } else if (Tokens(body.substr(cut), &tokens, &why)) {
        for (const auto& t : tokens) {
          int f = -1;
          for (int k = 0; k < kFieldCount; k++) {
            if (t.first == kFieldNames[k]) f = k;
          }
          if (f < 0) {
            why = "unknown field " + JsonQuote(t.first);
            break;
          }
          if (rule.given[f]) {
            why = t.first + "= given twice";
            break;
          }
          rule.given[f] = true;
          rule.globs[f] = t.second;
        }
        if (why.empty() && tokens.empty()) why = "no field: a suppression names at least a frame or a test";
      }
      if (!why.empty()) {
        *error = file + ":" + std::to_string(number) + ": " + why + " (in " + JsonQuote(body) +
                 "); a line is: <kind|*> <field>=<glob> ..., fields function, module, access, allocation, test";
        return false;
      }
      rule.file = file;
      rule.line = number;
      rule.text = body;
      rules->push_back(rule);
    }
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return true;
}

JsonValue MatchSuppression(const JsonValue& event, const std::vector<SuppressionRule>& rules) {
  for (const SuppressionRule& r : rules) {
    if (!Matches(r, event)) continue;
    JsonValue v;
    v.kind = JsonValue::kObject;
    v.Field("file") = JsonValue::String(r.file);
    v.Field("line") = JsonValue::Number(r.line);
    v.Field("rule") = JsonValue::String(r.text);
    return v;
  }
  return JsonValue();
}

}  // namespace mate
