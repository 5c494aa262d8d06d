#ifndef MATE_PLATFORM_GUARD_PAGES_H_
#define MATE_PLATFORM_GUARD_PAGES_H_

#include <cstddef>
#include <cstdint>

// OS-specific page operations. The allocator only speaks in these terms.
namespace mate {
namespace platform {

size_t PageSize();
// Reserves address space that costs no memory and faults on access.
void* ReserveRegion(size_t bytes);
// True when the kernel supports MADV_GUARD_INSTALL (Linux >= 6.13).
bool HasGuardInstall();
// madvise-guard: the region is made readable+writable in chunks, and
// guard markers (no extra mappings) make pages fault.
bool CommitChunk(void* addr, size_t bytes);
bool InstallGuard(void* addr, size_t bytes);  // also discards contents
bool RemoveGuard(void* addr, size_t bytes);   // pages read as zero after
// The same over many separate ranges, in one system call where the kernel
// takes guard advice through process_madvise (else one call per range).
struct PageRange {
  void* addr;
  size_t bytes;
};
bool InstallGuards(const PageRange* ranges, size_t n);
bool RemoveGuards(const PageRange* ranges, size_t n);
// Faults the ranges in for writing (their pages as the kernel zeroes them),
// in one system call where the kernel takes MADV_POPULATE_WRITE through
// process_madvise: no page-fault exception per page. False: some may not
// be; they fault in on first touch as before.
bool PopulateWrite(const PageRange* ranges, size_t n);
// mprotect: every protection change may split a mapping.
bool ProtectNone(void* addr, size_t bytes);  // also discards contents
bool ProtectReadWrite(void* addr, size_t bytes);
// Kept slots: PROT_NONE without discarding the contents (the page stays,
// so opening again needs no fault), and a mapping flag that only guard
// pages carry, so a closed data page never merges with its guards.
bool ProtectNoneKeep(void* addr, size_t bytes);
bool MarkGuardMapping(void* addr, size_t bytes);
// vm.max_map_count, or a conservative default when it can't be read.
uint64_t MaxMapCount();

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_GUARD_PAGES_H_
