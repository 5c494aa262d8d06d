#include "report/format/format_sarif.h"

#include <stdio.h>

#include "report/format/escape.h"
#include "report/format/format_ci.h"
#include "report/format/text_parts.h"
#include "report/report_kind.h"

namespace mate {

namespace {

const char kSrcRoot[] = "%SRCROOT%";

struct Rule {
  const char* kind;
  const char* short_text;
  const char* full_text;
};

// In the order of the one list of kinds (report_kind.h): ruleIndex is a kind's place in it.
const Rule kRules[] = {
    {"heap-buffer-overflow", "Access past the end of an allocation",
     "Native code read or wrote past the end of a guarded allocation; the guard page after it faulted at the first bad "
     "byte."},
    {"heap-buffer-underflow", "Access before the start of an allocation",
     "Native code read or wrote before the start of a guarded allocation; the guard page before it faulted at the "
     "first bad byte."},
    {"heap-use-after-free", "Access to freed memory",
     "Native code read or wrote an allocation after it was freed (explicitly, or by the garbage collector while native "
     "code still held a pointer into it)."},
    {"canary-corruption", "Bytes beside an allocation were overwritten",
     "The canary bytes between an allocation and its guard page were damaged: a write went out of bounds without "
     "reaching the guard page. Found when the allocation was checked or freed, away from the write; the rerun in the "
     "configuration that makes it fault names the write."},
    {"invalid-free", "Free of a pointer malloc/new did not return",
     "free/delete was given a pointer that is not the start of a live allocation; mate-guard ignored the free."},
    {"double-free", "Memory freed twice", "An allocation was freed a second time; mate-guard ignored the second free."},
    {"cross-stream-free", "CUDA memory freed while another stream used it",
     "A device allocation was freed on one stream while a kernel on another stream used it, and the free was not "
     "ordered after that use."},
    {"illegal-address", "CUDA illegal memory access",
     "A CUDA kernel accessed memory it must not (past a guarded allocation, or into a freed one); the GPU reported "
     "CUDA_ERROR_ILLEGAL_ADDRESS."},
    {"device-assert", "CUDA device-side assert",
     "A CUDA kernel's own assert failed (an index or bounds check, as torch.compile's generated kernels make); the GPU "
     "reported CUDA_ERROR_ASSERT and the context is lost."},
    {"device-fault", "CUDA kernel exception",
     "A CUDA kernel raised an exception other than an illegal address or an assert (misaligned address, illegal "
     "instruction, launch failure); the context is lost."},
    {"wild-access", "Access to guarded memory no allocation owns",
     "Native code accessed guarded address space that belongs to no allocation: a wild or stale pointer."},
    {"deadly-signal", "The process died of a signal",
     "A guarded process died of a signal that was no guard fault (a crash outside guarded memory, an abort from a "
     "failed check or a damaged heap)."},
    {"uncaught-exception", "An uncaught C++ exception ended the process",
     "A C++ exception left native code uncaught: std::terminate ended the process."},
    {"out-of-memory", "The GPU ran out of memory under the guard",
     "A guarded device allocation failed for want of GPU memory after the guard gave back what it keeps; the caller "
     "got its out-of-memory error. Not a memory bug: the report gives the guard's accounting."},
};
static_assert(sizeof(kRules) / sizeof(kRules[0]) == kReportKindCount, "a SARIF rule for every report kind");

JsonValue Str(const std::string& s) { return JsonValue::String(s); }

JsonValue Bool(bool b) {
  JsonValue v;
  v.kind = JsonValue::kBool;
  v.boolean = b;
  return v;
}

JsonValue Text(const std::string& s) {
  JsonValue v = JsonValue::Object();
  v.Field("text") = Str(s);
  return v;
}

// `a dir/x.cc` -> `a%20dir/x.cc`: encodeURIComponent per segment.
std::string UriOf(const std::string& p) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : p) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '-' ||
                c == '_' || c == '.' || c == '!' || c == '~' || c == '*' || c == '\'' || c == '(' || c == ')';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

void Region(JsonValue* into, const JsonValue& line, const JsonValue& column) {
  if (!line.Truthy()) return;
  JsonValue r = JsonValue::Object();
  r.Field("startLine") = line;
  if (column.Truthy()) r.Field("startColumn") = column;
  into->Field("region") = r;
}

void Logical(JsonValue* into, const JsonValue& fn) {
  if (!fn.Truthy()) return;
  JsonValue l = JsonValue::Object();
  l.Field("fullyQualifiedName") = fn;
  l.Field("kind") = Str("function");
  JsonValue list = JsonValue::Array();
  list.items.push_back(l);
  into->Field("logicalLocations") = list;
}

JsonValue SiteLocation(const JsonValue& site, const std::string& message, int id) {
  JsonValue loc = JsonValue::Object();
  if (id > 0) loc.Field("id") = JsonValue::Number(id);
  JsonValue physical = JsonValue::Object();
  JsonValue artifact = JsonValue::Object();
  artifact.Field("uri") = Str(UriOf(site["path"].Str()));
  artifact.Field("uriBaseId") = Str(kSrcRoot);
  physical.Field("artifactLocation") = artifact;
  Region(&physical, site["line"], site["column"]);
  loc.Field("physicalLocation") = physical;
  Logical(&loc, site["function"]);
  if (!message.empty()) loc.Field("message") = Text(message);
  return loc;
}

JsonValue StackFrame(const JsonValue& f) {
  JsonValue frame = JsonValue::Object();
  JsonValue location = JsonValue::Object();
  if (f["file"].Truthy()) {
    JsonValue physical = JsonValue::Object();
    JsonValue artifact = JsonValue::Object();
    if (f["repoPath"].Truthy()) {
      artifact.Field("uri") = Str(UriOf(f["repoPath"].Str()));
      artifact.Field("uriBaseId") = Str(kSrcRoot);
    } else if (f["fileUri"].Truthy()) {
      artifact.Field("uri") = f["fileUri"];
    } else {
      artifact.Field("uri") = Str(UriOf(f["file"].Str()));
    }
    physical.Field("artifactLocation") = artifact;
    Region(&physical, f["line"], f["column"]);
    location.Field("physicalLocation") = physical;
  }
  Logical(&location, f["function"]);
  frame.Field("location") = location;
  if (f["module"].Truthy()) {
    frame.Field("module") = Str(Basename(f["module"].Str()));
    if (f["offset"].IsNumber()) {
      JsonValue props = JsonValue::Object();
      props.Field("moduleOffset") = Str(Hex(f["offset"].U64()));
      frame.Field("properties") = props;
    }
  }
  return frame;
}

bool SameSite(const JsonValue& a, const JsonValue& b) {
  return a.IsObject() && b.IsObject() && a["path"].Str() == b["path"].Str() &&
         NumText(a["line"]) == NumText(b["line"]) && a["line"].IsNull() == b["line"].IsNull();
}

int KindIndex(const std::string& kind) {
  for (int i = 0; i < kReportKindCount; i++) {
    if (kind == kRules[i].kind) return i;
  }
  return -1;
}

JsonValue Result(const JsonValue& r, const FormatOptions& o) {
  const JsonValue& e = r["event"];
  const JsonValue& sites = r["sites"];
  const JsonValue& primary = sites["primary"];
  std::string text;
  for (const std::string& l : PlainLines(e, o)) text += (text.empty() ? "" : "\n") + l;
  JsonValue related = JsonValue::Array();
  auto relate = [&](const JsonValue& site, const std::string& message) {
    if (site.IsObject() && !SameSite(site, primary))
      related.items.push_back(SiteLocation(site, message, static_cast<int>(related.items.size()) + 1));
  };
  relate(sites["allocation"], "allocated here");
  relate(sites["free"], e["kind"].Str() == "double-free" ? "first freed here" : "freed here");
  if (sites["test"].IsObject()) {
    related.items.push_back(SiteLocation(sites["test"], "test: " + sites["test"]["name"].Str(),
                                         static_cast<int>(related.items.size()) + 1));
  }
  JsonValue out = JsonValue::Object();
  out.Field("ruleId") = e["kind"];
  out.Field("ruleIndex") = JsonValue::Number(KindIndex(e["kind"].Str()));
  // An out-of-memory is the program's failure, not a memory bug.
  out.Field("level") = Str(e["kind"].Str() == "out-of-memory" ? "note" : "error");
  out.Field("message") = Text(text);
  if (primary.IsObject()) {
    JsonValue locations = JsonValue::Array();
    locations.items.push_back(SiteLocation(primary, "", 0));
    out.Field("locations") = locations;
  }
  if (!related.items.empty()) out.Field("relatedLocations") = related;
  if (!sites["stacks"].items.empty()) {
    JsonValue stacks = JsonValue::Array();
    for (const JsonValue& st : sites["stacks"].items) {
      JsonValue stack = JsonValue::Object();
      stack.Field("message") = Text(st["label"].Str());
      JsonValue frames = JsonValue::Array();
      for (const JsonValue& f : st["frames"].items) frames.items.push_back(StackFrame(f));
      stack.Field("frames") = frames;
      stacks.items.push_back(stack);
    }
    out.Field("stacks") = stacks;
  }
  JsonValue fp = JsonValue::Object();
  fp.Field("mateGuard/v1") = r["fingerprint"];
  out.Field("fingerprints") = fp;
  JsonValue partial = JsonValue::Object();
  partial.Field("mateGuardBug/v1") = r["fingerprint"];
  out.Field("partialFingerprints") = partial;
  const JsonValue& s = e["suppressed"];
  if (s.IsObject()) {
    JsonValue sup = JsonValue::Object();
    sup.Field("kind") = Str("external");
    sup.Field("status") = Str("accepted");
    sup.Field("justification") =
        Str("suppressed by " + s["file"].Str() + ":" + NumText(s["line"]) + " (" + s["rule"].Str() + ")");
    JsonValue list = JsonValue::Array();
    list.items.push_back(sup);
    out.Field("suppressions") = list;
  }
  JsonValue props = JsonValue::Object();
  if (e["test"].Truthy()) props.Field("test") = e["test"];
  props.Field("fatal") = Bool(e["fatal"].Truthy());
  out.Field("properties") = props;
  return out;
}

JsonValue Rules() {
  JsonValue rules = JsonValue::Array();
  for (const Rule& r : kRules) {
    JsonValue rule = JsonValue::Object();
    rule.Field("id") = Str(r.kind);
    // heap-buffer-overflow -> HeapBufferOverflow
    std::string name;
    bool up = true;
    for (const char* c = r.kind; *c; c++) {
      if (*c == '-') {
        up = true;
        continue;
      }
      name += up && *c >= 'a' && *c <= 'z' ? static_cast<char>(*c - 32) : *c;
      up = false;
    }
    rule.Field("name") = Str(name);
    rule.Field("shortDescription") = Text(r.short_text);
    rule.Field("fullDescription") = Text(r.full_text);
    JsonValue config = JsonValue::Object();
    config.Field("level") = Str("error");
    rule.Field("defaultConfiguration") = config;
    JsonValue props = JsonValue::Object();
    JsonValue tags = JsonValue::Array();
    tags.items.push_back(Str("memory-safety"));
    tags.items.push_back(Str("native"));
    props.Field("tags") = tags;
    props.Field("precision") = Str("very-high");
    props.Field("problem.severity") = Str("error");
    rule.Field("properties") = props;
    rules.items.push_back(rule);
  }
  return rules;
}

void Pretty(const JsonValue& v, int indent, std::string* out) {
  std::string pad(static_cast<size_t>(indent) * 2, ' ');
  std::string inner(static_cast<size_t>(indent + 1) * 2, ' ');
  if (v.kind == JsonValue::kArray) {
    if (v.items.empty()) {
      *out += "[]";
      return;
    }
    *out += "[\n";
    for (size_t i = 0; i < v.items.size(); i++) {
      *out += inner;
      Pretty(v.items[i], indent + 1, out);
      *out += i + 1 < v.items.size() ? ",\n" : "\n";
    }
    *out += pad + "]";
  } else if (v.kind == JsonValue::kObject) {
    if (v.fields.empty()) {
      *out += "{}";
      return;
    }
    *out += "{\n";
    for (size_t i = 0; i < v.fields.size(); i++) {
      *out += inner + JsonQuote(v.fields[i].first) + ": ";
      Pretty(v.fields[i].second, indent + 1, out);
      *out += i + 1 < v.fields.size() ? ",\n" : "\n";
    }
    *out += pad + "}";
  } else {
    *out += WriteJson(v);
  }
}

}  // namespace

