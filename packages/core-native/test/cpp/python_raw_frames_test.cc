// device/embed/python_raw_frames: a thread's interpreter frames read
// without the GIL, used only after captures holding the GIL agreed with
// them, and never after one disagreed. Interpreter frames and code objects
// are laid out here as 3.11 and 3.12 lay them out; the real interpreters
// are covered end to end by python-call-sites (3.11 here, 3.12 on the GPU
// machine). What is learnt is process-wide: each case runs in a child.
#include <cstdint>
#include <cstring>

#include "check.h"
#include "device/embed/python_raw_frames.h"
#include "in_child.h"

using mate::device::RawFrames;
using mate::device::RawFramesVerified;
using mate::device::SetRawFramesVersion;
using mate::device::VerifyRawFrames;

namespace {

constexpr unsigned long k311 = 0x030B07F0;
constexpr unsigned long k312 = 0x030C03F0;
constexpr int kCodeStart = 192;  // where a code object's bytecode begins (co_code_adaptive)

struct FakeCode {
  alignas(16) unsigned char bytes[1024] = {};
};

// A _PyInterpreterFrame's first 64 bytes, its fields placed by offset.
struct FakeFrame {
  alignas(8) unsigned char bytes[64] = {};
  void Put(int off, const void* p) { memcpy(bytes + off, &p, sizeof(p)); }
};

struct Offsets {
  int code, previous, instr;
};
constexpr Offsets kAt311 = {32, 48, 56};
constexpr Offsets kAt312 = {0, 8, 56};

// frames[i] runs codes[i] at lasti[i] (bytes, as PyFrame_GetLasti), called from frames[i + 1].
void Chain(const Offsets& at, FakeFrame* frames, FakeCode* const* codes, const int* lasti, int n) {
  for (int i = 0; i < n; i++) {
    frames[i].Put(at.code, codes[i]);
    frames[i].Put(at.previous, i + 1 < n ? &frames[i + 1] : nullptr);
    frames[i].Put(at.instr, codes[i]->bytes + kCodeStart + lasti[i]);
  }
}

// Code a running at lasti[0], called from code b at lasti[1]: what the C
// API's walk finds is `codes` and `lasti`.
struct TwoFrames {
  FakeCode a, b;
  FakeFrame frames[2];
  void* codes[2] = {&a, &b};
  int lasti[2];
  TwoFrames(const Offsets& at, int la, int lb) : lasti{la, lb} {
    FakeCode* c[] = {&a, &b};
    Chain(at, frames, c, lasti, 2);
  }
};

int Walk(const void* top, void** codes, int* pos) {
  RawFrames raw(top);
  int n = 0;
  while (n < 16 && raw.Next(&codes[n], &pos[n])) n++;
  return n;
}

}  // namespace

TEST(a_312_walk_agreeing_eight_times_is_used_and_reads_the_c_apis_frames_skipping_entry_shims) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(k312);
             FakeCode a, shim, b, c;
             FakeFrame frames[4];
             FakeCode* codes[] = {&a, &shim, &b, &c};
             int lasti[] = {10, 0, 40, 6};
             Chain(kAt312, frames, codes, lasti, 4);
             // The C API's walk skips the shim (owned by the C stack).
             void* api_codes[] = {&a, &b, &c};
             int api_pos[] = {10, 40, 6};
             for (int i = 0; i < 7; i++) VerifyRawFrames(frames, api_codes, api_pos, 3);
             CHECK(!RawFramesVerified());  // still learning
             VerifyRawFrames(frames, api_codes, api_pos, 3);
             CHECK(RawFramesVerified());
             void* got[16];
             int pos[16];
             CHECK_EQ(Walk(frames, got, pos), 3);
             CHECK(got[0] == &a && got[1] == &b && got[2] == &c);
             CHECK(pos[0] == 10 && pos[1] == 40 && pos[2] == 6);
             // Another stack, read as the C API would read it: positions move with the frames.
             frames[0].Put(kAt312.instr, a.bytes + kCodeStart + 22);
             CHECK_EQ(Walk(frames, got, pos), 3);
             CHECK_EQ(pos[0], 22);
           }),
           0);
}

