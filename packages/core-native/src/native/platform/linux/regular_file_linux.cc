#include "platform/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>

namespace mate {
namespace platform {

int OpenRegularFile(const char* path, uint64_t* size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  if (size != nullptr) *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace platform
}  // namespace mate
