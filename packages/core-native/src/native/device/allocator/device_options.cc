#include "device/allocator/device_options.h"

#include <stdio.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mate {
namespace device {

DeviceConfig DeviceConfigFrom(const Options& o, bool sync_on_free_default) {
  DeviceConfig c;
  c.settings = o;  // every setting as given: a new one needs no line here
  c.tail_mode = o.mode == Mode::kTail;
  // deviceExactPlacement: every device allocation's last byte against the
  // guard granule (a kernel reading one element past a tensor faults).
  c.alignment = o.device_exact_placement && c.tail_mode ? 1 : o.alignment;
  c.sync_on_free = TristateOr(o.sync_on_free, sync_on_free_default);
  c.quarantine_max_bytes = QuarantineBytes(o, kDeviceQuarantineBytes);
  c.recycle_when_behind = o.cuda_quarantine != CudaQuarantine::kStrict;
  const char* skip = getenv("MATE_GUARD_CUDA_SKIP");  // tuning (bench/cuda)
  c.skip_canary_io = skip != nullptr && strstr(skip, "canary") != nullptr;
  // unmap: every size counts as behind, so clean freed ranges go back out
  // still mapped whenever their pool has room (what unmapping costs a loop).
  bool skip_unmap = skip != nullptr && strstr(skip, "unmap") != nullptr && c.recycle_when_behind;
  if (skip_unmap) c.behind_ns = UINT64_MAX;
  if (c.skip_canary_io || skip_unmap) {  // never silent: it turns a detection off
    static std::once_flag said;
    std::call_once(said, [&] {
      dprintf(
          2, "[mate-guard] warning: MATE_GUARD_CUDA_SKIP=%s (a bench setting):%s%s\n", skip,
          c.skip_canary_io ? " device canaries are not checked;" : "",
          skip_unmap ? " freed device ranges go back out still mapped (a stale pointer into one does not fault);" : "");
    });
  }
  return c;
}

}  // namespace device
}  // namespace mate
