#ifndef MATE_DEVICE_DEVICE_ALLOCATOR_H_
#define MATE_DEVICE_DEVICE_ALLOCATOR_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/free_status.h"
#include "core/canary.h"
#include "core/slot.h"
#include "device/driver/counted_lock.h"
#include "device/driver/cuda_driver.h"
#include "device/allocator/device_event.h"
#include "device/allocator/allocator_hooks.h"
#include "device/allocator/launch_use.h"
#include "device/driver/internal_calls.h"
#include "options/options.h"

namespace mate {
namespace device {

struct DeviceConfig {
  // Every setting of the settings table as given (options.inc): a device
  // setting read as it is needs no field of its own, only its row and its
  // use (config_.settings.<field>). The fields below are what the device
  // derives from the settings (DeviceConfigFrom) or tunes on its own.
  Options settings;
  bool tail_mode = true;
  uint32_t alignment = 16;
  bool sync_on_free = true;
  // Quarantined ranges are unmapped: they hold address space, never memory
  // (kDeviceQuarantineBytes unless quarantineMaxBytes is set).
  uint64_t quarantine_max_bytes = 256ull << 30;
  // Canary bytes checked on the side opposite the guard (and the alignment
  // gap on the guard side). Bounded: the slack of a 2 MiB granule is too
  // much to read back at every free.
  uint64_t canary_window = 4096;
  uint64_t reserve_bytes = 1ull << 40;         // address space reserved per block
  uint32_t prepare_ahead = 64;                 // most ready slots kept per size class
  uint64_t prepare_budget_bytes = 1ull << 30;  // memory held in ready slots
  uint64_t idle_chunk_bytes = 1ull << 30;      // freed physical chunks kept for reuse
  // Memory held by freed allocations whose unmapping is pending; a free
  // beyond it waits for the background thread (a loop freeing faster than
  // ranges can be unmapped must not pile up memory). At least this, an
  // eighth of the device's memory where that is more.
  uint64_t pending_max_bytes = 1ull << 30;
  // When allocations outrun the background thread's unmapping and mapping
  // (the driver serializes them: ~50 us per range on an H100), a freed range
  // whose canaries checked clean goes straight back out, still mapped,
  // instead of into quarantine: allocation stays fast, but a stale pointer
  // into that range no longer faults. Counted (DeviceStats::recycled); off
  // = strict quarantine, every freed range unmapped.
  bool recycle_when_behind = true;
  // How lately a size must have run out of ready ranges to count as behind.
  uint64_t behind_ns = 20000000;
  // MATE_GUARD_CUDA_SKIP=canary (tuning, bench/cuda): canary windows neither
  // filled (at allocation or ahead) nor read back (no memset, no copy: checks
  // see the fill), to measure what that traffic costs a loop.
  bool skip_canary_io = false;
};

struct DeviceStats {
  uint64_t allocations = 0;  // guarded
  uint64_t frees = 0;
  uint64_t live = 0;
  uint64_t peak_live = 0;
  uint64_t live_bytes = 0;     // requested bytes of live allocations
  uint64_t live_granules = 0;  // physical granules held by live allocations
  uint64_t fallbacks = 0;      // plain cuMemAlloc allocations
  const char* last_fallback_reason = nullptr;
  uint64_t quarantined = 0;
  uint64_t quarantined_bytes = 0;  // address space of quarantined ranges
  uint64_t chunks_created = 0;
  uint64_t physical_bytes = 0;      // created and not released
  uint64_t ready_hits = 0;          // allocations served by a ready slot
  uint64_t ready_misses = 0;        // allocations mapped on the caller's thread
  uint64_t recycled = 0;            // freed ranges handed out again without quarantine (recycle_when_behind)
  uint64_t window_fills = 0;        // allocations whose canary windows were filled on the caller's thread
  uint64_t filled_ahead_bytes = 0;  // canary bytes written into ranges mapped ahead (FillAhead)
  uint64_t ready_bytes = 0;         // memory in ranges mapped ahead and ready now (not those being mapped)
  uint64_t violations = 0;
  uint64_t out_of_memory = 0;  // allocations that failed for want of GPU memory (after the one retry)
  uint64_t exported = 0;       // allocations shared with another process (CUDA IPC)
  uint64_t granule = 0;
  // Time spent, for tuning (bench/): in Allocate and Free on the callers'
  // threads, and in driver work on the background thread.
  uint64_t alloc_ns = 0, free_ns = 0, background_ns = 0;
  // The background thread's passes that did work, and the driver calls it
  // made for fences (events recorded after frees, and asked about).
  uint64_t passes = 0, fence_records = 0, fence_queries = 0;
  // Frees that waited for the pending-bytes bound, and how long.
  uint64_t free_waits = 0, free_wait_ns = 0;
  // Callers' takes of the allocator's lock (allocation, free, a launch's
  // arguments) that found it held, and their wait (MATE_GUARD_CUDA_STATS only).
  uint64_t lock_waits = 0, lock_wait_ns = 0;

