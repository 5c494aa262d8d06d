#ifndef MATE_REPORT_FORMAT_SUPPRESSIONS_H_
#define MATE_REPORT_FORMAT_SUPPRESSIONS_H_

// Suppressions: known violations (a third-party module's bug whose fix is
// pending) that are counted, not failed. One small text format and one
// matcher, used by Node (through the addon), by the crash printer and by
// Python alike; report_parts' suppression line is the ready-to-paste rule.
//
//   # comment
//   <kind|*> <field>=<glob> [<field>=<glob> ...]
//
// Fields (every one given must match; at least one):
//   function=   the function of a frame: the access stack's native frames
//               (full demangled name, or as a report prints it) and the
//               allocation stack's frames (JS or native)
//   module=     a native frame's module (absolute path or file name)
//   access=     any part of an access-stack frame: function, module, source file[:line]
//   allocation= any part of an allocation-stack frame: function, file[:line[:col]], the whole frame
//   test=       the test that was running (else the one that allocated), `file > suite > test`
// A glob matches the whole string: `*` any characters, `?` one. A value with
// spaces is written as a JSON string: test="a.test.js > suite > *".
#include <string>
#include <vector>

#include "report/format/json_value.h"

namespace mate {

struct SuppressionRule {
  std::string kind;      // a report kind, or `*`
  std::string globs[5];  // function, module, access, allocation, test ("" when not given)
  bool given[5] = {false, false, false, false, false};
  std::string file;  // where it was read (as named), for `suppressed by <file>:<line>`
  int line = 0;
  std::string text;  // the line as written
};

// The rules of a suppressions file's text; false with `error` naming `file:line`, what is wrong and the format.
bool ParseSuppressions(const std::string& text, const std::string& file, std::vector<SuppressionRule>* rules,
                       std::string* error);

// The first rule that suppresses the event (its frames as symbolized), as the event records it:
// {file, line, rule}; null when none does.
JsonValue MatchSuppression(const JsonValue& event, const std::vector<SuppressionRule>& rules);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_SUPPRESSIONS_H_
