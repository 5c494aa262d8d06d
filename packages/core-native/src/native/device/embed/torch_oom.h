#ifndef MATE_DEVICE_TORCH_OOM_H_
#define MATE_DEVICE_TORCH_OOM_H_

namespace mate {
namespace device {

// Throws PyTorch's c10::OutOfMemoryError with `message` into the caller
// (PyTorch's allocator call, which raises torch.OutOfMemoryError in
// Python); where libc10's symbols cannot be found, a std::runtime_error
// (a RuntimeError in Python). Only from the pluggable allocator's hook.
[[noreturn]] void ThrowTorchOutOfMemory(const char* message);
// Any other failure: a std::runtime_error (a RuntimeError in Python).
[[noreturn]] void ThrowTorchError(const char* message);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_TORCH_OOM_H_
