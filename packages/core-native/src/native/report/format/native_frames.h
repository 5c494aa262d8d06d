#ifndef MATE_REPORT_FORMAT_NATIVE_FRAMES_H_
#define MATE_REPORT_FORMAT_NATIVE_FRAMES_H_

// Symbolized native frames printed the way sanitizers print them:
//   #0 FillInclusive examples/addon/src/buggy.cc:36 (buggy_addon.node+0x62a8)
// One line per machine frame, numbered from the access (#0) outwards; code
// inlined into a frame gets #N.1, #N.2 ... so #N always matches frames[N].
#include <string>

#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/text_parts.h"

namespace mate {

// A demangled name cut to what a reader scans for: no return type,
// parameters or qualifiers, no `(anonymous namespace)::`, long template
// arguments and enclosing parameter lists elided (`<…>`, `(…)`).
std::string ShortFunctionName(const std::string& name);

// The host runtime (node, python) or a system library it runs on (libc,
// libstdc++, libpython, libtorch, libcuda...): never the user's code.
bool IsRuntimeModule(const std::string& module, const FormatOptions& o);
// Only the host runtime itself: where it called into the user's module.
bool IsHostRuntime(const std::string& module, const FormatOptions& o);

// `title:` and the frames of `stack` ({unwind, frames}). The rule for
// frames: #0 (where it happened) is shown; the runtime frames between it
// and the first frame of a module that is not the runtime are folded into
// one line naming what it hides (and what that frame called) when there
// are more than three or any is the host runtime's own (up to three system
// library frames, such as raise and abort, stay shown);
// that frame and the frames below it are shown
// down to the host runtime calling in, and the runtime's frames below are counted.
Lines NativeLines(const std::string& title, const JsonValue& stack, const FormatOptions& o);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_NATIVE_FRAMES_H_
