#include "crash/report_writer.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>

#include "core/stack_store.h"
#include "platform/loaded_modules.h"

namespace mate {

void Writer::Mem(const char* s, size_t n) {
  if (cap_ == 0) return;
  for (size_t i = 0; i < n && len_ + 1 < cap_; i++) buf_[len_++] = s[i];
  buf_[len_] = '\0';
}
void Writer::Str(const char* s) { if (s) Mem(s, strlen(s)); }
void Writer::Char(char c) { Mem(&c, 1); }
void Writer::Repeat(char c, size_t n) { for (size_t i = 0; i < n; i++) Char(c); }
void Writer::Dec(uint64_t v) {
  char tmp[24];
  int n = 0;
  do { tmp[n++] = static_cast<char>('0' + v % 10); v /= 10; } while (v);
  while (n) Char(tmp[--n]);
}
void Writer::Hex(uint64_t v) {
  char tmp[18];
  int n = 0;
  do { tmp[n++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
  Str("0x");
  while (n) Char(tmp[--n]);
}
void Writer::JsonStr(const char* s) {
  Char('"');
  for (; s && *s; s++) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') { Char('\\'); Char(static_cast<char>(c)); }
    else if (c == '\n') Str("\\n");
    else if (c == '\t') Str("\\t");
    else if (c == '\r') Str("\\r");
    else if (c < 0x20) { Str("\\u00"); Char("0123456789abcdef"[c >> 4]); Char("0123456789abcdef"[c & 15]); }
    else Char(static_cast<char>(c));
  }
  Char('"');
}

namespace {

constexpr const char* kPrefix = "==mate-guard== ";

void Bytes(Writer* w, uint64_t n) {
  w->Dec(n);
  w->Str(n == 1 ? " byte" : " bytes");
}

const char* RelationText(Relation r) {
  switch (r) {
    case Relation::kPastEnd: return "past the end of";
    case Relation::kBeforeStart: return "before the start of";
    case Relation::kInside: return "inside";
  }
  return "";
}

bool IsBadFree(const Violation& v) {
  return strcmp(v.kind, "double-free") == 0 || strcmp(v.kind, "invalid-free") == 0;
}
bool IsCanary(const Violation& v) { return v.access == nullptr && !IsBadFree(v); }

const char* BaseName(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Native frames, raw: `#0 0x7f.. (module+0xoffset)`, symbolized by whoever
// renders the JSON. Lock-free module lookup: usable in the handler.
void Frames(const char* title, uint32_t frames_id, Writer* w) {
  const uintptr_t* pcs;
  size_t n = StackStore::Get().LookupFrames(frames_id, &pcs);
  w->Str(kPrefix);
  w->Str(title);
  w->Str(":\n");
  for (size_t i = 0; i < n; i++) {
    w->Str(kPrefix);
    w->Str("  #");
    w->Dec(i);
    w->Char(' ');
    w->Hex(pcs[i]);
    const char* path;
    uintptr_t base;
    if (platform::FindModule(pcs[i], &path, &base)) {
      w->Str(" (");
      w->Str(BaseName(path));
      w->Char('+');
      w->Hex(pcs[i] - base);
      w->Char(')');
    }
    w->Char('\n');
  }
}

void FramesJson(uint32_t frames_id, Writer* w) {
  const uintptr_t* pcs;
  size_t n = StackStore::Get().LookupFrames(frames_id, &pcs);
  if (n == 0) { w->Str("null"); return; }
  w->Char('[');
  for (size_t i = 0; i < n; i++) {
    if (i) w->Char(',');
    w->Str("{\"pc\":\"");
    w->Hex(pcs[i]);
    w->Str("\",\"module\":");
    const char* path;
    uintptr_t base;
    if (platform::FindModule(pcs[i], &path, &base)) {
      w->JsonStr(path);
      w->Str(",\"offset\":\"");
      w->Hex(pcs[i] - base);
      w->Str("\"}");
    } else {
      w->Str("null,\"offset\":null}");
    }
  }
  w->Char(']');
}

// A bad free's headline, after "ERROR: <kind>".
void BadFreeHeadline(const Violation& v, Writer* w) {
  const SlotRecord& r = v.record;
  w->Str(" of ");
  w->Hex(v.address);
  w->Str(": ");
  if (!v.has_record) {
    w->Str("not the start of any allocation (an address inside mate-guard's guarded region)\n");
    return;
  }
  bool freed = r.freed_by != FreedBy::kNotFreed;
  bool at_start = v.address == v.geometry.user;
  if (strcmp(v.kind, "double-free") == 0) {
    w->Str("allocation #");
  } else if (at_start) {
    w->Str("the start of ");
    w->Str(freed ? "freed " : "");
    w->Str(r.backend == SlotBackend::kHost ? "JS buffer allocation #" : "allocation #");
  } else {
    if (v.relation == Relation::kInside) { w->Str("offset "); w->Dec(v.distance); }
    else Bytes(w, v.distance);
    w->Char(' ');
    w->Str(RelationText(v.relation));
    w->Str(freed ? " freed allocation #" : " allocation #");
  }
  w->Dec(r.alloc_id);
  w->Str(" (");
  Bytes(w, r.size);
  w->Str(", ");
  w->Str(ModeName(r.mode));
  w->Str(" mode)");
  if (strcmp(v.kind, "double-free") == 0) w->Str(" was already freed");
  else if (at_start && r.backend == SlotBackend::kHost) w->Str(", which malloc/new never handed out");
  else if (!at_start) w->Str(", not its start");
  w->Char('\n');
}

// The canary side a report is about: the farthest damage wins.
const CanarySide& MainSide(const Violation& v, bool* before) {
  *before = v.damage.before.damaged_bytes != 0;
  return *before ? v.damage.before : v.damage.after;
}

void Headline(const Violation& v, Writer* w) {
  w->Str(kPrefix);
  w->Str("ERROR: ");
  w->Str(v.kind);
  bool freed = v.record.freed_by != FreedBy::kNotFreed && !IsCanary(v);
  if (IsBadFree(v)) {
    BadFreeHeadline(v, w);
    return;
  }
  if (IsCanary(v)) {
    bool before;
    const CanarySide& side = MainSide(v, &before);
    w->Str(": ");
    Bytes(w, side.farthest);
    w->Str(before ? " before the start of" : " past the end of");
  } else {
    w->Str(" on ");
    w->Str(v.access);
    w->Str(" at ");
    w->Hex(v.address);
    w->Str(": ");
    if (v.relation == Relation::kInside) { w->Str("offset "); w->Dec(v.distance); }
    else Bytes(w, v.distance);
    w->Char(' ');
    w->Str(RelationText(v.relation));
    if (freed) w->Str(" freed");
  }
  w->Str(" allocation #");
  w->Dec(v.record.alloc_id);
  w->Str(" (");
  Bytes(w, v.record.size);
  w->Str(", ");
  w->Str(ModeName(v.record.mode));
  w->Str(" mode)");
  if (IsCanary(v)) w->Str(" damaged");
  w->Char('\n');
}

void TestLine(const char* label, uint32_t test_id, Writer* w) {
  const char* name = StackStore::Get().Lookup(test_id);
  if (!name) return;
  w->Str(kPrefix);
  w->Str(label);
  w->Str(name);
  w->Char('\n');
}

// One row of boxes, one per part of the slot, and a row with a marker under
// the part that was hit.
struct Part { const char* label; uint64_t start, end; };

void Picture(const Violation& v, Writer* w) {
  const SlotGeometry& g = v.geometry;
  Part parts[4];
  int n = 0;
  auto add = [&](const char* label, uint64_t s, uint64_t e, bool always) {
    if (always || e > s) parts[n++] = Part{label, s, e};
  };
  if (v.record.mode == Mode::kTail) {
    add("canary", g.canary_before_start, g.canary_before_end, false);
    add("data", g.user, g.user_end, true);
    add("gap (canary)", g.canary_after_start, g.canary_after_end, false);
    add("GUARD", g.guard_start, g.guard_end, true);
  } else {
    add("GUARD", g.guard_start, g.guard_end, true);
    add("data", g.user, g.user_end, true);
    add("canary", g.canary_after_start, g.canary_after_end, false);
  }
  // Box text: "label N B", padded to at least 14 columns.
  char boxes[256];
  Writer row(boxes, sizeof(boxes));
  size_t col_start[4], col_end[4];
  for (int i = 0; i < n; i++) {
    row.Char('|');
    col_start[i] = row.size();
    row.Char(' ');
    row.Str(parts[i].label);
    row.Char(' ');
    row.Dec(parts[i].end - parts[i].start);
    row.Str(" B ");
    while (row.size() - col_start[i] < 14) row.Char(' ');
    col_end[i] = row.size();
  }
  row.Char('|');
  w->Str(kPrefix);
  w->Str("slot: ");
  w->Str(boxes);
  w->Char('\n');
  // Marker column: proportional position of the access (or the damage)
  // inside its part.
  uint64_t mark_lo = v.address, mark_hi = v.address + 1;
  if (IsCanary(v)) {
    bool before;
    const CanarySide& side = MainSide(v, &before);
    if (before) { mark_lo = g.user - side.farthest; mark_hi = g.user - side.nearest + 1; }
    else { mark_lo = g.user_end + side.nearest - 1; mark_hi = g.user_end + side.farthest; }
  }
  for (int i = 0; i < n; i++) {
    bool hit = mark_lo >= parts[i].start && mark_lo < parts[i].end;
    if (!hit && !(i == n - 1 && mark_lo >= parts[i].end) && !(i == 0 && mark_lo < parts[i].start)) continue;
    uint64_t span = parts[i].end - parts[i].start;
    size_t width = col_end[i] - col_start[i];
    size_t off = 0;
    if (span > 0 && mark_lo >= parts[i].start && mark_lo < parts[i].end)
      off = static_cast<size_t>((mark_lo - parts[i].start) * (width - 1) / span);
    else if (mark_lo >= parts[i].end) off = width - 1;
    w->Str(kPrefix);
    w->Repeat(' ', 6 + col_start[i] + off);
    w->Char('^');
    uint64_t extra = mark_hi > mark_lo + 1 ? mark_hi - mark_lo - 1 : 0;
    if (extra) w->Repeat('~', extra < 8 ? extra : 8);
    w->Char(' ');
    w->Str(IsCanary(v) ? "damaged canary" : v.access);
    w->Char('\n');
    break;
  }
}

void Stack(const char* title, uint32_t stack_id, Writer* w) {
  const char* s = StackStore::Get().Lookup(stack_id);
  w->Str(kPrefix);
  w->Str(title);
  if (!s) { w->Str(" (no stack captured: captureStacks is off)\n"); return; }
  w->Str(":\n");
  while (*s) {
    const char* nl = strchr(s, '\n');
    size_t len = nl ? static_cast<size_t>(nl - s) : strlen(s);
    w->Str(kPrefix);
    w->Str("  ");
    while (len && (*s == ' ')) { s++; len--; }
    w->Mem(s, len);
    w->Char('\n');
    s += len;
    if (*s == '\n') s++;
  }
}

// The allocation's stack: native frames for native-heap allocations, the JS
// stack for buffers.
void AllocStack(const SlotRecord& r, Writer* w) {
  if (r.alloc_frames) Frames("allocated at", r.alloc_frames, w);
  else Stack("allocated at", r.alloc_stack, w);
}

void FreeStack(const char* title, const SlotRecord& r, Writer* w) {
  if (r.free_frames) Frames(title, r.free_frames, w);
  else Stack(title, r.free_stack, w);
}

void Hint(const Violation& v, Writer* w) {
  w->Str(kPrefix);
  w->Str("hint: ");
  bool tail = v.record.mode == Mode::kTail;
  if (strcmp(v.kind, "double-free") == 0) {
    w->Str("the memory was freed twice; mate-guard ignored the second free (it would corrupt a real heap): free each allocation once");
  } else if (IsBadFree(v)) {
    w->Str("free/delete must get exactly the pointer malloc/new returned; mate-guard ignored this free");
  } else if (IsCanary(v)) {
    bool before;
    MainSide(v, &before);
    if (before && tail)
      w->Str("canary damaged before the start in tail mode: rerun with --guard-mode head to fault at the first bad access");
    else if (!before && !tail)
      w->Str("canary damaged past the end in head mode: rerun with --guard-mode tail to fault at the first bad access");
    else {
      w->Str("the write landed in the alignment gap (alignment ");
      w->Dec(v.record.alignment);
      w->Str("): rerun byte-exact to fault at the first bad access (alignment 1: installGuardAllocator({ alignment: 1 }) or mate guard-run --alignment 1)");
    }
  } else if (v.record.freed_by != FreedBy::kNotFreed) {
    if (v.record.freed_by == FreedBy::kGarbageCollector)
      w->Str("the buffer was garbage-collected while native code still held a pointer into it: keep a reference to it (napi_ref / Napi::Reference) for as long as native code uses the memory");
    else
      w->Str("the memory was used after it was freed: the stale pointer outlived the allocation");
  } else if (v.relation == Relation::kPastEnd) {
    w->Str("native code accessed past the end: check the length it was given (buffer.length / byteLength) and its loop bounds");
  } else {
    w->Str("native code accessed before the start: check negative indexes and pointer arithmetic");
  }
  w->Char('\n');
}

}  // namespace

// `allocation #N: size at [start, end), mode, alignment, backend (method)`
static void AllocationLine(const Violation& v, Writer* w) {
  const SlotRecord& r = v.record;
  w->Str(kPrefix);
  w->Str("allocation #");
  w->Dec(r.alloc_id);
  w->Str(": ");
  Bytes(w, r.size);
  w->Str(" at [");
  w->Hex(v.geometry.user);
  w->Str(", ");
  w->Hex(v.geometry.user_end);
  w->Str("), ");
  w->Str(ModeName(r.mode));
  w->Str(" mode, alignment ");
  w->Dec(r.alignment);
  w->Str(", backend ");
  w->Str(v.backend);
  w->Str(" (");
  w->Str(v.guard_method);
  w->Str(")\n");
}

void FormatReport(const Violation& v, Writer* w) {
  Headline(v, w);
  TestLine("test: ", v.test_id, w);
  const SlotRecord& r = v.record;
  if (IsBadFree(v)) {
    bool twice = strcmp(v.kind, "double-free") == 0;
    Frames(twice ? "freed again at" : "free called at", v.frames, w);
    if (v.has_record) {
      AllocationLine(v, w);
      TestLine("allocated during test: ", r.alloc_test, w);
      AllocStack(r, w);
      if (r.freed_by != FreedBy::kNotFreed) {
        TestLine("freed during test: ", r.free_test, w);
        FreeStack(twice ? "first freed at" : "freed at", r, w);
      }
    }
    Hint(v, w);
    return;
  }
  AllocationLine(v, w);
  if (IsCanary(v)) {
    for (int side = 0; side < 2; side++) {
      const CanarySide& s = side == 0 ? v.damage.before : v.damage.after;
      if (!s.damaged_bytes) continue;
      w->Str(kPrefix);
      w->Str("damaged: ");
      Bytes(w, s.damaged_bytes);
      if (s.nearest == s.farthest) {
        w->Str(", ");
        Bytes(w, s.farthest);
      } else {
        w->Str(", from ");
        w->Dec(s.nearest);
        w->Str(" to ");
        Bytes(w, s.farthest);
      }
      w->Str(side == 0 ? " before the start\n" : " past the end\n");
    }
  }
  Picture(v, w);
  TestLine("allocated during test: ", r.alloc_test, w);
  AllocStack(r, w);
  if (r.freed_by != FreedBy::kNotFreed && !IsCanary(v)) {
    TestLine("freed during test: ", r.free_test, w);
    if (r.freed_by == FreedBy::kGarbageCollector) {
      w->Str(kPrefix);
      w->Str("freed by the garbage collector: no JS reference to the buffer was left\n");
    } else {
      FreeStack("freed at", r, w);
    }
  }
  Hint(v, w);
}

namespace {

void AllocationJson(const Violation& v, Writer* w) {
  const SlotRecord& r = v.record;
  const StackStore& st = StackStore::Get();
  w->Str("{\"id\":");
  w->Dec(r.alloc_id);
  w->Str(",\"size\":");
  w->Dec(r.size);
  w->Str(",\"start\":\"");
  w->Hex(v.geometry.user);
  w->Str("\",\"end\":\"");
  w->Hex(v.geometry.user_end);
  w->Str("\",\"mode\":");
  w->JsonStr(ModeName(r.mode));
  w->Str(",\"alignment\":");
  w->Dec(r.alignment);
  w->Str(",\"backend\":");
  w->JsonStr(v.backend);
  w->Str(",\"allocTest\":");
  if (st.Lookup(r.alloc_test)) w->JsonStr(st.Lookup(r.alloc_test)); else w->Str("null");
  w->Str(",\"allocStack\":");
  if (st.Lookup(r.alloc_stack)) w->JsonStr(st.Lookup(r.alloc_stack)); else w->Str("null");
  w->Str(",\"allocFrames\":");
  FramesJson(r.alloc_frames, w);
  w->Str(",\"freeTest\":");
  if (st.Lookup(r.free_test)) w->JsonStr(st.Lookup(r.free_test)); else w->Str("null");
  w->Str(",\"freeFrames\":");
  FramesJson(r.free_frames, w);
  w->Str(",\"freed\":");
  w->Str(r.freed_by != FreedBy::kNotFreed && (v.access || IsBadFree(v)) ? "true" : "false");
  w->Char('}');
}

}  // namespace

void FormatReportJson(const Violation& v, const char* text, Writer* w) {
  const StackStore& st = StackStore::Get();
  w->Str("{\"tool\":\"mate-guard\",\"version\":1,\"kind\":");
  w->JsonStr(v.kind);
  w->Str(",\"access\":");
  if (v.access) w->JsonStr(v.access); else w->Str("null");
  w->Str(",\"address\":");
  if (v.address) { w->Char('"'); w->Hex(v.address); w->Char('"'); } else w->Str("null");
  w->Str(",\"fatal\":");
  w->Str(v.signal ? "true" : "false");
  w->Str(",\"signal\":");
  if (v.signal) w->Dec(static_cast<uint64_t>(v.signal)); else w->Str("null");
  w->Str(",\"pid\":");
  w->Dec(static_cast<uint64_t>(getpid()));
  w->Str(",\"test\":");
  const char* test = st.Lookup(v.test_id);
  if (test) w->JsonStr(test); else w->Str("null");
  w->Str(",\"backend\":");
  w->JsonStr(v.backend);
  w->Str(",\"allocation\":");
  if (v.has_record) AllocationJson(v, w); else w->Str("null");
  // The event's own native frames: the bad free's (double/invalid free).
  w->Str(",\"frames\":");
  FramesJson(v.frames, w);
  w->Str(",\"process\":{\"allocations\":");
  w->Dec(v.process_allocations);
  w->Str(",\"peakLive\":");
  w->Dec(v.process_peak_live);
  w->Str(",\"fallbacks\":");
  w->Dec(v.process_fallbacks);
  w->Str("},\"text\":");
  w->JsonStr(text);
  w->Str("}\n");
}

namespace {
char g_report_dir[4096];
int g_report_seq = 0;
}  // namespace

void SetReportDir(const char* dir) {
  size_t n = strlen(dir);
  if (n >= sizeof(g_report_dir)) n = sizeof(g_report_dir) - 1;
  memcpy(g_report_dir, dir, n);
  g_report_dir[n] = '\0';
}

const char* ReportDir() { return g_report_dir; }

bool WriteReportFile(const char* json, size_t len) {
  if (g_report_dir[0] == '\0') return false;
  char path[4200];
  Writer p(path, sizeof(path));
  p.Str(g_report_dir);
  p.Str("/mate-guard-");
  p.Dec(static_cast<uint64_t>(getpid()));
  p.Char('-');
  p.Dec(static_cast<uint64_t>(__atomic_add_fetch(&g_report_seq, 1, __ATOMIC_RELAXED)));
  p.Str(".json.tmp");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, json + done, len - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  // Readers only pick up whole files: rename is atomic.
  char final_path[4200];
  memcpy(final_path, path, p.size() - 4);
  final_path[p.size() - 4] = '\0';
  return done == len && rename(path, final_path) == 0;
}

}  // namespace mate
