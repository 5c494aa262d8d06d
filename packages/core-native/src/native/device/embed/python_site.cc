#include "device/embed/python_site.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/stack_store.h"
#include "device/driver/now.h"

namespace mate {
namespace device {

namespace {

// Deep enough to reach the user's line through torch.compile's frames
// (dynamo, the generated wrapper, Triton's launcher).
constexpr int kFrames = 40;
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
};

const PyApi* Api() {
  static PyApi api;
  static const PyApi* found = [] () -> const PyApi* {
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
    bool all = api.IsInitialized && api.GILState_Check && api.GILState_GetThisThreadState && api.GILState_Ensure &&
               api.GILState_Release && api.Eval_GetFrame && api.Frame_GetCode && api.Frame_GetLineNumber &&
               api.Frame_GetBack && api.Object_GetAttrString && api.Unicode_AsUTF8 && api.IncRef && api.DecRef &&
               api.Err_Clear;
    return all ? &api : nullptr;  // not a Python process, or Python older than 3.9
  }();
  return found;
}

// All under the GIL: one thread at a time; the lock is for form.
std::mutex g_mu;
std::unordered_map<void*, std::string> g_code_names;  // code object (kept alive) -> "fn (file"
std::unordered_map<std::string, uint32_t> g_stacks;    // packed (code, position)... -> interned id

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

bool g_enabled = true;
PythonSiteStats g_stats;  // updated with atomics: allocating and launching threads
// Counted only where MATE_GUARD_CUDA_STATS asks (read once, at load): every
// allocation, free and launch takes a call site, and the clock reads and
// shared counters are no use to a run that never prints them.
const bool g_counting = getenv("MATE_GUARD_CUDA_STATS") != nullptr;

void Add(uint64_t* field, uint64_t n) {
  if (g_counting) __atomic_fetch_add(field, n, __ATOMIC_RELAXED);
}
uint64_t Clock() { return g_counting ? NowNs() : 0; }

uint32_t Capture(const PyApi* py, int max_frames);

}  // namespace

void SetPythonStacks(bool on) { __atomic_store_n(&g_enabled, on, __ATOMIC_RELEASE); }

uint32_t CapturePythonStack() { return CapturePythonStackUpTo(kFrames); }

uint32_t CapturePythonStackUpTo(int max_frames) {
  if (max_frames > kFrames) max_frames = kFrames;
  if (!__atomic_load_n(&g_enabled, __ATOMIC_ACQUIRE)) return 0;
  const PyApi* py = Api();
  if (py == nullptr || !py->IsInitialized()) return 0;
  uint64_t t0 = Clock();
  uint32_t id = 0;
  if (py->GILState_Check() == 1) {
    id = Capture(py, max_frames);
  } else {
    // PyTorch's ops and Triton's launcher release the GIL around the C++ call
    // that allocates or launches: take it back for the walk (this thread's
    // frames can't change meanwhile). A thread Python never ran on (autograd's
    // backward threads) has no frames: none.
    if (py->GILState_GetThisThreadState() == nullptr) return 0;
    int state = py->GILState_Ensure();
    Add(&g_stats.ensure_ns, Clock() - t0);
    Add(&g_stats.gil_taken, 1);
    id = Capture(py, max_frames);
    py->GILState_Release(state);
  }
  Add(&g_stats.captures, 1);
  Add(&g_stats.ns, Clock() - t0);
  return id;
}

PythonSiteStats GetPythonSiteStats() {
  PythonSiteStats s;
  for (auto [to, from] : {std::pair{&s.captures, &g_stats.captures}, {&s.gil_taken, &g_stats.gil_taken},
                          {&s.new_stacks, &g_stats.new_stacks}, {&s.ns, &g_stats.ns}, {&s.ensure_ns, &g_stats.ensure_ns}})
    *to = __atomic_load_n(from, __ATOMIC_RELAXED);
  return s;
}

namespace {

// A frame's position is its last instruction where Python has
// PyFrame_GetLasti (3.11+): the stack is looked up by (code, instruction),
// and the line numbers, a scan of each code object's line table, are
// worked out only for a stack not seen before (a capture per allocation,
// free and launch: the lookup is the common path). Before 3.11, the line.
uint32_t Capture(const PyApi* py, int max_frames) {
  void* frame = py->Eval_GetFrame();  // borrowed
  if (frame == nullptr) return 0;
  void* codes[kFrames];
  void* frames[kFrames];  // kept (one reference each) until the lines are known
  int pos[kFrames];
  int n = 0;
  const bool lasti = py->Frame_GetLasti != nullptr;
  py->IncRef(frame);
  while (frame != nullptr && n < max_frames) {
    codes[n] = py->Frame_GetCode(frame);  // new reference
    pos[n] = lasti ? py->Frame_GetLasti(frame) : py->Frame_GetLineNumber(frame);
    frames[n] = frame;
    n++;
    frame = py->Frame_GetBack(frame);  // new reference
  }
  if (frame != nullptr) py->DecRef(frame);
  auto release = [&] {
    for (int i = 0; i < n; i++) {
      py->DecRef(codes[i]);
      py->DecRef(frames[i]);
    }
  };
  std::lock_guard<std::mutex> lock(g_mu);
  std::string key(reinterpret_cast<const char*>(codes), n * sizeof(void*));
  key.append(reinterpret_cast<const char*>(pos), n * sizeof(int));
  auto hit = g_stacks.find(key);
  if (hit != g_stacks.end()) {
    release();
    return hit->second;
  }
  Add(&g_stats.new_stacks, 1);
  std::string text;
  for (int i = 0; i < n; i++) {
    auto it = g_code_names.find(codes[i]);
    if (it == g_code_names.end()) {
      // Kept alive (one reference held) so its address never names another.
      py->IncRef(codes[i]);
      it = g_code_names.emplace(codes[i], Attr(*py, codes[i], "co_name") + " (" + Attr(*py, codes[i], "co_filename")).first;
    }
    int line = lasti ? py->Frame_GetLineNumber(frames[i]) : pos[i];
    text += "    at " + it->second + ":" + std::to_string(line) + ")\n";
  }
  release();
  uint32_t id = StackStore::Get().Intern(text.data(), text.size());
  if (g_stacks.size() >= kCacheLimit) g_stacks.clear();
  g_stacks.emplace(std::move(key), id);
  return id;
}

}  // namespace

}  // namespace device
}  // namespace mate
