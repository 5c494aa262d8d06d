#include "device/embed/python_site.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/stack_store.h"
#include "device/driver/now.h"
#include "device/embed/python_frame_field.h"
#include "device/embed/python_raw_frames.h"
#include "device/embed/python_user_code.h"

namespace mate {
namespace device {

namespace {

// The ceiling: deep enough to reach the user's line through torch.compile's
// frames (dynamo, the generated wrapper, Triton's launcher).
constexpr int kFrames = 40;
// The walk stops this many library frames past the user's outermost frame
// seen so far: enough to cross torch's frames between a compiled function
// or module and its caller (nn.Module's call, dynamo's wrappers: up to ~8)
// with room to spare, and little of the runner's below (pytest's ~35
// frames under every test), which reports trim anyway.
constexpr int kPastUser = 10;
constexpr size_t kCacheLimit = 1 << 16;

struct PyApi {
  int (*IsInitialized)();
  int (*GILState_Check)();
  void* (*GILState_GetThisThreadState)();
  int (*GILState_Ensure)();
  void (*GILState_Release)(int);
  void* (*Eval_GetFrame)();
  void* (*Frame_GetCode)(void*);
  int (*Frame_GetLineNumber)(void*);
  int (*Frame_GetLasti)(void*);  // 3.11+; null before
  void* (*Frame_GetBack)(void*);
  void* (*Object_GetAttrString)(void*, const char*);
  const char* (*Unicode_AsUTF8)(void*);
  void (*IncRef)(void*);
  void (*DecRef)(void*);
  void (*Err_Clear)();
  void* (*Sys_GetObject)(const char*);              // optional: for the stdlib's folder
  void* (*Dict_GetItemString)(void*, const char*);  // optional: same
  void* (*ThreadState_Get)();                       // optional: to learn where frames are kept
  void* (*ThreadState_Unchecked)();                 // optional: the running thread state, or null
};

const PyApi* Api() {
  static PyApi api;
  static const PyApi* found = []() -> const PyApi* {
    void* self = dlopen(nullptr, RTLD_LAZY);
    auto sym = [&](const char* name) { return dlsym(self ? self : RTLD_DEFAULT, name); };
    api.IsInitialized = reinterpret_cast<int (*)()>(sym("Py_IsInitialized"));
    api.GILState_Check = reinterpret_cast<int (*)()>(sym("PyGILState_Check"));
    api.GILState_GetThisThreadState = reinterpret_cast<void* (*)()>(sym("PyGILState_GetThisThreadState"));
    api.GILState_Ensure = reinterpret_cast<int (*)()>(sym("PyGILState_Ensure"));
    api.GILState_Release = reinterpret_cast<void (*)(int)>(sym("PyGILState_Release"));
    api.Eval_GetFrame = reinterpret_cast<void* (*)()>(sym("PyEval_GetFrame"));
    api.Frame_GetCode = reinterpret_cast<void* (*)(void*)>(sym("PyFrame_GetCode"));
    api.Frame_GetLineNumber = reinterpret_cast<int (*)(void*)>(sym("PyFrame_GetLineNumber"));
    api.Frame_GetLasti = reinterpret_cast<int (*)(void*)>(sym("PyFrame_GetLasti"));
    api.Frame_GetBack = reinterpret_cast<void* (*)(void*)>(sym("PyFrame_GetBack"));
    api.Object_GetAttrString = reinterpret_cast<void* (*)(void*, const char*)>(sym("PyObject_GetAttrString"));
    api.Unicode_AsUTF8 = reinterpret_cast<const char* (*)(void*)>(sym("PyUnicode_AsUTF8"));
    api.IncRef = reinterpret_cast<void (*)(void*)>(sym("Py_IncRef"));
    api.DecRef = reinterpret_cast<void (*)(void*)>(sym("Py_DecRef"));
    api.Err_Clear = reinterpret_cast<void (*)()>(sym("PyErr_Clear"));
    api.Sys_GetObject = reinterpret_cast<void* (*)(const char*)>(sym("PySys_GetObject"));
    api.Dict_GetItemString = reinterpret_cast<void* (*)(void*, const char*)>(sym("PyDict_GetItemString"));
    api.ThreadState_Get = reinterpret_cast<void* (*)()>(sym("PyThreadState_Get"));
    api.ThreadState_Unchecked = reinterpret_cast<void* (*)()>(sym("PyThreadState_GetUnchecked"));  // 3.13+
    if (!api.ThreadState_Unchecked)
      api.ThreadState_Unchecked = reinterpret_cast<void* (*)()>(sym("_PyThreadState_UncheckedGet"));
    // 3.11+ (where PyFrame_GetLasti is): the interpreter frames' layout is known by version.
    const auto* version = static_cast<const unsigned long*>(sym("Py_Version"));
    if (version && api.Frame_GetLasti) SetRawFramesVersion(*version);
    bool all = api.IsInitialized && api.GILState_Check && api.GILState_GetThisThreadState && api.GILState_Ensure &&
               api.GILState_Release && api.Eval_GetFrame && api.Frame_GetCode && api.Frame_GetLineNumber &&
               api.Frame_GetBack && api.Object_GetAttrString && api.Unicode_AsUTF8 && api.IncRef && api.DecRef &&
               api.Err_Clear;
    return all ? &api : nullptr;  // not a Python process, or Python older than 3.9
  }();
  return found;
}

std::string Attr(const PyApi& py, void* obj, const char* name) {
  void* v = py.Object_GetAttrString(obj, name);
  if (v == nullptr) {
    py.Err_Clear();
    return "?";
  }
  const char* s = py.Unicode_AsUTF8(v);
  std::string out = s ? s : "?";
  if (s == nullptr) py.Err_Clear();
  py.DecRef(v);
  return out;
}

// One per code object seen, never freed; the code object is kept alive with
// it (one reference held), so its address never names another.
struct CodeInfo {
  void* code;
  std::string name;  // "fn (file"
  bool user;         // IsUserPythonFile(co_filename)
};

// No lock is held across a call into Python: making a frame object can run
// the garbage collector, whose finalizers may allocate (a nested capture on
// this thread) or release the GIL (a capture on another thread).
std::mutex g_mu;
std::unordered_map<void*, CodeInfo> g_codes;  // under g_mu; nodes never move
// The walk's one look-up per frame, lock-free: a slot holds a CodeInfo*
// (published with a release store) whose own `code` says whose it is.
constexpr size_t kRecent = 4096;
const CodeInfo* g_recent[kRecent];

struct Stack {
  uint32_t id;
  std::vector<void*> codes;
  std::vector<int> pos;
};
struct Identity {
  size_t operator()(uint64_t h) const { return static_cast<size_t>(h); }
};
// Hash of (code, position)... -> the interned stack, under g_mu.
std::unordered_map<uint64_t, Stack, Identity> g_stacks;

std::string g_stdlib;         // under g_mu: StdlibDir, worked out once
bool g_stdlib_known = false;  // set under g_mu

size_t RecentSlot(void* code) {
  uintptr_t p = reinterpret_cast<uintptr_t>(code);
  return ((p >> 4) ^ (p >> 16)) & (kRecent - 1);
}

// The standard library's folder (os.py's) with its trailing separator;
// empty where it can't be told.
std::string StdlibDir(const PyApi& py) {
  if (py.Sys_GetObject == nullptr || py.Dict_GetItemString == nullptr) return "";
  void* modules = py.Sys_GetObject("modules");                          // borrowed
  void* os = modules ? py.Dict_GetItemString(modules, "os") : nullptr;  // borrowed
  if (os == nullptr) return "";
  std::string file = Attr(py, os, "__file__");
  size_t slash = file.rfind('/');
  return file != "?" && slash != std::string::npos ? file.substr(0, slash + 1) : "";
}

const CodeInfo* Info(const PyApi& py, void* code) {
  const CodeInfo* seen = __atomic_load_n(&g_recent[RecentSlot(code)], __ATOMIC_ACQUIRE);
  if (seen != nullptr && seen->code == code) return seen;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_codes.find(code);
    if (it != g_codes.end()) {
      __atomic_store_n(&g_recent[RecentSlot(code)], &it->second, __ATOMIC_RELEASE);
      return &it->second;
    }
  }
  // Not seen before: named outside the lock (calls into Python).
  std::string stdlib = __atomic_load_n(&g_stdlib_known, __ATOMIC_ACQUIRE) ? "" : StdlibDir(py);
  std::string file = Attr(py, code, "co_filename");
  std::string name = Attr(py, code, "co_name") + " (" + file;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_stdlib_known) {
    g_stdlib = stdlib;
    __atomic_store_n(&g_stdlib_known, true, __ATOMIC_RELEASE);
  }
  auto [it, added] = g_codes.emplace(code, CodeInfo{code, std::move(name), IsUserPythonFile(file, g_stdlib)});
  if (added) py.IncRef(code);
  __atomic_store_n(&g_recent[RecentSlot(code)], &it->second, __ATOMIC_RELEASE);
  return &it->second;
}

// A code object already named, or null: no call into Python, so no GIL needed.
const CodeInfo* KnownInfo(void* code) {
  const CodeInfo* seen = __atomic_load_n(&g_recent[RecentSlot(code)], __ATOMIC_ACQUIRE);
  if (seen != nullptr && seen->code == code) return seen;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_codes.find(code);
  return it == g_codes.end() ? nullptr : &it->second;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

bool g_enabled = true;
PythonSiteStats g_stats;  // updated with atomics: allocating and launching threads
// Counted only where MATE_GUARD_CUDA_STATS asks (read once, at load): every
// allocation, free and launch takes a call site, and the clock reads and
// shared counters are no use to a run that never prints them.
const bool g_counting = TimeCounters();

void Add(uint64_t* field, uint64_t n) {
  if (g_counting) __atomic_fetch_add(field, n, __ATOMIC_RELAXED);
}

uint32_t Capture(const PyApi* py, int max_frames, void* tstate);
bool CaptureRaw(const void* top, int max_frames, uint32_t* id);

}  // namespace

void SetPythonStacks(bool on) { __atomic_store_n(&g_enabled, on, __ATOMIC_RELEASE); }

uint32_t CapturePythonStack() { return CapturePythonStackUpTo(kFrames); }

uint32_t CapturePythonStackUpTo(int max_frames) {
  if (max_frames > kFrames) max_frames = kFrames;
  if (!__atomic_load_n(&g_enabled, __ATOMIC_ACQUIRE)) return 0;
  const PyApi* py = Api();
  if (py == nullptr || !py->IsInitialized()) return 0;
  uint64_t t0 = CounterStartNs();
  uint32_t id = 0;
  const bool held = py->GILState_Check() == 1;
  // The thread state whose frames a walk would read: the running one, or
  // (GIL released) the one PyGILState_Ensure would take back. A thread
  // Python never ran on has none: no frames.
  void* tstate =
      held ? (py->ThreadState_Unchecked ? py->ThreadState_Unchecked() : nullptr) : py->GILState_GetThisThreadState();
  if (!held && tstate == nullptr) return 0;
  const void* top = nullptr;
  ThreadFrames frames = tstate ? FramesOf(tstate, &top) : ThreadFrames::kUnknown;
  if (frames == ThreadFrames::kSome && RawFramesVerified() && CaptureRaw(top, max_frames, &id)) {
    Add(&g_stats.raw, 1);  // a stack seen before, read from the frames: no GIL, no frame objects
  } else if (held) {
    id = Capture(py, max_frames, tstate);
  } else if (frames == ThreadFrames::kNone) {
    // A thread state that runs no Python now (autograd's backward threads):
    // told without the GIL where the field that says so has been learnt.
    Add(&g_stats.no_gil_needed, 1);
  } else {
    // PyTorch's ops and Triton's launcher release the GIL around the C++ call
    // that allocates or launches: take it back for the walk (this thread's
    // frames can't change meanwhile).
    int state = py->GILState_Ensure();
    Add(&g_stats.ensure_ns, CounterElapsedNs(t0));
    Add(&g_stats.gil_taken, 1);
    id = Capture(py, max_frames, tstate);  // the thread state just taken back
    py->GILState_Release(state);
  }
  Add(&g_stats.captures, 1);
  if (id == 0) Add(&g_stats.empty, 1);
  Add(&g_stats.ns, CounterElapsedNs(t0));
  return id;
}

PythonSiteStats GetPythonSiteStats() {
  PythonSiteStats s;
  for (auto [to, from] : {std::pair{&s.captures, &g_stats.captures},
                          {&s.gil_taken, &g_stats.gil_taken},
                          {&s.new_stacks, &g_stats.new_stacks},
                          {&s.empty, &g_stats.empty},
                          {&s.no_gil_needed, &g_stats.no_gil_needed},
                          {&s.raw, &g_stats.raw},
                          {&s.ns, &g_stats.ns},
                          {&s.ensure_ns, &g_stats.ensure_ns}})
    *to = __atomic_load_n(from, __ATOMIC_RELAXED);
  return s;
}

namespace {

// A frame's position is its last instruction where Python has
// PyFrame_GetLasti (3.11+): the stack is looked up by (code, instruction),
// hashed during the walk, and the line numbers, a scan of each code
// object's line table, are worked out only for a stack not seen before (a
// capture per allocation, free and launch: the look-up is the common
// path). Before 3.11, the line.
//
// The walk ends kPastUser frames past the user's code, or at `max_frames`
// once the user's code is reached, or at the ceiling: a library stack
// deeper than `max_frames` above the user's line is walked through to it.
// Walk holds one walk's frames, innermost first, and that rule: the C
// API's walk and the raw one share it, so both find one stack by one key.
struct Walk {
  explicit Walk(int max) : max_frames(max) {}
  const int max_frames;
  void* codes[kFrames];
  int pos[kFrames];
  int n = 0;
  bool user = false;
  int past_user = 0;
  uint64_t hash = 0;
  // Takes a frame; false once the walk should end.
  bool Add(void* code, int p, bool user_code) {
    codes[n] = code;
    pos[n] = p;
    hash = Mix(Mix(hash, reinterpret_cast<uintptr_t>(code)), static_cast<uint32_t>(p));
    n++;
    if (user_code) {
      user = true;
      past_user = 0;
    } else if (user) {
      past_user++;
    }
    return !(n == kFrames || (user && (past_user >= kPastUser || n >= max_frames)));
  }
  // The interned stack of these frames, seen before; 0 if not.
  uint32_t Seen() const {
    std::lock_guard<std::mutex> lock(g_mu);
    auto hit = g_stacks.find(hash);
    if (hit == g_stacks.end()) return 0;
    const Stack& s = hit->second;
    bool same = s.codes.size() == static_cast<size_t>(n) && memcmp(s.codes.data(), codes, n * sizeof(void*)) == 0 &&
                memcmp(s.pos.data(), pos, n * sizeof(int)) == 0;
    return same ? s.id : 0;
  }
};

// Without the GIL: only a stack seen before, all of whose code objects are
// named (held by their CodeInfo, so no address names another).
bool CaptureRaw(const void* top, int max_frames, uint32_t* id) {
  Walk w(max_frames);
  RawFrames frames(top);
  void* code;
  int pos;
  bool more = true;
  while (more && frames.Next(&code, &pos)) {
    const CodeInfo* info = KnownInfo(code);
    if (info == nullptr) return false;
    more = w.Add(code, pos, info->user);
  }
  if (w.n == 0 || frames.Failed()) return false;  // the C API's walk would have gone on
  *id = w.Seen();
  return *id != 0;
}

// With the GIL held by `tstate`, the running thread state (null: looked up).
uint32_t Capture(const PyApi* py, int max_frames, void* tstate) {
  void* frame = py->Eval_GetFrame();  // borrowed
  if (frame == nullptr) return 0;
  const bool lasti = py->Frame_GetLasti != nullptr;  // 3.11+: also where frames are _PyInterpreterFrames
  if (tstate == nullptr && py->ThreadState_Get) tstate = py->ThreadState_Get();
  if (tstate && !FrameFieldSettled()) LearnFrameField(tstate, frame, lasti);
  Walk w(max_frames);
  void* frames[kFrames];  // kept (one reference each) until the lines are known
  py->IncRef(frame);
  while (true) {
    void* code = py->Frame_GetCode(frame);  // new reference
    frames[w.n] = frame;
    if (!w.Add(code, lasti ? py->Frame_GetLasti(frame) : py->Frame_GetLineNumber(frame), Info(*py, code)->user)) break;
    frame = py->Frame_GetBack(frame);  // new reference
    if (frame == nullptr) break;
  }
  const int n = w.n;
  void* const* codes = w.codes;
  const int* pos = w.pos;
  const void* top = nullptr;
  if (lasti && tstate && FramesOf(tstate, &top) == ThreadFrames::kSome) VerifyRawFrames(top, codes, pos, n);
  auto release = [&] {
    for (int i = 0; i < n; i++) {
      py->DecRef(codes[i]);
      py->DecRef(frames[i]);
    }
  };
  if (uint32_t id = w.Seen()) {
    release();
    return id;
  }
  Add(&g_stats.new_stacks, 1);
  std::string text;
  for (int i = 0; i < n; i++) {
    int line = lasti ? py->Frame_GetLineNumber(frames[i]) : pos[i];
    text += "    at " + Info(*py, codes[i])->name + ":" + std::to_string(line) + ")\n";
  }
  release();  // the codes stay valid as a key: each CodeInfo keeps its code alive
  uint32_t id = StackStore::Get().Intern(text.data(), text.size());
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_stacks.size() >= kCacheLimit) g_stacks.clear();
  // Two stacks with one hash: the newer takes the slot.
  g_stacks[w.hash] = Stack{id, std::vector<void*>(codes, codes + n), std::vector<int>(pos, pos + n)};
  return id;
}

}  // namespace

}  // namespace device
}  // namespace mate
