#include "report/format/event_schema.h"

#include <string.h>

#include "report/report_kind.h"

namespace mate {

namespace {

enum Want : unsigned {
  kNull = 1,
  kBool = 2,
  kNum = 4,
  kStr = 8,
  kArr = 16,
  kObj = 32,
};

const char* KindName(const JsonValue& v) {
  switch (v.kind) {
    case JsonValue::kNull:
      return "null";
    case JsonValue::kBool:
      return "a boolean";
    case JsonValue::kNumber:
      return "a number";
    case JsonValue::kString:
      return "a string";
    case JsonValue::kArray:
      return "an array";
    default:
      return "an object";
  }
}

std::string Wanted(unsigned want) {
  std::string out;
  const struct {
    unsigned bit;
    const char* name;
  } names[] = {{kNum, "a number"}, {kStr, "a string"},  {kBool, "a boolean"},
               {kArr, "an array"}, {kObj, "an object"}, {kNull, "null"}};
  for (const auto& n : names) {
    if (want & n.bit) out += (out.empty() ? "" : " or ") + std::string(n.name);
  }
  return out;
}

bool Is(const JsonValue& v, unsigned want) {
  switch (v.kind) {
    case JsonValue::kNull:
      return want & kNull;
    case JsonValue::kBool:
      return want & kBool;
    case JsonValue::kNumber:
      return want & kNum;
    case JsonValue::kString:
      return want & kStr;
    case JsonValue::kArray:
      return want & kArr;
    default:
      return want & kObj;
  }
}

struct Field {
  const char* name;
  unsigned want;  // absent fields are allowed (older events): a present one must have its type
};

class Checker {
 public:
  bool Fields(const JsonValue& obj, const std::string& at, std::initializer_list<Field> fields) {
    for (const Field& f : fields) {
      const JsonValue* v = Find(obj, f.name);
      if (v != nullptr && !Is(*v, f.want)) return Fail(at + f.name, *v, f.want);
    }
    return true;
  }
  bool Fail(const std::string& field, const JsonValue& v, unsigned want) {
    // As the TS reader words it (report/event-shape.ts): `allocation.size is a string, not a number`.
    if (problem.empty()) problem = field + " is " + KindName(v) + ", not " + Wanted(want);
    return false;
  }
  static const JsonValue* Find(const JsonValue& obj, const char* key) {
    for (size_t i = obj.fields.size(); i-- > 0;) {
      if (obj.fields[i].first == key) return &obj.fields[i].second;
    }
    return nullptr;
  }
  std::string problem;
};

bool Frames(Checker* c, const JsonValue& stack, const std::string& at) {
  if (!stack.IsObject()) return true;
  if (!c->Fields(stack, at + ".", {{"unwind", kStr | kNull}, {"frames", kArr}})) return false;
  const JsonValue& frames = stack["frames"];
  for (size_t i = 0; i < frames.items.size(); i++) {
    std::string f = at + ".frames[" + std::to_string(i) + "]";
    if (!frames.items[i].IsObject()) return c->Fail(f, frames.items[i], kObj);
    if (!c->Fields(frames.items[i], f + ".",
                   {{"module", kStr | kNull},
                    {"offset", kNum | kStr},
                    {"pc", kNum | kStr | kNull},
                    {"function", kStr | kNull},
                    {"file", kStr | kNull},
                    {"line", kNum | kNull},
                    {"inlined", kArr | kNull}})) {
      return false;
    }
  }
  return true;
}

bool Allocation(Checker* c, const JsonValue& a, const std::string& at) {
  if (!a.IsObject()) return true;
  const std::string p = at + ".";
  return c->Fields(a, p,
                   {{"id", kNum},
                    {"size", kNum},
                    {"start", kStr},
                    {"end", kStr},
                    {"mode", kStr},
                    {"alignment", kNum},
                    {"backend", kStr},
                    {"guardMethod", kStr},
                    {"slot", kObj},
                    {"allocTest", kStr | kNull},
                    {"allocStack", kStr | kNull},
                    {"allocFrames", kObj | kNull},
                    {"freed", kBool},
                    {"freedBy", kStr | kNull},
                    {"freeTest", kStr | kNull},
                    {"freeStack", kStr | kNull},
                    {"freeFrames", kObj | kNull}}) &&
         Frames(c, a["allocFrames"], p + "allocFrames") && Frames(c, a["freeFrames"], p + "freeFrames");
}

bool Launch(Checker* c, const JsonValue& l, const std::string& at) {
  if (!l.IsObject()) return c->Fail(at, l, kObj);
  if (!c->Fields(l, at + ".",
                 {{"number", kNum},
                  {"kernel", kStr | kNull},
                  {"stream", kStr | kNum},
                  {"site", kStr | kNull},
                  {"test", kStr | kNull},
                  {"faulted", kBool},
                  {"argCount", kNum},
                  {"args", kArr},
                  {"inputs", kArr | kNull}})) {
    return false;
  }
  const JsonValue& args = l["args"];
  for (size_t i = 0; i < args.items.size(); i++) {
    std::string a = at + ".args[" + std::to_string(i) + "]";
    if (!args.items[i].IsObject()) return c->Fail(a, args.items[i], kObj);
    if (!c->Fields(args.items[i], a + ".", {{"param", kNum}, {"offset", kNum}, {"value", kStr}, {"allocation", kObj}}))
      return false;
    if (!Allocation(c, args.items[i]["allocation"], a + ".allocation")) return false;
  }
  return true;
}

bool KnownKind(const std::string& kind) {
  static const char* const kinds[] = {
#define MATE_KIND_NAME(id, name) name,
      MATE_REPORT_KINDS(MATE_KIND_NAME)
#undef MATE_KIND_NAME
  };
  for (const char* k : kinds) {
    if (kind == k) return true;
  }
  return false;
}

}  // namespace

std::string EventProblem(const JsonValue& e) {
  if (!e.IsObject()) return std::string("not a mate-guard report (") + KindName(e) + ", not an object)";
  if (e["tool"].Str() != "mate-guard" || !e["kind"].IsString()) return "not a mate-guard report (no tool and kind)";
  if (!KnownKind(e["kind"].Str()))
    return "kind \"" + e["kind"].Str().substr(0, 64) + "\" is no report kind this version knows";
  Checker c;
  bool ok = c.Fields(e, "",
                     {{"version", kNum},
                      {"access", kStr | kNull},
                      {"address", kStr | kNull},
                      {"relation", kStr | kNull},
                      {"distance", kNum | kNull},
                      {"fatal", kBool},
                      {"signal", kNum | kNull},
                      {"pid", kNum},
                      {"test", kStr | kNull},
                      {"runtime", kStr | kNull},
                      {"machineryDirs", kArr},
                      {"machineryPackages", kArr},
                      {"accessStack", kObj | kNull},
                      {"damage", kObj | kNull},
                      {"backend", kStr},
                      {"allocation", kObj | kNull},
                      {"device", kObj},
                      {"candidates", kObj},
                      {"launches", kObj},
                      {"memory", kObj},
                      {"streams", kObj},
                      {"death", kObj},
                      {"process", kObj},
                      {"rerun", kObj},
                      {"suppressed", kObj},
                      {"text", kStr},
                      {"file", kStr},
                      {"nativeHeap", kObj},
                      {"delivered", kStr}}) &&
            Frames(&c, e["accessStack"], "accessStack") && Allocation(&c, e["allocation"], "allocation");
  for (const char* list : {"machineryDirs", "machineryPackages"}) {
    const JsonValue& items = e[list];
    for (size_t i = 0; ok && i < items.items.size(); i++) {
      if (!items.items[i].IsString())
        ok = c.Fail(std::string(list) + "[" + std::to_string(i) + "]", items.items[i], kStr);
    }
  }
  if (ok && e["damage"].IsObject()) {
    for (const char* side : {"before", "after"}) {
      const JsonValue& s = e["damage"][side];
      std::string at = std::string("damage.") + side;
      if (!s.IsObject()) {
        ok = c.Fail(at, s, kObj);
        break;
      }
      if (!(ok = c.Fields(s, at + ".", {{"bytes", kNum}, {"nearest", kNum}, {"farthest", kNum}}))) break;
    }
  }
  if (ok && e["launches"].IsObject()) {
    ok = c.Fields(e["launches"], "launches.",
                  {{"tracking", kBool}, {"off", kStr | kNull}, {"total", kNum}, {"list", kArr}});
    const JsonValue& list = e["launches"]["list"];
    for (size_t i = 0; ok && i < list.items.size(); i++)
      ok = Launch(&c, list.items[i], "launches.list[" + std::to_string(i) + "]");
  }
  if (ok && e["candidates"].IsObject()) {
    for (const char* which : {"live", "freed"}) {
      const JsonValue& xs = e["candidates"][which];
      std::string at = std::string("candidates.") + which;
      if (!xs.IsNull() && !xs.IsArray()) {
        ok = c.Fail(at, xs, kArr);
        break;
      }
      for (size_t i = 0; ok && i < xs.items.size(); i++) {
        std::string item = at + "[" + std::to_string(i) + "]";
        ok = xs.items[i].IsObject() ? Allocation(&c, xs.items[i], item) : c.Fail(item, xs.items[i], kObj);
      }
      if (!ok) break;
    }
  }
  if (ok && e["streams"].IsObject() && e["streams"]["useLaunch"].IsObject())
    ok = Launch(&c, e["streams"]["useLaunch"], "streams.useLaunch");
  if (ok && e["death"].IsObject()) {
    ok = c.Fields(e["death"], "death.",
                  {{"signal", kNum},
                   {"code", kNum},
                   {"sender", kNum | kNull},
                   {"address", kStr | kNull},
                   {"access", kStr | kNull},
                   {"abortMessage", kStr | kNull},
                   {"exception", kObj | kNull},
                   {"guardedFree", kObj | kNull},
                   {"misaligned", kObj | kNull}});
  }
  if (ok && e["memory"].IsObject()) {
    for (const auto& f : e["memory"].fields) {
      if (!f.second.IsNumber()) {
        ok = c.Fail("memory." + f.first, f.second, kNum);
        break;
      }
    }
  }
  if (ok && e["suppressed"].IsObject())
    ok = c.Fields(e["suppressed"], "suppressed.", {{"file", kStr}, {"line", kNum}, {"rule", kStr}});
  return c.problem;
}

std::string EventTextProblem(const std::string& json) {
  JsonValue e;
  std::string error;
  JsonLimits limits;
  if (json.size() > limits.max_bytes)
    return std::to_string(json.size()) + " bytes, more than any report (" + std::to_string(limits.max_bytes) +
           " at most)";
  if (!ParseJson(json, &e, &error, limits)) {
    if (error.rfind("nesting deeper than", 0) == 0)
      return "nested more than " + std::to_string(limits.max_depth) + " levels deep";
    return "not JSON (" + error + ")";
  }
  return EventProblem(e);
}

}  // namespace mate
