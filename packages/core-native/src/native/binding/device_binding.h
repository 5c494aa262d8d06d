#ifndef MATE_BINDING_DEVICE_BINDING_H_
#define MATE_BINDING_DEVICE_BINDING_H_

#include <napi.h>

#include <string>
#include <vector>

namespace mate {

// Node-API surface of the CUDA device guard (configureDevice, deviceStats,
// deviceRefresh, shutdownDevice).
void AddDeviceExports(Napi::Env env, Napi::Object exports);

// Events (JSON) of device violations found since the last call; looks for a
// sticky CUDA error first (a fault the program just saw).
void TakeDeviceEvents(std::vector<std::string>* out);

}  // namespace mate

#endif  // MATE_BINDING_DEVICE_BINDING_H_
