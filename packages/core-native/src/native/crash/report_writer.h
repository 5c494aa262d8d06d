#ifndef MATE_CRASH_REPORT_WRITER_H_
#define MATE_CRASH_REPORT_WRITER_H_

#include <cstddef>
#include <cstdint>

#include "crash/violation.h"

namespace mate {

// Appends to a caller-owned buffer; never allocates, so the signal handler
// can use it. Output past the capacity is dropped, never overrun.
class Writer {
 public:
  Writer(char* buf, size_t cap) : buf_(buf), cap_(cap) { if (cap_) buf_[0] = '\0'; }
  void Str(const char* s);
  void Mem(const char* s, size_t n);
  void Char(char c);
  void Dec(uint64_t v);
  void Hex(uint64_t v);
  void Repeat(char c, size_t n);
  void JsonStr(const char* s);  // quoted, escaped
  const char* data() const { return buf_; }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

// Human report: every line starts with "==mate-guard== ".
void FormatReport(const Violation& v, Writer* out);
// The same event as one JSON object, the human text included.
void FormatReportJson(const Violation& v, const char* text, Writer* out);

// Where JSON reports go; set once at install (copied into a static buffer).
void SetReportDir(const char* dir);
const char* ReportDir();
// Writes `json` to <dir>/mate-guard-<pid>-<n>.json. Async-signal-safe.
bool WriteReportFile(const char* json, size_t len);

}  // namespace mate

#endif  // MATE_CRASH_REPORT_WRITER_H_
