#ifndef MATE_DEVICE_PYTHON_SITE_H_
#define MATE_DEVICE_PYTHON_SITE_H_

#include <cstdint>

// The Python stack of the calling thread, for reports from a Python
// process (libmate_guard_cuda.so under PyTorch): where a tensor was
// allocated, where a kernel was launched. Read through CPython's C API,
// found in the process with dlsym (nothing linked), and only when this
// thread runs Python: it holds the GIL, or released it around the C++ call
// we are in (PyTorch's ops, Triton's launcher), and then takes it back for
// the walk. Threads Python never ran on (autograd's backward threads) get
// no stack. Caveat: a program whose other thread calls CUDA while holding
// the GIL could make that wait; `captureStacks: false` (guard-run
// --no-capture-stacks) turns Python stacks off.
// Frames are written like V8's (`    at fn (/path/file.py:12)`, innermost
// first) so one trimmer serves both.
namespace mate {
namespace device {

// An interned StackStore id, 0 when no Python stack is available.
uint32_t CapturePythonStack();
void SetPythonStacks(bool on);  // off at shutdown, and with captureStacks off

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_PYTHON_SITE_H_
