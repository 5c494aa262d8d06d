#ifndef MATE_DEVICE_DEVICE_REPORT_H_
#define MATE_DEVICE_DEVICE_REPORT_H_

#include <string>

#include "device/allocator/device_event.h"

namespace mate {
namespace device {

// A device finding as the one report event (report/report_event.cc
// FormatEvent: `backend` "cuda", `device`, and for illegal-address the
// candidates and launches, for cross-stream-free the streams). JSON only:
// the TS formatter renders it.
std::string DeviceEventJson(const DeviceEvent& e);

// Files the event in the report directory (report/report_file.h) and starts
// the report printer on it, which renders it and prints it on stderr; when
// the printer cannot run, prints one line naming the file (the run's owner
// prints it at the end). For processes without Node (libmate_guard_cuda.so).
void FileAndPrint(const DeviceEvent& e, const std::string& json);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_REPORT_H_
