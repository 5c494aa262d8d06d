#ifndef MATE_DEVICE_PYTHON_SITE_H_
#define MATE_DEVICE_PYTHON_SITE_H_

#include <cstdint>

// The Python stack of the calling thread, for reports from a Python
// process (libmate_guard_cuda.so under PyTorch): where a tensor was
// allocated, where a kernel was launched. Read through CPython's C API,
// found in the process with dlsym (nothing linked), and only when this
// thread holds the GIL (PyTorch's autograd threads may not: no stack).
// Frames are written like V8's (`    at fn (/path/file.py:12)`, innermost
// first) so one trimmer serves both.
namespace mate {
namespace device {

// An interned StackStore id, 0 when no Python stack is available.
uint32_t CapturePythonStack();

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_PYTHON_SITE_H_
