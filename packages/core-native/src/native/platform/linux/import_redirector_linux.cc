#include "platform/import_redirector.h"

#include <stdio.h>
#include <string.h>

namespace mate {
namespace platform {

namespace {

bool EndsWith(const char* s, const char* suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

}  // namespace

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

void ImportRedirector::PatchLoaded() {
  generation_ = LoadGeneration();
  if (c_.before) c_.before();
  ForEachLoadedObject(
      [](const LoadedObject& obj, void* p) {
        auto& self = *static_cast<ImportRedirector*>(p);
        const RedirectorConfig& c = self.c_;
        if (obj.base >= self.own_lo_ && obj.base < self.own_hi_) return true;  // mate-guard itself
        if (NeverPatched(obj, c.never) || !self.Chosen(obj)) return true;
        RedirectResult r = RedirectImports(obj, c.table, c.n);
        RedirectedModuleList::Recorded rec = self.modules_.Record(obj, r, c.table, c.n);
        if (self.log_ && (rec.fresh || r.slots_written) && (r.slots_redirected > 0 || r.error || c.choose != Choose::kEveryModule)) {
          if (r.error) dprintf(2, "[mate-guard] %s: could not redirect %s: %s\n", c.name, obj.path, r.error);
          dprintf(2, "[mate-guard] %s: %s: %u import slots redirected (%s)%s%s\n", c.name, obj.path, r.slots_redirected,
                  rec.names.empty() ? "no matching imports" : rec.names.c_str(), rec.own.empty() ? "" : "; defines its own ",
                  rec.own.c_str());
        }
        return true;
      },
      this);
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
