#include "device/redirect.h"

#include <stdio.h>

#include <cstring>
#include <mutex>

#include "device/c_api.h"
#include "platform/import_patcher.h"
#include "platform/load_watch.h"
#include "platform/loaded_modules.h"

namespace mate {
namespace device {

namespace {

struct State {
  std::mutex mu;
  bool started = false;
  bool log = false;
  std::vector<std::string> globs;
  platform::RedirectedModuleList modules;
  uint64_t generation = ~0ull;
  uintptr_t own_lo = 0, own_hi = 0;
  platform::ImportRedirect table[32];
  size_t n = 0;
};

State& S() {
  static State* s = new State();
  return *s;
}

bool EndsWith(const char* s, const char* suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

// The C runtime, Node, and NVIDIA's libraries (the CUDA runtime and driver
// implement these calls; cuBLAS and friends keep their own workspaces).
bool NeverRedirected(const char* path) {
  static const char* const kPrefixes[] = {
      "libc.so", "libc-", "libstdc++", "libc++", "libgcc_s", "ld-linux", "libpthread", "libdl", "libm.so",
      "librt.so", "linux-vdso", "libnode.so", "libcuda.", "libcudart", "libcublas", "libcudnn", "libcufft",
      "libcurand", "libcusparse", "libcusolver", "libnccl", "libnvrtc", "libnvJitLink", "libcupti", "libnvidia-",
      "libnvToolsExt", "libmate_guard_cuda",
  };
  return platform::ModuleNamedLike(path, kPrefixes);
}

bool Chosen(const State& s, const char* path) {
  if (EndsWith(path, ".node")) return true;
  for (const std::string& g : s.globs)
    if (platform::GlobChooses(g, path)) return true;
  return false;
}

// Under S().mu.
void PatchLoaded(State& s) {
  s.generation = platform::LoadGeneration();
  platform::ForEachLoadedObject(
      [](const platform::LoadedObject& obj, void* p) {
        State& s = *static_cast<State*>(p);
        if (obj.main_program || obj.path[0] == '\0' || NeverRedirected(obj.path)) return true;
        if (obj.base >= s.own_lo && obj.base < s.own_hi) return true;  // mate-guard itself
        if (!Chosen(s, obj.path)) return true;
        platform::RedirectResult r = platform::RedirectImports(obj, s.table, s.n);
        platform::RedirectedModuleList::Recorded rec = s.modules.Record(obj, r, s.table, s.n);
        if (s.log && (rec.fresh || r.slots_written) && r.slots_redirected > 0)
          dprintf(2, "[mate-guard] cuda: %s: %u import slots redirected (%s)\n", obj.path, r.slots_redirected,
                  rec.names.c_str());
        return true;
      },
      &s);
}

}  // namespace

void StartRedirect(const RedirectOptions& options) {
  State& s = S();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.started) {
      size_t n = 0;
      const ReplacementEntry* e = CudaReplacements(&n);
      for (size_t i = 0; i < n && s.n < sizeof(s.table) / sizeof(s.table[0]); i++)
        s.table[s.n++] = platform::ImportRedirect{e[i].symbol, e[i].fn};
      s.log = options.log;
      platform::ObjectRange(reinterpret_cast<const void*>(&StartRedirect), &s.own_lo, &s.own_hi);
      s.started = true;
    }
    for (const std::string& g : options.globs) {
      bool known = false;
      for (const std::string& h : s.globs) known = known || h == g;
      if (!known) s.globs.push_back(g);
    }
    PatchLoaded(s);
  }
  platform::WatchLoads(&RefreshRedirect);
}

void RefreshRedirect() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.started || platform::LoadGeneration() == s.generation) return;
  PatchLoaded(s);
}

std::vector<RedirectedModule> RedirectedModules() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.modules.modules();
}

}  // namespace device
}  // namespace mate
