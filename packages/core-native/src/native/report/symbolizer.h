#ifndef MATE_REPORT_SYMBOLIZER_H_
#define MATE_REPORT_SYMBOLIZER_H_

// Native frames of an event (module + offset) given function, file:line and
// inlined calls by llvm-symbolizer, else addr2line, found on `search_path`,
// else a function name from the object's own ELF symbols (no tool
// installed): for the crash printer and Python, which have no Node to do
// it. Frames already symbolized (they have `source`) are left alone; a
// frame nothing could name gets `source: none`. Bounded by `timeout_ms` in all.
#include <string>

#include "report/format/json_value.h"

namespace mate {

void SymbolizeEvent(JsonValue* event, const std::string& search_path, int timeout_ms);

}  // namespace mate

#endif  // MATE_REPORT_SYMBOLIZER_H_
