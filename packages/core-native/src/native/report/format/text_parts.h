#ifndef MATE_REPORT_FORMAT_TEXT_PARTS_H_
#define MATE_REPORT_FORMAT_TEXT_PARTS_H_

// The small pieces every text report is made of: byte counts, paths,
// numbers as JavaScript printed them (the reports were first written in TS
// and are pinned byte for byte).
#include <stdint.h>

#include <string>
#include <vector>

#include "report/format/format_options.h"
#include "report/format/json_value.h"

namespace mate {

using Lines = std::vector<std::string>;

inline void Append(Lines* to, const Lines& more) { to->insert(to->end(), more.begin(), more.end()); }

// A number field as JS prints it (`64`, `1.5`); "0" when absent.
std::string NumText(const JsonValue& v);
// `1 byte`, `64 bytes`.
std::string Bytes(const JsonValue& n);
std::string Bytes(uint64_t n);
std::string Hex(uint64_t v);  // 0x1f
std::string Basename(const std::string& p);
std::string Dirname(const std::string& p);
bool StartsWith(const std::string& s, const char* prefix);
bool EndsWith(const std::string& s, const char* suffix);
// A path relative to `cwd` when inside it, else as given.
std::string RelativeToCwd(const std::string& p, const FormatOptions& o);
// `past the end of`, `before the start of`, `inside`.
const char* RelationText(const std::string& relation);
std::string Plural(uint64_t n, const char* one, const char* many);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_TEXT_PARTS_H_