  // Another device's counters added in (the totals over every GPU).
  void Add(const DeviceStats& s) {
    if (granule == 0) granule = s.granule;
    if (s.last_fallback_reason) last_fallback_reason = s.last_fallback_reason;
    for (uint64_t DeviceStats::* f :
         {&DeviceStats::allocations,    &DeviceStats::frees,          &DeviceStats::live,
          &DeviceStats::peak_live,      &DeviceStats::live_bytes,     &DeviceStats::live_granules,
          &DeviceStats::fallbacks,      &DeviceStats::quarantined,    &DeviceStats::quarantined_bytes,
          &DeviceStats::chunks_created, &DeviceStats::physical_bytes, &DeviceStats::ready_hits,
          &DeviceStats::ready_misses,   &DeviceStats::recycled,       &DeviceStats::window_fills,
          &DeviceStats::ready_bytes,    &DeviceStats::violations,     &DeviceStats::out_of_memory,
          &DeviceStats::exported,       &DeviceStats::alloc_ns,       &DeviceStats::free_ns,
          &DeviceStats::background_ns,  &DeviceStats::passes,         &DeviceStats::fence_records,
          &DeviceStats::fence_queries,  &DeviceStats::free_waits,     &DeviceStats::free_wait_ns,
          &DeviceStats::lock_waits,     &DeviceStats::lock_wait_ns,   &DeviceStats::filled_ahead_bytes})
      this->*f += s.*f;
  }
};

// A guarded allocation shared with another process: its chunk's file
// descriptor and the layout the other process maps it with (the guard
// granule on the same side, so an overrun faults there too). Also the C
// ABI's layout (mate_guard_ipc_export/map, the Python hook's ctypes
// structure): six 64-bit words.
struct ExportedRange {
  int64_t fd = -1;
  uint64_t chunk_bytes = 0;  // the data granules
  uint64_t offset = 0;       // of the allocation's first byte in the chunk
  uint64_t size = 0;
  uint64_t granule = 0;
  uint64_t guard_before = 0;  // 1: head mode, the guard granule lies before the data
};
static_assert(sizeof(ExportedRange) == 48, "the Python hook's layout");

// Guarded device allocations on one GPU, made with the driver's virtual
// memory API: every allocation sits at the edge of its own mapped range,
// the guard side left unmapped, canary slack on the other side. Physical
// chunks are pooled by size; ranges of common sizes are mapped ahead on a
// background thread, so an allocation normally makes no driver call. Knows
// nothing of printing or Node: violations go to the EventSink.
class DeviceAllocator {
 public:
  static DeviceAllocator* Create(const cuda::Driver* drv, int ordinal, const DeviceConfig& config, EventSink* sink,
                                 const AllocatorHooks& hooks, std::string* error);
  ~DeviceAllocator() = delete;  // lives until the process ends

