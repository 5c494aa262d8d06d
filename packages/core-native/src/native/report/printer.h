#ifndef MATE_REPORT_PRINTER_H_
#define MATE_REPORT_PRINTER_H_

#include "report/violation.h"

namespace mate {

// A dying process does not format its own report: it writes the event and
// starts the report printer, mate-guard-print beside this library (no Node,
// no Python: it symbolizes frames with llvm-symbolizer or addr2line, matches
// the run's suppressions and renders the report with the one formatter),
// which writes the text back into the event and prints it on this
// process's stderr. Configured at install (copies the string); false when
// it does not fit. `path_env`: PATH for the symbolizers. `with_earlier`:
// nobody outlives this process to show what it reported earlier (it owns
// the run, or there is no run): the printer shows those reports too.
bool ConfigurePrinter(const char* path_env, bool with_earlier);

// Finds mate-guard-print beside the library this code is in (the addon,
// libmate_guard_cuda.so), and records this process's executable in its
// events (event_origin.h).
void ConfigureNativePrinter();

// Where reports are printed: stderr (2) unless a host redirects its own
// stderr while the program runs (pytest captures fd 2 during each test and
// a dying process would take the report with it): then a copy of the real
// stderr made before. Set at install.
void SetReportFd(int fd);

// Runs the printer on `event_file` and waits at most `timeout_ms`; true when
// it printed the report. Async-signal-safe (vfork + execve + waitpid).
bool RunPrinter(const char* event_file, int timeout_ms);

// When the printer could not run: the headline, the test, and where the
// event is. Async-signal-safe.
void PrintFallback(const Violation& v, const char* event_file);

// `n` bytes of text where reports go (SetReportFd). Async-signal-safe.
void PrintToReportFd(const char* text, size_t n);

}  // namespace mate

#endif  // MATE_REPORT_PRINTER_H_
