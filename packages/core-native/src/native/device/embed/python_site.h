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

// An interned StackStore id, 0 when no Python stack is available. The walk
// ends 10 frames past the user's code (not installed packages, the stdlib,
// torch's or Triton's files: python_user_code.h), at most 40 frames.
uint32_t CapturePythonStack();
// The same, at most `max_frames` (<= 40) frames once the user's code is
// reached (a library stack deeper than that is walked through to it): host
// blocks (numpy arrays, an extension's heap) are made far more often than
// tensors, and their reports need the user's frames, not pytest's below.
uint32_t CapturePythonStackUpTo(int max_frames);
void SetPythonStacks(bool on);  // off at shutdown, and with captureStacks off

// What call sites cost, for tuning (MATE_GUARD_CUDA_STATS, bench/cuda).
struct PythonSiteStats {
  uint64_t captures = 0;       // stacks taken
  uint64_t gil_taken = 0;      // ... of which took the GIL back
  uint64_t new_stacks = 0;     // ... of which were not seen before (lines worked out)
  uint64_t raw = 0;            // ... of which were found reading the frames, no GIL (python_raw_frames.h)
  uint64_t empty = 0;          // ... of which found no Python frame on the thread
  uint64_t no_gil_needed = 0;  // ... of which without taking the GIL back (python_frame_field.h)
  uint64_t ns = 0;             // in CapturePythonStack, all of it
  uint64_t ensure_ns = 0;      // ... of which waiting to take the GIL back
};
PythonSiteStats GetPythonSiteStats();

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_PYTHON_SITE_H_