  // *out is the pointer, or 0 when the allocation could not be made at all.
  // An allocation that cannot be guarded falls back to cuMemAlloc (counted).
  cuda::CUresult Allocate(size_t size, cuda::CUstream stream, uint32_t stack_id, cuda::CUdeviceptr* out, bool* guarded);
  // kNotGuarded: not ours (a fallback or foreign pointer): free it with cuMemFree.
  FreeStatus Free(cuda::CUdeviceptr ptr, cuda::CUstream stream, uint32_t stack_id);
  // Declares that `stream` uses the allocation: its frees wait for that use.
  bool RecordStream(cuda::CUdeviceptr ptr, cuda::CUstream stream);
  // Launch tracking: the allocation a kernel parameter `ptr` points into,
  // filling `out`; the use is not noted (an input dump before the launch).
  bool FindArg(cuda::CUdeviceptr ptr, ArgRef* out);
  // The words i of one launch with owners[i] == this: each that points
  // into one of our ranges fills out[i] (found[i]), and a live allocation
  // notes the use (stream, launch), which its free checks against the
  // record_stream rule. The lock is taken once for all of them (a launch
  // often passes several: a tracked launch locks once, not once per pointer).
  void NoteArgs(const uint64_t* ptrs, DeviceAllocator* const* owners, uint32_t n, const StreamUse& use, ArgRef* out,
                bool* found);
  // The record of `slot` if it still holds allocation `alloc_id`.
  bool RecordOf(uint32_t slot, uint64_t alloc_id, SlotRecord* out);
  bool Owns(cuda::CUdeviceptr ptr) const;

  // Stops the background thread (driver calls must end before the driver's
  // own teardown at exit), finishes pending canary checks, and reports a
  // sticky error nobody saw. Later frees only do bookkeeping.
  void Shutdown();
  // Polls for a sticky context error now (normally the background thread does).
  void CheckHealth(const char* where);
  // The end of a test (the pytest plugin's check): the canaries of frees
  // still pending are read back after the device's work and checked on the
  // caller's thread, so damage fails the test that freed without each free
  // waiting for the GPU; their unmapping stays with the background thread.
  void CheckPendingNow();
  // A sticky error seen elsewhere (a tracked call, launch blocking): the
  // report is made once, naming `exact_launch` when known.
  void NoteBroken(cuda::CUresult err, const char* where, uint64_t exact_launch = 0);

  // Another device of the process (device_peers.cc): every range mapped
  // now and later is made readable and writable from it too, as plain
  // cudaMalloc memory is once peer access is on (copies between devices,
  // kernels reading peer memory). No-op where the two cannot be peers.
  void GrantPeer(int peer_ordinal);

  // Another process may map a live allocation (device_ipc.cc): `out` gets
  // a file descriptor of its physical chunk (the caller closes it) and
  // where the allocation lies in it. Once shared, the chunk is never
  // handed to another allocation: at free it is released, and lives on
  // while another process still maps it. False, with `why`, when the
  // pointer is no live guarded allocation or the device cannot share.
  bool Export(cuda::CUdeviceptr ptr, ExportedRange* out, std::string* why);

  DeviceStats Stats();
  int ordinal() const { return ordinal_; }
  cuda::CUdevice device() const { return dev_; }
  cuda::CUcontext context() const { return ctx_; }  // the device's primary context, retained
  uint64_t granule() const { return granule_; }
  const DeviceConfig& config() const { return config_; }

 private:
  struct Slot;
  struct Block;
  struct Pending;
  struct Fence;
  struct ClassState {
    uint32_t target = 0;
    uint32_t preparing = 0;
    uint64_t starved_ns = 0;  // when an allocation last found (or left) no ready range
    // Ready ranges, oldest first, each with what its canary windows are
    // filled for (Slot::filled, fixed while ready): the allocation's scan
    // reads no slot.
    struct Ready {
      uint32_t idx;
      uint64_t filled;
    };
    std::deque<Ready> ready;
    // Sizes whose ranges were taken, oldest first: each range mapped ahead
    // replaces one, filled for that size alone (a loop asks for the same
    // sizes again). At most prepare_ahead.
    std::deque<uint64_t> wanted;
  };

