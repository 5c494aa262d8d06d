#include "platform/private_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace platform
}  // namespace mate
