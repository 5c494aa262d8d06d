#ifndef MATE_DEVICE_PYTHON_FRAME_FIELD_H_
#define MATE_DEVICE_PYTHON_FRAME_FIELD_H_

// Whether a thread that released the GIL has Python frames, told without
// taking the GIL back. PyTorch's autograd threads hold a Python thread
// state but run no Python: two thirds of a training loop's call sites
// took the GIL back only to find no frame. The field CPython keeps the
// innermost frame in (3.9/3.10 `tstate->frame`, 3.11/3.12
// `tstate->cframe->current_frame`, 3.13+ `tstate->current_frame`) is not
// public API, so it is learnt at run time from threads known to run Python,
// and used only once two captures agree on one unambiguous place.
// Only the thread itself changes that field, and only while it holds the
// GIL: read by the same thread while it released the GIL, it is stable.
namespace mate {
namespace device {

// From a capture holding the GIL: `tstate` (PyThreadState_Get) runs
// `frame` (PyEval_GetFrame, a PyFrameObject*). `interpreter_frames`: 3.11+,
// where the field holds the frame object's _PyInterpreterFrame.
void LearnFrameField(const void* tstate, const void* frame, bool interpreter_frames);
// Learnt, or given up after captures that found no single place: nothing left to learn.
bool FrameFieldSettled();

enum class ThreadFrames { kUnknown, kNone, kSome };
// For the calling thread's own state (PyGILState_GetThisThreadState, or
// PyThreadState_Get with the GIL held). kSome also sets `innermost`, where
// given: the field's value (3.11+ a _PyInterpreterFrame, before a frame object).
ThreadFrames FramesOf(const void* tstate, const void** innermost = nullptr);

}  // namespace device
}  // namespace mate

#endif  // MATE_DEVICE_PYTHON_FRAME_FIELD_H_