  DeviceAllocator(const cuda::Driver* drv, int ordinal, const DeviceConfig& config, EventSink* sink,
                  const AllocatorHooks& hooks);
  bool Init(std::string* error);

  uint32_t DataGranulesFor(size_t size) const;
  Slot* SlotOf(uint32_t index) const;
  uint32_t Lookup(cuda::CUdeviceptr ptr) const;  // slot index or 0
  bool NoteArgLocked(uint32_t idx, cuda::CUdeviceptr ptr, const StreamUse& use, ArgRef* out, bool note);  // under mu_
  bool InBlocks(cuda::CUdeviceptr ptr) const;

  // Under mu_.
  uint32_t AcquireRange(uint32_t data_granules);
  void ReleaseRange(uint32_t index);
  bool TakeIdleChunk(uint32_t granules, cuda::CUmemGenericAllocationHandle* out);
  void Quarantine(uint32_t index);

  // Outside mu_: driver calls.
  cuda::CUresult CreateChunk(uint32_t granules, cuda::CUmemGenericAllocationHandle* out);
  cuda::CUresult MapSlot(uint32_t index, uint32_t data_granules, cuda::CUmemGenericAllocationHandle chunk);
  void RetireChunk(uint32_t granules, cuda::CUmemGenericAllocationHandle chunk);
  void ReleaseChunk(uint32_t granules, cuda::CUmemGenericAllocationHandle chunk);  // never pooled
  // A mapped range that holds no allocation (made ready, or failed on the
  // way): unmapped, its chunk retired, the range free again. False: still mapped.
  bool UnmapUnused(uint32_t index, cuda::CUmemGenericAllocationHandle chunk);
  uint32_t PrepareInline(uint32_t data_granules, size_t size, cuda::CUstream stream, const char** reason,
                         cuda::CUresult* result);
  // Out of memory (device_memory_pressure.cc): what the guard keeps for
  // later released (bytes given back), and the failure made known.
  uint64_t GiveBack();
  cuda::CUresult OutOfMemory(size_t size, uint64_t given_back);
  cuda::CUresult Fallback(size_t size, const char* reason, cuda::CUdeviceptr* out);
  // Allocate's steps: a range made ready ahead (0: none; counts the hit or
  // miss, wakes the background thread when short of this size); else one
  // made now (0 in *index: unguarded, the plain allocation's or the
  // failure's result returned); then its start of life as `size` bytes.
  uint32_t TakeReady(uint32_t data_granules, size_t size);
  cuda::CUresult RangeOnDemand(uint32_t data_granules, size_t size, cuda::CUstream stream, uint32_t* index,
                               cuda::CUdeviceptr* out);
  void BeginLife(Slot* s, size_t size, uint32_t data_granules, uint32_t stack_id, cuda::CUstream stream, uint64_t t0);

  void PlaceUser(SlotRecord* r, size_t size) const;
  SlotGeometry Geometry(const SlotRecord& r) const;  // canary ranges clipped to what is checked
  cuda::CUresult FillWindows(const SlotRecord& r, cuda::CUstream stream);
  cuda::CUresult FillAhead(uint32_t index, uint32_t n, uint64_t size, cuda::CUstream stream);
  cuda::CUresult ReadWindows(const SlotRecord& r, uint8_t* rb, cuda::CUstream stream);
  void CheckCanary(uint32_t index, const uint8_t* readback);
  void Finish(const Pending& p, bool check);
  Fence* NewFence(uint32_t refs);
  void DropFence(Fence* f);  // under mu_
  void CheckLive();

  // A free's parts (device_free.cc).
  struct FreeWaits;
  FreeStatus BadFree(Slot* s, cuda::CUdeviceptr ptr, std::unique_lock<std::mutex>* lock);
  void CheckStreamRule(const SlotRecord& rec, cuda::CUstream stream, FreeWaits* waits);
  // Under mu_: whether this caller must notify wake_ (see woken_).
  bool ClaimWakeLocked() {
    if (woken_) return false;
    woken_ = true;
    return true;
  }
  void FenceFree(Pending* p, const SlotRecord& rec, cuda::CUstream stream, const FreeWaits& waits);

