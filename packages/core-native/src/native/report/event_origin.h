#ifndef MATE_REPORT_EVENT_ORIGIN_H_
#define MATE_REPORT_EVENT_ORIGIN_H_

#include "report/writer.h"

namespace mate {

// What a reader needs to render this process's events as this process would:
// its runtime's executable (its frames are the runtime, folded) and the
// folders whose JS frames are machinery (mate-guard's and the runners',
// which only Node knows). Recorded in every event, so the same event file
// renders the same whoever renders it. Set at install, read by the writers
// (async-signal-safe: fixed buffers, no allocation).
void SetEventRuntime(const char* executable);
// `dirs`: newline-separated folders; longer lists than the buffer holds keep none.
void SetEventMachineryDirs(const char* dirs);
// `packages`: newline-separated package names (`jest-*`, `@jest/*`: JS frames
// in node_modules/<name>/ are machinery, as the runners' adapters declare);
// longer lists than the buffer holds keep none.
void SetEventMachineryPackages(const char* packages);
// `,"runtime":...,"machineryDirs":[...],"machineryPackages":[...]` (runtime null when unknown).
void WriteEventOrigin(Writer* w);

}  // namespace mate

#endif  // MATE_REPORT_EVENT_ORIGIN_H_