TEST(a_311_walk_is_read_at_311s_offsets) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(k311);
             TwoFrames t(kAt311, 4, 64);
             for (int i = 0; i < 8; i++) VerifyRawFrames(t.frames, t.codes, t.lasti, 2);
             CHECK(RawFramesVerified());
             void* got[16];
             int pos[16];
             CHECK_EQ(Walk(t.frames, got, pos), 2);
             CHECK(got[0] == &t.a && got[1] == &t.b && pos[0] == 4 && pos[1] == 64);
           }),
           0);
}

TEST(a_frame_that_cannot_be_read_fails_the_walk_instead_of_ending_it) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(k312);
             TwoFrames t(kAt312, 10, 40);
             for (int i = 0; i < 8; i++) VerifyRawFrames(t.frames, t.codes, t.lasti, 2);
             CHECK(RawFramesVerified());
             t.frames[1].Put(kAt312.code, nullptr);  // the outermost frame: no code object
             RawFrames raw(t.frames);
             void* code;
             int pos;
             CHECK(raw.Next(&code, &pos) && code == &t.a);
             CHECK(!raw.Next(&code, &pos));
             CHECK(raw.Failed());  // not a stack of one frame: the call site falls back to the C API
             RawFrames whole(t.frames + 1);
             CHECK(!whole.Next(&code, &pos) && whole.Failed());
             t.frames[1].Put(kAt312.code, &t.b);
             RawFrames fine(t.frames);
             while (fine.Next(&code, &pos)) {
             }
             CHECK(!fine.Failed());
           }),
           0);
}

TEST(one_capture_whose_positions_disagree_stops_raw_frames_for_good) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(k312);
             TwoFrames t(kAt312, 10, 40);
             for (int i = 0; i < 3; i++) VerifyRawFrames(t.frames, t.codes, t.lasti, 2);
             int off[] = {10, 48};  // bytecode 8 bytes further into b than into a: not one layout
             VerifyRawFrames(t.frames, t.codes, off, 2);
             for (int i = 0; i < 20; i++) VerifyRawFrames(t.frames, t.codes, t.lasti, 2);
             CHECK(!RawFramesVerified());
           }),
           0);
}

TEST(a_frame_of_the_c_apis_own_code_objects_found_where_it_skipped_one_stops_raw_frames) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(k312);
             FakeCode a, b;
             FakeFrame frames[3];
             // A frame of b's code the C API did not visit (one not started):
             // a skip that is not a shim.
             FakeCode* codes[] = {&a, &b, &b};
             int lasti[] = {10, 0, 40};
             Chain(kAt312, frames, codes, lasti, 3);
             void* api_codes[] = {&a, &b};
             int api_pos[] = {10, 40};
             for (int i = 0; i < 10; i++) VerifyRawFrames(frames, api_codes, api_pos, 2);
             CHECK(!RawFramesVerified());
           }),
           0);
}

TEST(the_c_apis_frames_not_all_found_on_the_chain_stop_raw_frames) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(k312);
             TwoFrames t(kAt312, 10, 40);
             FakeCode elsewhere;
             void* api_codes[] = {&t.a, &t.b, &elsewhere};
             int api_pos[] = {10, 40, 2};
             for (int i = 0; i < 10; i++) VerifyRawFrames(t.frames, api_codes, api_pos, 3);
             CHECK(!RawFramesVerified());
           }),
           0);
}

TEST(a_version_whose_layout_is_not_known_never_uses_raw_frames) {
  CHECK_EQ(InChild([](bool* mate_test_failed) {
             SetRawFramesVersion(0x030F00A0);  // 3.15
             FakeCode a;
             FakeFrame frames[1];
             FakeCode* codes[] = {&a};
             int lasti[] = {10};
             Chain(kAt312, frames, codes, lasti, 1);
             void* api_codes[] = {&a};
             for (int i = 0; i < 10; i++) VerifyRawFrames(frames, api_codes, lasti, 1);
             CHECK(!RawFramesVerified());
           }),
           0);
}
