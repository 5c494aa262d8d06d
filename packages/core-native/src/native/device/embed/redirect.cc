#include "device/embed/redirect.h"

#include "device/embed/c_api.h"
#include "platform/import_redirector.h"
#include "platform/load_watch.h"

namespace mate {
namespace device {

namespace {

platform::ImportRedirector& Redirector() {
  static platform::ImportRedirector* r = [] {
    static platform::ImportRedirect table[32];
    size_t n = 0, count = 0;
    const ReplacementEntry* e = CudaReplacements(&count);
    for (size_t i = 0; i < count && n < sizeof(table) / sizeof(table[0]); i++)
      table[n++] = platform::ImportRedirect{e[i].symbol, e[i].fn};
    // Every addon and the chosen modules; never the runtimes, Node or
    // NVIDIA's own libraries.
    return new platform::ImportRedirector(
        {"cuda", table, n, platform::Choose::kGlobsAndAddons,
         platform::kNeverLoader | platform::kNeverRuntime | platform::kNeverNode | platform::kNeverNvidia});
  }();
  return *r;  // never destroyed: calls may come during exit
}

}  // namespace

void StartRedirect(const RedirectOptions& options) {
  Redirector().Start(options.globs, options.log, reinterpret_cast<const void*>(&StartRedirect));
  platform::WatchLoads(&RefreshRedirect);
}

void RefreshRedirect() { Redirector().Refresh(); }

std::vector<RedirectedModule> RedirectedModules() { return Redirector().Modules(); }

}  // namespace device
}  // namespace mate
