#ifndef MATE_REPORT_FORMAT_FORMATTERS_H_
#define MATE_REPORT_FORMAT_FORMATTERS_H_

// One text formatter per kind of report; format_text.cc picks one. Lines
// come back without the `==mate-guard== ` prefix and unescaped: the
// caller makes every line safe once (escape.h).
#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/text_parts.h"

namespace mate {

// Host (JS buffers, the native heap): a bad access or canary damage, and a double or invalid free.
bool IsBadFree(const JsonValue& e);
Lines FormatAccess(const JsonValue& e, const JsonValue& a, const FormatOptions& o);
Lines FormatBadFree(const JsonValue& e, const FormatOptions& o);
// A deadly signal or an uncaught C++ exception.
Lines FormatDeath(const JsonValue& e, const JsonValue& d, const FormatOptions& o);
// `SIGABRT` for 6 (Linux's numbering, as the dying process's); `signal 77` past it.
std::string SignalName(const JsonValue& signal);
// CUDA: a kernel's exception (illegal address, device assert, others), a cross-stream free, an out-of-memory.
bool IsKernelException(const JsonValue& e);
Lines FormatKernelException(const JsonValue& e, const FormatOptions& o);
Lines FormatCrossStreamFree(const JsonValue& e, const JsonValue& a, const FormatOptions& o);
Lines FormatOutOfMemory(const JsonValue& e, const JsonValue& m);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_FORMATTERS_H_
