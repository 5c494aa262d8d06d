#ifndef MATE_HOST_HOST_GUARD_H_
#define MATE_HOST_HOST_GUARD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// The host guard without Node: the same allocator, native-heap guard and
// fault handler the Node addon uses, driven from a Python process through
// the C ABI (host_c_api.cc) and numpy's allocation handler
// (numpy_handler.cc). Settings come from the run's handoff
// (MATE_GUARD_SETTINGS, options/handoff_reader.h), as for the device guard.
namespace mate {
namespace host {

struct InstallPaths {
  int report_fd = -1;  // where reports are printed (-1: stderr; report/printer.h SetReportFd)
};

// Creates the allocator (once), installs the fault handler and readies the
// unwinder. False with `error` (bad handoff, no address space, a handler
// that could not be set).
bool Install(const char* handoff_json, const InstallPaths& paths, std::string* error);
bool Active();

// A guarded block for numpy (backend host): zero-filled with `zero`.
// nullptr when no slot could be had (counted; the caller falls back).
void* Allocate(size_t size, bool zero);
// True when `ptr` is the guard's (freed, or a bad free recorded); false:
// not ours, the caller frees it where it came from. O(1).
bool Free(void* ptr);
// The requested size of a live guarded block; false when not ours.
bool LiveSize(const void* ptr, size_t* size);

// Redirects the allocator imports of loaded and later-loaded modules whose
// path or file name matches one of `globs`.
bool GuardNative(const std::vector<std::string>& globs, std::string* error);

// The running test (interned; "" = none). Also puts the fault handler back
// in front and refreshes the module map for reports.
void SetCurrentTest(const char* name);

// Checks canaries (allocations since the last check, or all), collects
// damage found at frees made without the GIL (those made with it were
// filed and printed at once) and bad native frees: each becomes an event
// filed in the report directory (and printed when the printer runs).
// Returns how many were filed.
size_t Check(bool all);

// The counters as JSON (host allocations, native heap, numpy handler).
std::string StatsJson();

// numpy's handler counts what it let through (numpy_handler.cc).
void CountNumpyForeign();
void CountNumpyFallback();
// numpy's default handler (CountingDefaultHandler) counts what it sees after install.
void CountNumpyBeforeInstallFreed();
void CountNumpyUnguarded();

}  // namespace host
}  // namespace mate

#endif  // MATE_HOST_HOST_GUARD_H_
