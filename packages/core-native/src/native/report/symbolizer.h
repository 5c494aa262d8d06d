#ifndef MATE_REPORT_SYMBOLIZER_H_
#define MATE_REPORT_SYMBOLIZER_H_

// Native frames (module + offset) given function, file:line and inlined
// calls by llvm-symbolizer, else addr2line, found on the search path, else
// a function name from the object's own ELF symbols (no tool installed):
// the one symbolizer, for Node (through the addon), Python and the crash
// printer. Frames already symbolized (they have `source`) are left alone; a
// frame nothing could name gets `source: none`. Bounded by the timeout in
// all (the tools stop a fifth early, so a hung tool leaves time for the ELF
// names). Answers are cached per process by module and address.
#include <string>

#include "report/format/json_value.h"

namespace mate {

struct SymbolizeOptions {
  std::string search_path;  // where the tools are looked for (PATH)
  int timeout_ms = 5000;
  std::string llvm_symbolizer;  // a pinned tool ("" : found on the path)
  std::string addr2line;
  bool no_llvm_symbolizer = false;  // a tool turned off
  bool no_addr2line = false;
  bool cache = true;
};

// The event's native stacks: accessStack, allocation.allocFrames and allocation.freeFrames.
void SymbolizeEvent(JsonValue* event, const std::string& search_path, int timeout_ms);
// A list of frames ({module, offset, returnAddress, pc}), in place.
void SymbolizeFrames(JsonValue* frames, const SymbolizeOptions& o);
// Forgets every cached answer.
void ClearSymbolCache();

}  // namespace mate

#endif  // MATE_REPORT_SYMBOLIZER_H_
