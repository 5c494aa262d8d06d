// device/embed/python_frame_field: where CPython keeps a thread's innermost
// frame, learnt from captures, for each layout CPython has used (3.9/3.10
// `tstate->frame`, 3.11 and 3.12 `tstate->cframe->current_frame` at two
// offsets, 3.13+ `tstate->current_frame`), and never from a place that is
// ambiguous or reached through memory off the thread's own stack. Thread
// states and frames are laid out here as those versions lay them out; the
// real interpreters are covered end to end by python-call-sites (3.11 here,
// 3.12 on the GPU machine). What is learnt is process-wide and learnt once:
// each case runs in a child process of its own.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "check.h"
#include "in_child.h"
#include "device/embed/python_frame_field.h"

using mate::device::FrameFieldSettled;
using mate::device::FramesOf;
using mate::device::LearnFrameField;
using mate::device::ThreadFrames;

namespace {

// A PyFrameObject's head: PyObject_HEAD (refcount, type), f_back, and
// (3.11+) f_frame, the _PyInterpreterFrame the thread state points at.
struct FakeFrameObject {
  intptr_t refcnt = 1;
  const void* type = &refcnt;
  FakeFrameObject* f_back = nullptr;
  void* f_frame = nullptr;
};

// A thread state: the words before the field hold what CPython keeps
// there (other thread states, the interpreter, counters), never a frame.
struct FakeThreadState {
  alignas(8) unsigned char bytes[512];
  FakeThreadState() {
    memset(bytes, 0, sizeof(bytes));
    static int interp, next_ts;
    Put(0, nullptr);                            // prev
    Put(8, &next_ts);                           // next
    Put(16, &interp);                           // interp
    Put(24, reinterpret_cast<void*>(0x10000));  // eval_breaker / flags
  }
  void Put(size_t off, const void* p) { memcpy(bytes + off, &p, sizeof(p)); }
};

// Two captures, each with the GIL, in two different frames.
void LearnFromTwo(FakeThreadState* ts, FakeFrameObject* a, FakeFrameObject* b, bool interpreter_frames,
                  const std::function<void(FakeFrameObject*)>& enter) {
  enter(a);
  LearnFrameField(ts->bytes, a, interpreter_frames);
  enter(b);
  LearnFrameField(ts->bytes, b, interpreter_frames);
}

}  // namespace

TEST(a_313_thread_state_holds_the_interpreter_frame_directly) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             FakeThreadState ts;
             int ia = 0, ib = 0;
             FakeFrameObject a, b;
             a.f_frame = &ia;
             b.f_frame = &ib;
             constexpr size_t kCurrentFrame =
                 64;  // after eval_breaker, the status bits, recursion counters, tracing words
             LearnFromTwo(&ts, &a, &b, true, [&](FakeFrameObject* f) { ts.Put(kCurrentFrame, f->f_frame); });
             CHECK(FrameFieldSettled());
             CHECK(FramesOf(ts.bytes) == ThreadFrames::kSome);
             ts.Put(kCurrentFrame, nullptr);  // the thread runs no Python (autograd's)
             CHECK(FramesOf(ts.bytes) == ThreadFrames::kNone);
           }),
           0);
}

// 3.11: _PyCFrame {uint8_t use_tracing; current_frame; previous}; 3.12:
// {current_frame; previous}. tstate->cframe points at the eval loop's
// _PyCFrame on the thread's C stack (older than the capture's frame).
static void CFrameLayout(size_t via, bool* mate_test_failed) {
  struct CFrame {
    void* words[3] = {nullptr, nullptr, nullptr};
  } cframe;
  FakeThreadState ts;
  constexpr size_t kCFrame = 56;  // 3.12: after the status bits, recursion counters, tracing words
  ts.Put(kCFrame, &cframe);
  int ia = 0, ib = 0;
  FakeFrameObject a, b;
  a.f_frame = &ia;
  b.f_frame = &ib;
  LearnFromTwo(&ts, &a, &b, true, [&](FakeFrameObject* f) { cframe.words[via / 8] = f->f_frame; });
  CHECK(FrameFieldSettled());
  CHECK(FramesOf(ts.bytes) == ThreadFrames::kSome);
  cframe.words[via / 8] = nullptr;
  CHECK(FramesOf(ts.bytes) == ThreadFrames::kNone);
}

TEST(a_311_thread_state_reaches_the_frame_through_its_cframe_second_word) {
  CHECK_EQ(InChild([](bool* failed) { CFrameLayout(8, failed); }), 0);
}

TEST(a_312_thread_state_reaches_the_frame_through_its_cframe_first_word) {
  CHECK_EQ(InChild([](bool* failed) { CFrameLayout(0, failed); }), 0);
}

TEST(a_310_thread_state_holds_the_frame_object_itself) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             FakeThreadState ts;
             FakeFrameObject a, b;
             constexpr size_t kFrame = 24;  // prev, next, interp, frame
             LearnFromTwo(&ts, &a, &b, false, [&](FakeFrameObject* f) { ts.Put(kFrame, f); });
             CHECK(FrameFieldSettled());
             CHECK(FramesOf(ts.bytes) == ThreadFrames::kSome);
             ts.Put(kFrame, nullptr);
             CHECK(FramesOf(ts.bytes) == ThreadFrames::kNone);
           }),
           0);
}

TEST(a_frame_found_in_two_places_is_never_learnt_and_learning_gives_up) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             FakeThreadState ts;
             int targets[10] = {};
             for (int i = 0; i < 10; i++) {
               FakeFrameObject f;
               f.f_frame = &targets[i];
               ts.Put(64, f.f_frame);
               ts.Put(96, f.f_frame);  // the same pointer twice: which one is the field?
               LearnFrameField(ts.bytes, &f, true);
             }
             CHECK(FrameFieldSettled());  // given up: no capture waits on learning any more
             CHECK(FramesOf(ts.bytes) == ThreadFrames::kUnknown);
           }),
           0);
}

TEST(a_frame_reached_only_through_memory_off_the_thread_stack_is_not_learnt) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             FakeThreadState ts;
             // A struct on the heap, not the thread's stack: never read, so
             // the frame in it is found nowhere.
             void** heap_cframe = static_cast<void**>(calloc(3, sizeof(void*)));
             ts.Put(56, heap_cframe);
             int targets[10] = {};
             for (int i = 0; i < 10; i++) {
               FakeFrameObject f;
               f.f_frame = &targets[i];
               heap_cframe[0] = f.f_frame;
               LearnFrameField(ts.bytes, &f, true);
             }
             CHECK(FrameFieldSettled());
             CHECK(FramesOf(ts.bytes) == ThreadFrames::kUnknown);
             free(heap_cframe);
           }),
           0);
}
