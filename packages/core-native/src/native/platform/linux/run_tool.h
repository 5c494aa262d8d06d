#ifndef MATE_PLATFORM_LINUX_RUN_TOOL_H_
#define MATE_PLATFORM_LINUX_RUN_TOOL_H_

// Runs an external tool (a symbolizer) with `input` on its stdin, within a
// deadline and an output cap: for processes that are not dying (the crash
// printer), never for a signal handler.
#include <string>
#include <vector>

namespace mate {

// The executable `name` in a PATH-style list; "" when none.
std::string FindOnPath(const std::string& name, const std::string& search_path);

// True with its stdout when it exited 0 within `timeout_ms` (killed and false otherwise).
bool RunTool(const std::string& path, const std::vector<std::string>& args, const std::string& input, int timeout_ms,
             std::string* out);

}  // namespace mate

#endif  // MATE_PLATFORM_LINUX_RUN_TOOL_H_