std::string WriteJsonPretty(const JsonValue& v) {
  std::string out;
  Pretty(v, 0, &out);
  return out;
}

std::string SarifLog(const JsonValue& input, const FormatOptions& o) {
  JsonValue driver = JsonValue::Object();
  driver.Field("name") = Str("mate-guard");
  driver.Field("semanticVersion") = input["toolVersion"];
  driver.Field("rules") = Rules();
  JsonValue tool = JsonValue::Object();
  tool.Field("driver") = driver;
  JsonValue run = JsonValue::Object();
  run.Field("tool") = tool;
  JsonValue base = JsonValue::Object();
  JsonValue root = JsonValue::Object();
  root.Field("uri") = input["srcroot"];
  base.Field(kSrcRoot) = root;
  run.Field("originalUriBaseIds") = base;
  run.Field("columnKind") = Str("utf16CodeUnits");
  const JsonValue& unreadable = input["unreadable"];
  JsonValue invocation = JsonValue::Object();
  invocation.Field("executionSuccessful") = Bool(unreadable.items.empty());
  if (!unreadable.items.empty()) {
    JsonValue notes = JsonValue::Array();
    for (const JsonValue& u : unreadable.items) {
      bool report = u["holds"].Str() == "report";
      JsonValue note = JsonValue::Object();
      note.Field("level") = Str(report ? "error" : "warning");
      note.Field("message") =
          Text(report ? "cannot read report file: " + u["why"].Str() + "; counted as a violation that could not be read"
                      : "cannot read counters file: " + u["why"].Str());
      JsonValue artifact = JsonValue::Object();
      artifact.Field("uri") = u["uri"];
      JsonValue physical = JsonValue::Object();
      physical.Field("artifactLocation") = artifact;
      JsonValue location = JsonValue::Object();
      location.Field("physicalLocation") = physical;
      JsonValue locations = JsonValue::Array();
      locations.items.push_back(location);
      note.Field("locations") = locations;
      notes.items.push_back(note);
    }
    invocation.Field("toolExecutionNotifications") = notes;
  }
  JsonValue invocations = JsonValue::Array();
  invocations.items.push_back(invocation);
  run.Field("invocations") = invocations;
  JsonValue results = JsonValue::Array();
  for (const JsonValue& r : input["results"].items) results.items.push_back(Result(r, o));
  run.Field("results") = results;
  JsonValue log = JsonValue::Object();
  log.Field("$schema") = Str("https://json.schemastore.org/sarif-2.1.0.json");
  log.Field("version") = Str("2.1.0");
  JsonValue runs = JsonValue::Array();
  runs.items.push_back(run);
  log.Field("runs") = runs;
  return WriteJsonPretty(log);
}

}  // namespace mate
