#ifndef MATE_BINDING_EVENT_JSON_H_
#define MATE_BINDING_EVENT_JSON_H_

#include <string>
#include <vector>

#include "report/report_event.h"

namespace mate {

// A violation found in-process, as its event (JSON): the TS side renders,
// prints and files it.
inline std::string EventJson(const Violation& v) {
  std::vector<char> json(160 * 1024);
  Writer w(json.data(), json.size());
  FormatEvent(v, &w);
  return std::string(w.data(), w.size());
}

}  // namespace mate

#endif  // MATE_BINDING_EVENT_JSON_H_
