#ifndef MATE_PLATFORM_REGULAR_FILE_H_
#define MATE_PLATFORM_REGULAR_FILE_H_

// Files named by something this process does not control (a report
// folder's files, an event's module): opened for reading only when they
// are regular files, so a FIFO or a device there never holds a reader.
#include <unistd.h>

#include <cstdint>

namespace mate {
namespace platform {

// A file descriptor closed when it goes out of scope.
struct OwnedFd {
  int fd;
  ~OwnedFd() {
    if (fd >= 0) close(fd);
  }
};

// `path` opened for reading (O_NONBLOCK: a FIFO is not waited on) when it
// is a regular file, its size in `*size` (may be null): the descriptor,
// or -1 (missing, unreadable, or not a regular file).
int OpenRegularFile(const char* path, uint64_t* size);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_REGULAR_FILE_H_
