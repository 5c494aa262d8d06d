#include "crash/backtrace.h"

#include <unwind.h>

#include "platform/linux/machine_context.h"
#include "platform/linux/module_map.h"
#include "platform/stack_trace.h"

namespace mate {

namespace {

// The handler's own frames (this file, the handler, the signal trampoline)
// come before the faulting one; more than this many means the unwinder
// never crossed the signal frame.
constexpr size_t kMaxSkipped = 32;

struct RawFrames {
  uintptr_t* pcs;
  bool* exact;
  uintptr_t* cfas;
  size_t max;
  size_t count = 0;
  // Record from the frame whose pc is `start` (the faulting one).
  uintptr_t start = 0;
  bool started = false;
  size_t skipped = 0;
};

_Unwind_Reason_Code OnFrame(struct _Unwind_Context* ctx, void* arg) {
  auto* r = static_cast<RawFrames*>(arg);
  int before_insn = 0;
  uintptr_t ip = _Unwind_GetIPInfo(ctx, &before_insn);
  if (ip == 0) return _URC_END_OF_STACK;
  if (!r->started) {
    if (ip != r->start) {
      if (++r->skipped > kMaxSkipped) return _URC_END_OF_STACK;  // gave up: never reached it
      return _URC_NO_REASON;
    }
    r->started = true;
  }
  r->pcs[r->count] = ip;
  r->exact[r->count] = before_insn != 0;  // a signal frame's pc is the instruction itself
  r->cfas[r->count] = _Unwind_GetCFA(ctx);
  r->count++;
  return r->count < r->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

void Resolve(uintptr_t pc, bool return_address, NativeFrame* f) {
  ModuleRef m;
  LookupModule(pc, &m);
  f->pc = pc;
  f->offset = m.offset;
  f->module = m.path;
  f->module_index = m.index;
  f->return_address = return_address;
}

// Frame pointers, for code without unwind tables: each frame is [saved
// fp, return address]. Every step is checked (read without faulting,
// stack growing up, return address inside a loaded object) so code that
// uses the register for something else ends the walk, not the process.
size_t WalkFramePointers(const MachineRegs& regs, NativeFrame* out, size_t count, size_t max) {
  constexpr uintptr_t kMaxFrameBytes = 1 << 20;
  // A leaf function often keeps no frame: the frame pointer is then its
  // caller's, whose own return address the chain would skip.
  uintptr_t leaf_ret = 0;
  if (count < max && LeafReturnAddress(regs, &leaf_ret)) Resolve(leaf_ret, true, &out[count++]);
  uintptr_t fp = regs.fp;
  if (fp < regs.sp || fp - regs.sp > 8 * kMaxFrameBytes) return count;
  while (count < max) {
    if (fp % sizeof(uintptr_t) != 0) break;
    uintptr_t next = 0, ret = 0;
    if (!SafeReadWord(fp, &next) || !SafeReadWord(fp + sizeof(uintptr_t), &ret)) break;
    ModuleRef m;
    if (ret == 0 || !LookupModule(ret, &m)) break;
    Resolve(ret, true, &out[count++]);
    if (next <= fp || next - fp > kMaxFrameBytes) break;
    fp = next;
  }
  return count;
}

}  // namespace

size_t CaptureFaultBacktrace(const void* ucontext, NativeFrame* out, size_t max, UnwindMethod* method,
                             uintptr_t* cfas) {
  *method = UnwindMethod::kNone;
  MachineRegs regs;
  if (max == 0 || !ReadMachineRegs(ucontext, &regs)) return 0;
  uintptr_t pcs[kMaxNativeFrames];
  bool exact[kMaxNativeFrames];
  uintptr_t raw_cfas[kMaxNativeFrames];
  RawFrames raw{pcs, exact, raw_cfas, max < kMaxNativeFrames ? max : kMaxNativeFrames};
  raw.start = regs.pc;
  _Unwind_Backtrace(OnFrame, &raw);
  if (cfas)
    for (size_t i = 0; i < max; i++) cfas[i] = i < raw.count ? raw_cfas[i] : 0;
  // Frame 0 always comes from the context, whatever the unwinder did.
  Resolve(regs.pc, false, &out[0]);
  if (raw.count >= 2) {
    for (size_t i = 1; i < raw.count; i++) Resolve(pcs[i], !exact[i], &out[i]);
    *method = UnwindMethod::kUnwindTables;
    return raw.count;
  }
  size_t n = WalkFramePointers(regs, out, 1, max);
  *method = n > 1 ? UnwindMethod::kFramePointers : UnwindMethod::kPcOnly;
  return n;
}

__attribute__((noinline)) size_t CaptureBacktraceHere(NativeFrame* out, size_t max, size_t skip) {
  constexpr size_t kOwn = 2;  // CaptureStack's frame and this one's
  uintptr_t pcs[kMaxNativeFrames + kOwn + 8];
  size_t want = (max < kMaxNativeFrames ? max : kMaxNativeFrames) + (skip < 8 ? skip : 8) + kOwn;
  size_t n = platform::CaptureStack(pcs, want, 0, 0, 0, 0);
  size_t first = skip + kOwn < n ? skip + kOwn : n;
  for (size_t i = first; i < n; i++) Resolve(pcs[i], true, &out[i - first]);
  // Keep the compiler from turning the capture into a tail call.
  __asm__ volatile("" ::: "memory");
  return n - first;
}

void WarmUpBacktrace() {
  // The first unwind binds _Unwind_Backtrace & co. and lets libgcc set up
  // its lookup; the lookups below bind _dl_find_object and the syscall
  // wrapper of SafeReadWord.
  NativeFrame frames[4];
  CaptureBacktraceHere(frames, 4);
  ModuleRef m;
  LookupModule(0, &m);
  uintptr_t word = 0;
  SafeReadWord(reinterpret_cast<uintptr_t>(&word), &word);
}

}  // namespace mate
