#include "platform/import_redirector.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

namespace mate {
namespace platform {

namespace {

bool EndsWith(const char* s, const char* suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return std::string(buf, n < 0 ? 0 : (static_cast<size_t>(n) < sizeof(buf) ? n : sizeof(buf) - 1));
}

// `name (module+0xoff)` for a variable or function, as far as the dynamic
// symbols tell; `module+0xoff` for a static one.
std::string Describe(const void* addr) {
  Dl_info info{};
  void* extra = nullptr;
  if (dladdr1(addr, &info, &extra, RTLD_DL_SYMENT) == 0 || info.dli_fname == nullptr) return Format("%p", addr);
  const auto* sym = static_cast<const ElfW(Sym)*>(extra);
  auto a = reinterpret_cast<uintptr_t>(addr), base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  std::string where = Format("%s+0x%lx", ModuleBaseName(info.dli_fname), static_cast<unsigned long>(a - base));
  auto start = reinterpret_cast<uintptr_t>(info.dli_saddr);
  bool inside = info.dli_sname != nullptr && sym != nullptr && a >= start && (a == start || a < start + sym->st_size);
  return inside ? Format("%s (%s)", info.dli_sname, where.c_str()) : where;
}

// A symbol as a user reads it (demangled), cut short when long.
std::string Readable(const std::string& mangled) {
  int status = -1;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? d : mangled;
  free(d);
  constexpr size_t kMax = 160;
  if (out.size() > kMax) out = out.substr(0, kMax - 3) + "...";
  return out;
}

std::string ReboundLine(const char* name, const std::string& path, const OwnBindResult& b) {
  std::string first;
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < b.names.size() && i < kShown; i++) first += (i ? "; " : "") + Readable(b.names[i]);
  if (b.names.size() > kShown) first += Format("; and %zu more", b.names.size() - kShown);
  return Format(
      "[mate-guard] %s: %s: %zu of its own weak functions re-bound to its own definitions (another module's copy, e.g. "
      "node's C++ templates, served its calls; as RTLD_DEEPBIND would): %s\n",
      name, path.c_str(), b.names.size(), first.c_str());
}

}  // namespace

// One line per variable first seen or found set by the program.
std::string VariableLine(const char* name, const char* path, const RedirectedVariable& v) {
  std::string var = Describe(reinterpret_cast<const void*>(v.slot));
  if (v.owned_at_install)
    return Format(
        "[mate-guard] %s: %s: variable %s, initialised to %s, left alone: the program set it to %s (its own allocator) "
        "before mate-guard saw it\n",
        name, path, var.c_str(), v.symbol.c_str(), Describe(v.first_held).c_str());
  if (v.owned_later)
    return Format(
        "[mate-guard] %s: %s: variable %s, initialised to %s, left alone from now on: the program set it to %s (its "
        "own allocator)\n",
        name, path, var.c_str(), v.symbol.c_str(), Describe(v.held).c_str());
  return Format(
      "[mate-guard] %s: %s: variable %s still held libc's %s: redirected (it is left alone once the program sets it)\n",
      name, path, var.c_str(), v.symbol.c_str());
}

void ImportRedirector::Start(const std::vector<std::string>& globs, bool log, const void* self) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_) {
    ObjectRange(self, &own_lo_, &own_hi_);
    log_ = log;
    started_ = true;
  }
  for (const std::string& g : globs) {
    bool known = false;
    for (const std::string& h : globs_) known = known || h == g;
    if (!known) {
      globs_.push_back(g);
      matched_.push_back(false);
    }
  }
  PatchLoaded();
}

bool ImportRedirector::Started() {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

void ImportRedirector::Refresh() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || LoadGeneration() == generation_) return;
  PatchLoaded();
}

bool ImportRedirector::Chosen(const LoadedObject& obj) {
  bool any = c_.choose == Choose::kEveryModule || (c_.choose == Choose::kGlobsAndAddons && EndsWith(obj.path, ".node"));
  for (size_t g = 0; g < globs_.size(); g++) {
    if (!GlobChooses(globs_[g], obj.path)) continue;
    matched_[g] = true;
    any = true;
  }
  return any;
}

