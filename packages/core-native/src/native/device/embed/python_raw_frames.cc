#include "device/embed/python_raw_frames.h"

#include <pthread.h>

#include <climits>
#include <cstdint>
#include <cstring>

namespace mate {
namespace device {

namespace {

// Where a _PyInterpreterFrame keeps what a call site needs (CPython's
// Include/internal/pycore_frame.h of each version; 64-bit).
struct Layout {
  int code;       // 3.11/3.12 f_code, 3.13+ f_executable
  int previous;   // the caller's frame
  int instr;      // 3.11/3.12 prev_instr, 3.13+ instr_ptr
  uintptr_t tag;  // 3.14+: f_executable is a _PyStackRef, tagged in its low bits
};
// 3.11: f_func, f_globals, f_builtins, f_locals, f_code, frame_obj, previous, prev_instr.
constexpr Layout k311 = {32, 48, 56, 0};
// 3.12/3.13: f_code (f_executable), previous, f_funcobj, f_globals, f_builtins, f_locals, frame_obj, prev_instr
// (instr_ptr).
constexpr Layout k312 = {0, 8, 56, 0};
constexpr Layout k314 = {0, 8, 56, 3};

constexpr int kAgreements = 8;  // captures that must agree before raw frames are used
constexpr int kMaxSkipped = 4;  // frames the C API skips in one walk (entry shims)
constexpr int kMaxShims = 4;    // distinct code objects of such frames
constexpr int kMaxSteps = 512;  // a broken chain ends here, not in a loop
// Bytecode begins this far into a code object at most (co_code_adaptive,
// ~200 bytes in): a larger distance is not the layout we think it is.
constexpr intptr_t kMaxCodeStart = 4096;

Layout g_layout;
bool g_known = false;  // set once, before any capture
// 0 learning, 1 verified, -1 never to be used: published with release once it leaves 0.
int g_state = 0;
// Under g_mu while learning; read without it once g_state is 1 (then fixed).
intptr_t g_code_start = 0;  // instruction pointer - code - PyFrame_GetLasti
uintptr_t g_shims[kMaxShims];
int g_shim_count = 0;
int g_agreed = 0;
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

uintptr_t Word(const void* base, int off) {
  uintptr_t w;
  memcpy(&w, static_cast<const char*>(base) + off, sizeof(w));
  return w;
}

bool IsShim(uintptr_t code) {
  for (int i = 0; i < g_shim_count; i++)
    if (g_shims[i] == code) return true;
  return false;
}

// One capture's walk against the C API's; false on any disagreement.
bool Agrees(const void* top, void* const* codes, const int* pos, int n) {
  const Layout& L = g_layout;
  const void* f = top;
  int i = 0, skipped = 0;
  for (int steps = 0; i < n && f != nullptr && steps < kMaxSteps; steps++) {
    uintptr_t code = Word(f, L.code) & ~L.tag;
    uintptr_t instr = Word(f, L.instr);
    if (code == reinterpret_cast<uintptr_t>(codes[i])) {
      if (pos[i] < 0) return false;
      intptr_t start = static_cast<intptr_t>(instr - code) - pos[i];
      if (start <= 0 || start > kMaxCodeStart || (g_code_start != 0 && start != g_code_start)) return false;
      g_code_start = start;
      i++;
    } else {
      // A frame the C API skipped: an entry shim, the same few code
      // objects every time, never one of the walk's own.
      if (++skipped > kMaxSkipped) return false;
      for (int k = 0; k < n; k++)
        if (reinterpret_cast<uintptr_t>(codes[k]) == code) return false;
      if (!IsShim(code)) {
        if (g_shim_count == kMaxShims) return false;
        g_shims[g_shim_count++] = code;
      }
    }
    f = reinterpret_cast<const void*>(Word(f, L.previous));
  }
  return i == n;
}

}  // namespace

void SetRawFramesVersion(unsigned long py_version) {
  unsigned long minor = (py_version >> 16) & 0xff;
  if ((py_version >> 24) != 3 || sizeof(void*) != 8) return;
  if (minor == 11) g_layout = k311;
  else if (minor == 12 || minor == 13) g_layout = k312;
  else if (minor == 14) g_layout = k314;
  else return;
  g_known = true;
}

void VerifyRawFrames(const void* top, void* const* codes, const int* pos, int n) {
  if (!g_known || top == nullptr || n == 0 || __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != 0) return;
  // Learning is a chance taken, never waited for (as the frame field's).
  if (pthread_mutex_trylock(&g_mu) != 0) return;
  if (g_state == 0) {
    if (!Agrees(top, codes, pos, n)) __atomic_store_n(&g_state, -1, __ATOMIC_RELEASE);
    else if (++g_agreed >= kAgreements) __atomic_store_n(&g_state, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_mu);
}

bool RawFramesVerified() { return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 1; }

bool RawFrames::Next(void** code, int* pos) {
  const Layout& L = g_layout;
  while (frame_ != nullptr) {
    if (steps_++ == kMaxSteps) return Fail();
    uintptr_t c = Word(frame_, L.code) & ~L.tag;
    uintptr_t instr = Word(frame_, L.instr);
    frame_ = reinterpret_cast<const void*>(Word(frame_, L.previous));
    if (IsShim(c)) continue;
    // As PyFrame_GetLasti: -1 for a frame not started.
    intptr_t p = static_cast<intptr_t>(instr - c) - g_code_start;
    if (c == 0 || p > INT_MAX) return Fail();
    *code = reinterpret_cast<void*>(c);
    *pos = p < 0 ? -1 : static_cast<int>(p);
    return true;
  }
  return false;
}

}  // namespace device
}  // namespace mate
