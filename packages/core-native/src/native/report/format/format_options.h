#ifndef MATE_REPORT_FORMAT_FORMAT_OPTIONS_H_
#define MATE_REPORT_FORMAT_FORMAT_OPTIONS_H_

#include <string>
#include <vector>

namespace mate {

// What the formatter needs to know about the reader's machine; every
// consumer (Node, Python, the crash printer) fills it the same way.
struct FormatOptions {
  // Source and module paths inside it print relative to it (default: the working directory).
  std::string cwd;
  // JS frames under these directories are machinery, counted not shown:
  // mate-guard's own packages and the runners' (Node resolves them).
  std::vector<std::string> drop_dirs;
  // The host runtime's executable (node's real path): its frames are the runtime.
  std::string runtime;
  // The event's file, when the event does not say (saved inputs are named relative to its folder).
  std::string event_file;
};

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_OPTIONS_H_