bool ImportRedirector::Takes(const LoadedObject& obj) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || (obj.base >= own_lo_ && obj.base < own_hi_) || NeverPatched(obj, c_.never)) return false;
  if (c_.choose == Choose::kEveryModule || (c_.choose == Choose::kGlobsAndAddons && EndsWith(obj.path, ".node")))
    return true;
  for (const std::string& g : globs_)
    if (GlobChooses(g, obj.path)) return true;
  return false;
}

void ImportRedirector::PatchLoaded() {
  generation_ = LoadGeneration();
  if (c_.before) c_.before();
  struct Pass {
    ImportRedirector* self;
    std::string log;  // written after the pass: naming a variable asks the loader (dladdr)
    std::vector<std::pair<std::string, RedirectedVariable>> variables;
    std::vector<std::pair<LoadedObject, std::string>>
        bind;  // fresh loads whose own weak functions win (after the pass: dlsym)
  } pass{this, {}, {}, {}};
  ForEachLoadedObject(
      [](const LoadedObject& obj, void* p) {
        auto& pass = *static_cast<Pass*>(p);
        auto& self = *pass.self;
        const RedirectorConfig& c = self.c_;
        if (obj.base >= self.own_lo_ && obj.base < self.own_hi_) return true;  // mate-guard itself
        if (NeverPatched(obj, c.never) || !self.Chosen(obj)) return true;
        if (c.skip && c.skip(obj)) return true;
        std::vector<uintptr_t> owned = self.modules_.OwnedSlots(obj);
        RedirectResult r = RedirectImports(obj, c.table, c.n, &owned);
        RedirectedModuleList::Recorded rec = self.modules_.Record(obj, r, c.table, c.n);
        if (rec.fresh && c.bind_own_weak) pass.bind.emplace_back(obj, obj.path);
        if (rec.fresh && c.noted_imports != nullptr) {
          uint64_t mask = ImportedNames(obj, c.noted_imports, c.noted_count);
          for (size_t i = 0; i < c.noted_count; i++)
            if (mask & (1ull << i)) rec.module->noted_imports.push_back(c.noted_imports[i]);
        }
        if (c.patched) c.patched(obj);
        if (!self.log_) return true;
        if ((rec.fresh || r.slots_written) && (r.slots_redirected > 0 || r.error || c.choose != Choose::kEveryModule)) {
          if (r.error) pass.log += Format("[mate-guard] %s: could not redirect %s: %s\n", c.name, obj.path, r.error);
          pass.log += Format("[mate-guard] %s: %s: %u import slots redirected (%s)%s%s\n", c.name, obj.path,
                             r.slots_redirected, rec.names.empty() ? "no matching imports" : rec.names.c_str(),
                             rec.own.empty() ? "" : "; defines its own ", rec.own.c_str());
        }
        for (const RedirectedVariable& v : rec.news) pass.variables.emplace_back(obj.path, v);
        return true;
      },
      &pass);
  for (auto& [obj, path] : pass.bind) {
    obj.path = path.c_str();
    OwnBindResult b = BindOwnWeakFunctions(obj, c_.table, c_.n);
    if (RedirectedModule* m = modules_.Find(obj.base, path)) {
      m->own_bound_slots = b.slots;
      m->rebound = b.names;
    }
    if (!log_) continue;
    if (b.error)
      pass.log += Format("[mate-guard] %s: %s: could not bind its own weak functions to itself: %s\n", c_.name,
                         path.c_str(), b.error);
    if (!b.names.empty()) pass.log += ReboundLine(c_.name, path, b);
  }
  if (!log_) return;
  for (const auto& [path, v] : pass.variables) pass.log += VariableLine(c_.name, path.c_str(), v);
  if (!pass.log.empty()) (void)!write(2, pass.log.data(), pass.log.size());
}

std::vector<RedirectedModule> ImportRedirector::Modules() {
  std::lock_guard<std::mutex> lock(mu_);
  return modules_.modules();
}

std::vector<std::string> ImportRedirector::Globs() {
  std::lock_guard<std::mutex> lock(mu_);
  return globs_;
}

std::vector<std::string> ImportRedirector::UnmatchedGlobs() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (size_t i = 0; i < globs_.size(); i++)
    if (!matched_[i]) out.push_back(globs_[i]);
  return out;
}

uint64_t ImportRedirector::SlotsRedirected() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const RedirectedModule& m : modules_.modules()) n += m.slots;
  return n;
}

}  // namespace platform
}  // namespace mate
