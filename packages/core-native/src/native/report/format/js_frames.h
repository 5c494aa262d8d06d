#ifndef MATE_REPORT_FORMAT_JS_FRAMES_H_
#define MATE_REPORT_FORMAT_JS_FRAMES_H_

// JS and Python stacks (V8-style `    at fn (file:line:col)` lines) cut to
// the user's own frames: the runners', node's, the interpreter's,
// installed Python packages' and mate-guard's are counted, not shown.
#include <stddef.h>

#include <string>
#include <vector>

#include "report/format/format_options.h"

namespace mate {

struct TrimmedStack {
  std::vector<std::string> frames;  // the kept lines, as written
  size_t dropped = 0;
};

// Where a stack line points (a path, `node:...`, `<anonymous>`); false for a line that is no frame.
bool JsFrameLocation(const std::string& line, std::string* location);
bool IsMachineryFrame(const std::string& line, const FormatOptions& o);
// With no user frame left, the innermost kRunnerFramesShown frames are
// kept (the runner's frames are then the only clue) and the rest dropped.
constexpr size_t kRunnerFramesShown = 3;
TrimmedStack TrimJsStack(const std::string& stack, const FormatOptions& o);
// Whether a stack was written by Python (its first frame is in a `.py` file
// or a frozen module): the host guard of a Python process writes its stacks
// V8-style, and the report names the language it shows.
bool IsPythonStack(const std::string& stack);
// `… 7 runner frames`.
std::string DroppedFramesLine(size_t dropped);
// A line trimmed of surrounding whitespace.
std::string Trim(const std::string& s);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_JS_FRAMES_H_
