#ifndef MATE_BINDING_FORMAT_BINDING_H_
#define MATE_BINDING_FORMAT_BINDING_H_

#include <napi.h>

namespace mate {

// formatReport(eventJson, { cwd }): the one formatter
// (report/format/) for Node. A bad event gives its one-line error report.
void AddFormatExports(Napi::Env env, Napi::Object exports);

}  // namespace mate

#endif  // MATE_BINDING_FORMAT_BINDING_H_
