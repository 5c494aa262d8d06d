#ifndef MATE_REPORT_FORMAT_FORMAT_OPTIONS_H_
#define MATE_REPORT_FORMAT_FORMAT_OPTIONS_H_

#include <string>
#include <vector>

namespace mate {

// The writing process's own view, recorded in its event (report/event_origin.h):
// the same event renders the same whoever renders it.
struct EventOrigin {
  // Its runtime's executable (node's, python's real path): its frames are the runtime.
  std::string runtime;
  // JS frames under these directories are machinery, counted not shown:
  // mate-guard's own packages and the runners' (Node resolved them).
  std::vector<std::string> machinery_dirs;
  // JS frames in `node_modules/<one of these>/` are machinery: mate-guard's
  // and the runners' packages, as their adapters declare them (Node gathered
  // them). `*` is any text within one path segment (`jest-*`, `@jest/*`).
  std::vector<std::string> machinery_packages;
};

// What the formatter needs to know about the reader's machine; every
// consumer (Node, Python, the crash printer) fills it the same way.
struct FormatOptions {
  // Source and module paths inside it print relative to it (default: the working directory).
  std::string cwd;
  // The event's file, when the event does not say (saved inputs are named relative to its folder).
  std::string event_file;
  // Never set by a caller: the event being rendered's own, filled by WithOrigin.
  EventOrigin origin;
};

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMAT_OPTIONS_H_
