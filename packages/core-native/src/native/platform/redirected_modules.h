#ifndef MATE_PLATFORM_REDIRECTED_MODULES_H_
#define MATE_PLATFORM_REDIRECTED_MODULES_H_

#include <fnmatch.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "platform/import_patcher.h"
#include "platform/loaded_modules.h"

namespace mate {
namespace platform {

inline const char* ModuleBaseName(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// A user's glob chooses a module by its full path or its file name.
inline bool GlobChooses(const std::string& glob, const char* path) {
  return fnmatch(glob.c_str(), path, 0) == 0 || fnmatch(glob.c_str(), ModuleBaseName(path), 0) == 0;
}

// Whether the module's file name starts with one of `prefixes` (libraries
// never patched).
template <size_t N>
bool ModuleNamedLike(const char* path, const char* const (&prefixes)[N]) {
  const char* base = ModuleBaseName(path);
  for (const char* p : prefixes)
    if (strncmp(base, p, strlen(p)) == 0) return true;
  return false;
}

// A variable (data slot) initialised to a table function: redirected while
// it held the real function, the program's once it set it.
struct RedirectedVariable {
  uintptr_t slot = 0;             // its address
  std::string symbol;             // the function it was initialised to (`free`)
  void* first_held = nullptr;     // what it held when first seen (at the module's install)
  void* held = nullptr;           // what it held at the last pass (before any write)
  bool redirected = false;        // it points at mate-guard now
  bool owned_at_install = false;  // the program had set it before it was first seen (a constructor)
  bool owned_later = false;       // redirected at first, then set by the program
};

// What import redirection did to one module (the native heap's and the
// device guard's lists, shown by nativeHeap() and deviceStats()).
struct RedirectedModule {
  std::string path;
  uintptr_t base = 0;                // load bias (a path may load twice)
  uint32_t slots = 0;                // import slots pointing at mate-guard
  std::vector<std::string> symbols;  // which imports they are
  std::vector<std::string> own;      // table symbols the module defines itself (not redirected)
  std::string error;                 // why it could not be patched, if so
  std::vector<RedirectedVariable> variables;
  // Its own weak functions whose calls bound to another module's copy, now
  // bound to its own (RedirectorConfig::bind_own_weak): slots and symbols.
  uint32_t own_bound_slots = 0;
  std::vector<std::string> rebound;
  std::vector<std::string> noted_imports;  // which of RedirectorConfig::noted_imports it imports
};

// The modules one redirection table was applied to, each once per load
// (a path may load twice, at two bases). Not locked: its owner's lock.
class RedirectedModuleList {
 public:
  struct Recorded {
    RedirectedModule* module;
    bool fresh;         // first time this load was seen
    std::string names;  // the redirected symbols, comma separated
    std::string own;    // the module's own definitions, comma separated
    // Variables first seen, or found set by the program, in this pass
    // (copies: for log lines written after the pass).
    std::vector<RedirectedVariable> news;
  };

  // The data slots of this load that the program set: never written again.
  std::vector<uintptr_t> OwnedSlots(const LoadedObject& obj) const {
    std::vector<uintptr_t> out;
    for (size_t i = 0; i < modules_.size(); i++) {
      if (bases_[i] != obj.base || modules_[i].path != obj.path) continue;
      for (const RedirectedVariable& v : modules_[i].variables)
        if (v.owned_at_install || v.owned_later) out.push_back(v.slot);
    }
    return out;
  }

  Recorded Record(const LoadedObject& obj, const RedirectResult& r, const ImportRedirect* table, size_t n) {
    size_t index = modules_.size();
    for (size_t i = 0; i < modules_.size(); i++)
      if (bases_[i] == obj.base && modules_[i].path == obj.path) index = i;
    Recorded out{nullptr, index == modules_.size(), {}, {}, {}};
    if (out.fresh) {
      modules_.emplace_back();
      bases_.push_back(obj.base);
    }
    RedirectedModule& m = modules_[index];
    m.path = obj.path;
    m.base = obj.base;
    m.slots = r.slots_redirected;
    m.error = r.error ? r.error : "";
    out.names = Names(r.symbols, table, n, &m.symbols);
    out.own = Names(r.defined, table, n, &m.own);
    for (const DataSlot& d : r.data) RecordVariable(d, table, &m, &out.news);
    out.module = &m;
    return out;
  }

  const std::vector<RedirectedModule>& modules() const { return modules_; }
  RedirectedModule* Find(uintptr_t base, const std::string& path) {
    for (size_t i = 0; i < modules_.size(); i++)
      if (bases_[i] == base && modules_[i].path == path) return &modules_[i];
    return nullptr;
  }

 private:
  static std::string Names(uint64_t mask, const ImportRedirect* table, size_t n, std::vector<std::string>* out) {
    out->clear();
    std::string text;
    for (size_t i = 0; i < n; i++) {
      if (!(mask & (1ull << i))) continue;
      out->push_back(table[i].symbol);
      if (!text.empty()) text += ", ";
      text += table[i].symbol;
    }
    return text;
  }

  static void RecordVariable(const DataSlot& d, const ImportRedirect* table, RedirectedModule* m,
                             std::vector<RedirectedVariable>* news) {
    RedirectedVariable* v = nullptr;
    for (RedirectedVariable& known : m->variables)
      if (known.slot == d.slot) v = &known;
    if (v == nullptr) {
      m->variables.emplace_back();
      v = &m->variables.back();
      v->slot = d.slot;
      v->symbol = table[d.entry].symbol;
      v->first_held = d.held;
      v->owned_at_install = d.program_owned;
      v->held = d.held;
      v->redirected = d.redirected;
      news->push_back(*v);
      return;
    }
    v->held = d.held;
    v->redirected = d.redirected;
    if (d.program_owned && !v->owned_at_install && !v->owned_later) {
      v->owned_later = true;
      news->push_back(*v);
    }
  }

  std::vector<RedirectedModule> modules_;
  std::vector<uintptr_t> bases_;  // same order as modules_
};

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_REDIRECTED_MODULES_H_