  void Run();  // background thread
  // Pending frees whose last use is done: checked, then unmapped. `pass`
  // (pass_mu_, held) is let go once they are checked.
  bool ProcessPending(bool wait, std::unique_lock<std::mutex>* pass = nullptr);
  bool PrepareAhead();
  void Report(DeviceEvent* e);
  uint8_t* ReadbackAt(uint32_t i) const { return readback_ + static_cast<size_t>(i) * kReadbackBytes; }

  static constexpr size_t kReadbackBytes = 8192;
  static constexpr uint32_t kReadbackSlots = 512;
  // Canary windows that lie this close are read, and filled ahead, in one
  // span with the allocation's bytes (device_canary.cc): a readback slot.
  static constexpr uint64_t kJoinedWindowsMax = kReadbackBytes;

  const cuda::Driver* drv_;
  const int ordinal_;
  const DeviceConfig config_;
  EventSink* const sink_;
  const AllocatorHooks hooks_;  // the layers above, as handed in
  cuda::CUdevice dev_ = 0;
  cuda::CUcontext ctx_ = nullptr;
  uint64_t granule_ = 0;
  cuda::MemAllocationProp prop_{};
  bool exportable_ = false;  // chunks are made able to become file descriptors
  // Who may access mapped ranges: this device first, then granted peers
  // (entries written before the count is raised; read without mu_).
  static constexpr uint32_t kMaxAccess = 64;
  cuda::MemAccessDesc access_[kMaxAccess]{};
  uint32_t access_count_ = 1;
  cuda::CUstream prep_stream_ = nullptr;
  cuda::CUstream order_stream_ = nullptr;  // canary reads after waits on several streams
  uint8_t* readback_ = nullptr;            // pinned host memory

  Slot* slots_ = nullptr;  // index 0 unused
  uint32_t max_slots_ = 0;
  std::vector<Block*> blocks_;  // appended under mu_, read without it (fixed capacity)
  uint32_t block_count_ = 0;

  std::mutex mu_;
  LockWaits caller_waits_;  // mu_ taken on a caller's thread and found held (counted)
  std::unique_lock<std::mutex> CallerLock() { return CountedLock(mu_, &caller_waits_); }
  std::mutex pass_mu_;  // one batch of pending frees in hand at a time (CheckPendingNow waits for the background's)
  std::condition_variable wake_;  // background thread
  // A wake-up is on its way or the background thread has not yet begun its
  // next pass (under mu_): callers skip the notify, a futex call each, and
  // the thread does not sleep on it. Cleared as a pass begins.
  bool woken_ = false;
  std::condition_variable readback_free_;
  uint32_t slot_count_ = 0;
  std::unordered_map<uint32_t, std::vector<uint32_t>> free_ranges_;  // total granules -> slots
  std::unordered_map<uint32_t, std::vector<cuda::CUmemGenericAllocationHandle>> idle_chunks_;
  uint64_t idle_bytes_ = 0;
  std::unordered_map<uint32_t, ClassState> classes_;  // data granules -> ready slots
  uint64_t ready_bytes_ = 0;
  std::deque<Pending*> pending_;
  uint64_t pending_bytes_ = 0;      // memory held by frees not yet unmapped
  uint64_t pending_max_bytes_ = 0;  // config_.pending_max_bytes, or an eighth of the device where more (Init)
  std::vector<cuda::CUevent> events_;
  std::vector<uint32_t> readback_slots_;
  std::deque<uint32_t> quarantine_;
  DeviceStats stats_;

  std::thread thread_;
  bool stop_ = false;
  bool shut_down_ = false;
  int broken_ = 0;                       // a sticky error was seen: no more driver calls
  bool broken_reported_ = false;         // ... and reported (once)
  std::condition_variable broken_seen_;  // a report waiting for launch blocking's own
};

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_ALLOCATOR_H_
