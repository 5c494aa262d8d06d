#ifndef MATE_NATIVE_HEAP_NATIVE_HEAP_H_
#define MATE_NATIVE_HEAP_NATIVE_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/redirected_modules.h"

#include "core/guarded_allocator.h"

// Guards the native heap of chosen modules: their imports of malloc, free,
// operator new/delete and friends are redirected (import slots rewritten)
// to replacements that take guarded slots from the allocator. Other
// modules' allocations are never guarded; their frees pass the free router
// (free_router.h), which brings guarded pointers home.
namespace mate {
namespace native_heap {

struct Finding;

struct StartOptions {
  std::vector<std::string> globs;  // fnmatch patterns, matched against a module's path and file name
  uint32_t sample_rate = 1;        // guard one allocation in N (random, mean N); 1 = all
  uint32_t site_first = 0;         // while sampling: each call site's first K calls guarded (0: plain sampling)
  bool log = false;                // a line per patched module, alloc and free
  // Called once on each thread the first time it gets a guarded allocation
  // (the crash side gives the thread an alternate signal stack).
  void (*on_new_thread)() = nullptr;
  // The interned JS stack of an allocation made inside a call from JS
  // (0: none); asked on every thread, it answers at once off JS threads.
  uint32_t (*js_stack)() = nullptr;
  // Where set, a double or invalid free is handed to it on the freeing
  // thread as it is found, instead of waiting in the findings for the next
  // check (a Python process files it at once, as it does canary damage
  // found at a free: a process that ends by _exit, a multiprocessing
  // child, would otherwise take it along unreported).
  void (*on_bad_free)(const Finding&) = nullptr;
};

// Starts redirecting and patches the matching modules loaded now. The
// executable's own dlopen import is redirected too, so every module Node
// loads later is patched as soon as dlopen returns, before its initializer
// runs. Later calls add globs (the sample rate and log flag of the first
// call stay).
bool Start(GuardedAllocator* allocator, const StartOptions& options, std::string* error);
bool Active();

// Patches matching modules loaded since the last call; one cheap linker
// query when nothing was loaded.
void Refresh();

// What was redirected, per module.
using PatchedModule = platform::RedirectedModule;
std::vector<PatchedModule> Modules();
std::vector<std::string> Globs();
std::vector<std::string> UnmatchedGlobs();
// Import slots (free, realloc, ...) bound to the free router, over every module.
uint64_t RoutedSlots();

struct Counters {
  uint64_t guarded = 0;        // allocations given a guarded slot
  uint64_t unguarded = 0;      // allocation calls that went to libc (sampled out, or no slot)
  uint64_t foreign_frees = 0;  // frees/reallocs of pointers mate-guard did not hand out (to libc)
  uint64_t bad_frees = 0;      // double and invalid frees found (and ignored)
  uint64_t routed_frees = 0;   // guarded pointers freed or reallocated by other modules (brought home)
  // Why the unguarded ones went to libc (they add up to `unguarded`):
  uint64_t sampled_out = 0;  // nativeSampleRate
  uint64_t reentrant = 0;    // made inside a guarded allocation on the same thread (its JS stack capture)
  uint64_t no_slot = 0;      // the allocator gave no slot (its fallback reasons say why)
  uint64_t libc_blocks = 0;  // reallocs of blocks libc made (they stay libc's)
};
Counters GetCounters();

// A bad free found on a free path (any thread), kept until the next check
// (or handed to StartOptions::on_bad_free).
// (Canary damage found at free goes to the allocator's free sink.) And a
// write after free found in the foreign quarantine (foreign_quarantine.h):
// `address` the first byte written, `record` the block (user, size, its
// free's frames and test, no allocation id), `test` the test at the check.
enum class FindingKind : uint8_t { kDoubleFree, kInvalidFree, kForeignWriteAfterFree };
struct Finding {
  FindingKind kind = FindingKind::kDoubleFree;
  SlotRecord record{};      // the allocation concerned (double free: as freed the first time)
  bool has_record = false;  // invalid free of a pointer that is no allocation's: false
  uintptr_t address = 0;    // the pointer given to free/delete/realloc
  uint32_t frames = 0;      // StackStore frames of the bad free
  uint32_t test = 0;        // test running at the bad free
};
std::vector<Finding> TakeFindings();

}  // namespace native_heap
}  // namespace mate

#endif  // MATE_NATIVE_HEAP_NATIVE_HEAP_H_
