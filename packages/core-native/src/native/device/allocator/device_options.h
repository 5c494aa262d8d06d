#ifndef MATE_DEVICE_DEVICE_OPTIONS_H_
#define MATE_DEVICE_DEVICE_OPTIONS_H_

#include "device/allocator/device_allocator.h"
#include "options/options.h"

namespace mate {
namespace device {

// The device guard's configuration from the settings table's options, for
// the Node binding and the plain library alike: every setting with a device
// meaning reaches the device here (mode, alignment, logging, both
// quarantine bounds, syncOnFree, cudaQuarantine, launch tracking,
// blocking and input dumps); the rest of DeviceConfig is the device's own tuning.
// `sync_on_free_default`: what an unset syncOnFree means in this process.
DeviceConfig DeviceConfigFrom(const Options& o, bool sync_on_free_default);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_DEVICE_OPTIONS_H_
