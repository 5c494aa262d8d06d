#ifndef MATE_PLATFORM_PRIVATE_FILES_H_
#define MATE_PLATFORM_PRIVATE_FILES_H_

#include <string>

// Report folders and files nobody else can plant or redirect: files are
// created new (O_CREAT|O_EXCL|O_NOFOLLOW), never through a link or over a
// file someone else put there; a process with no report folder given gets
// a fresh one of its own under a per-user parent, <tmp>/mate-guard-<uid>/
// (0700, owner and mode checked). Mirrors run/private-files.ts.
namespace mate {
namespace platform {

// A new file for writing at `path` (removing a stale one of that name
// first, a link itself rather than what it points to): the descriptor, or
// -1. Async-signal-safe (the fault handler writes reports with it).
int OpenNewFile(const char* path);
// `path` opened for appending, created if absent, never through a link: -1 on failure.
int OpenAppendFile(const char* path);
// A fresh folder (mkdtemp) named `<prefix>XXXXXX` under <tmp>/mate-guard-<uid>/,
// which is made 0700 when absent and refused when it is a link, another
// user's or open to others: false, with `why`, then.
bool FreshPrivateDir(const char* prefix, std::string* dir, std::string* why);
// The report folder given (`dir`), made with its missing parents as
// `mkdir -p` does (0755 before the umask; a level made here is never a
// link), and checked to be a folder this process can write in: false, with
// `why` naming the path, otherwise. A folder that cannot hold reports is
// refused at install: every violation's report would be lost.
bool MakeReportDir(const std::string& dir, std::string* why);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_PRIVATE_FILES_H_
