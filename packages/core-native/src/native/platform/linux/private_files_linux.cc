#include "platform/private_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace mate {
namespace platform {

int OpenNewFile(const char* path) {
  unlink(path);  // a .tmp a dead write left; a link is removed, not followed
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

int OpenAppendFile(const char* path) {
  return open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
}

bool FreshPrivateDir(const char* prefix, std::string* dir, std::string* why) {
  const char* tmp = getenv("TMPDIR");
  std::string parent = std::string(tmp && *tmp ? tmp : "/tmp") + "/mate-guard-" + std::to_string(geteuid());
  if (mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = parent + ": cannot make it (errno " + std::to_string(errno) + ")";
    return false;
  }
  struct stat st;
  if (lstat(parent.c_str(), &st) != 0) {
    *why = parent + ": cannot read it";
    return false;
  }
  const char* fix = ": remove it, or give a report directory (MATE_GUARD_REPORT_DIR)";
  if (S_ISLNK(st.st_mode)) *why = parent + " is a link, not the folder mate-guard made for your reports" + fix;
  else if (!S_ISDIR(st.st_mode)) *why = parent + " is not a folder" + fix;
  else if (st.st_uid != geteuid()) *why = parent + " belongs to user " + std::to_string(st.st_uid) + ", not you" + fix;
  else if ((st.st_mode & 077) != 0) *why = parent + " is open to other users (mate-guard makes it 0700)" + fix;
  else {
    std::string tmpl = parent + "/" + prefix + "XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    if (mkdtemp(name.data()) == nullptr) {
      *why = tmpl + ": mkdtemp failed (errno " + std::to_string(errno) + ")";
      return false;
    }
    *dir = name.data();
    return true;
  }
  return false;
}

bool MakeReportDir(const std::string& dir, std::string* why) {
  if (dir.empty()) {
    *why = "the report folder is an empty path";
    return false;
  }
  struct stat st;
  // Each level from the top: one already there is used as it is (a link
  // the user put in the path is theirs to put); a missing one is made.
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0755) == 0 || errno == EEXIST) continue;
    int err = errno;
    if (stat(part.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;  // there, in a folder we may not write
    *why = "the report folder " + dir + " cannot be made: " + part + ": " + strerror(err);
    return false;
  }
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *why = "the report folder " + dir + " is not a folder";
    return false;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    *why = "the report folder " + dir + " is not writable: " + strerror(errno);
    return false;
  }
  return true;
}

}  // namespace platform
}  // namespace mate
