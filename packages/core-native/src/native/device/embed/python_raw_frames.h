#ifndef MATE_DEVICE_PYTHON_RAW_FRAMES_H_
#define MATE_DEVICE_PYTHON_RAW_FRAMES_H_

// A thread's own Python frames read straight from CPython's interpreter
// frames (3.11+: code, previous, instruction pointer), with no GIL and no
// frame objects made. A call site already seen is then found without
// taking the GIL back (PyTorch's ops and Triton's launcher release it
// around every allocation and launch) and without PyFrame_GetBack making
// a frame object per frame walked.
// The layout is CPython's internal one, per version: it is used only once
// it has agreed with the C API's walk (the same code objects in order, one
// constant distance between instruction pointer and PyFrame_GetLasti) in
// several captures holding the GIL; one disagreement and it is never used.
// Frames the C API skips (3.12+'s entry shims, owned by the C stack) are
// learnt in those captures and skipped the same way.
// Only the thread itself changes its frames, and only while it holds the
// GIL: read by the same thread, with or without the GIL, they are stable.
namespace mate {
namespace device {

// The interpreter's Py_Version (PY_VERSION_HEX): before 3.11, or a version
// whose layout is not known, leaves raw frames unused.
void SetRawFramesVersion(unsigned long py_version);

// From a capture holding the GIL: `top` is the thread's innermost
// _PyInterpreterFrame (python_frame_field.h); `codes` and `pos` (the
// frames' PyFrame_GetLasti) are what the C API's walk found, innermost
// first, `n` of them.
void VerifyRawFrames(const void* top, void* const* codes, const int* pos, int n);
// Agreed often enough to be used; false while learning and after a disagreement.
bool RawFramesVerified();

// The frames the C API's walk would visit from `top`, innermost first.
class RawFrames {
 public:
  explicit RawFrames(const void* top) : frame_(top) {}
  // The next frame's code object and position (as PyFrame_GetLasti gives
  // it); false past the outermost frame, or where a frame can't be read.
  bool Next(void** code, int* pos);
  // A frame could not be read: the walk ended early, not at the outermost frame.
  bool Failed() const { return failed_; }

 private:
  const void* frame_;
  int steps_ = 0;
  bool failed_ = false;
  bool Fail() {
    failed_ = true;
    return false;
  }
};

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_PYTHON_RAW_FRAMES_H_
