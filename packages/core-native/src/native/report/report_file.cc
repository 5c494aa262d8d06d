#include "report/report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "platform/private_files.h"
#include "report/writer.h"

namespace mate {

namespace {
char g_report_dir[4096];
int g_report_seq = 0;
}  // namespace

void SetReportDir(const char* dir) {
  size_t n = strlen(dir);
  if (n >= sizeof(g_report_dir)) n = sizeof(g_report_dir) - 1;
  memcpy(g_report_dir, dir, n);
  g_report_dir[n] = '\0';
}

const char* ReportDir() { return g_report_dir; }

namespace {

// `json` in the new file `tmp` (never through a link, never someone else's).
bool WriteTmp(const char* tmp, const char* json, size_t len) {
  int fd = platform::OpenNewFile(tmp);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, json + done, len - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (done == len) return true;
  unlink(tmp);
  return false;
}

// Writes `json` to `tmp`, then renames it over `path`: readers only ever see
// whole files. Rename replaces a link at `path` itself, not what it points to.
bool WriteWhole(const char* tmp, const char* path, const char* json, size_t len) {
  return WriteTmp(tmp, json, len) && rename(tmp, path) == 0;
}

bool TmpPath(const char* path, char* tmp, size_t cap) {
  Writer t(tmp, cap);
  t.Str(path);
  t.Str(".tmp");
  return t.size() + 1 < cap;
}

}  // namespace

bool WriteReportFile(const char* json, size_t len, char* path, size_t cap) {
  if (g_report_dir[0] == '\0') return false;
  char tmp[4200];
  bool written = false;
  // A name no earlier process with this pid left (pid reuse over a long
  // run, or the process this one replaced: the pytest plugin's
  // continuation keeps the pid): link() never replaces a file.
  for (int tries = 0; tries < 1000; tries++) {
    Writer p(path, cap);
    p.Str(g_report_dir);
    p.Str("/mate-guard-");
    p.Dec(static_cast<uint64_t>(getpid()));
    p.Char('-');
    p.Dec(static_cast<uint64_t>(__atomic_add_fetch(&g_report_seq, 1, __ATOMIC_RELAXED)));
    p.Str(".json");
    // A truncated path would be a wrong file: none rather than that.
    if (p.size() + 1 >= cap) return false;
    if (!written) {
      if (!TmpPath(path, tmp, sizeof(tmp)) || !WriteTmp(tmp, json, len)) return false;
      written = true;
    }
    if (link(tmp, path) == 0) {
      unlink(tmp);
      return true;
    }
    if (errno != EEXIST) return rename(tmp, path) == 0;  // a file system without hard links
  }
  if (written) unlink(tmp);
  return false;
}

bool RewriteReportFile(const char* path, const char* json, size_t len) {
  char tmp[4200];
  return TmpPath(path, tmp, sizeof(tmp)) && WriteWhole(tmp, path, json, len);
}

}  // namespace mate
