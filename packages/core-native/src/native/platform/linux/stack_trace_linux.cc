#include "platform/stack_trace.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unwind.h>

#include "platform/linux/cfi_rules.h"
#include "platform/thread_stack.h"

namespace mate {
namespace platform {

namespace {

struct Walk {
  uintptr_t* pcs;
  size_t max, n;
  uintptr_t skip_lo, skip_hi, stop_lo, stop_hi;
  bool skipping;
};

// Adds one frame; false when the walk is over (full, or past the stop range:
// the frames above it are the runtime's own, Node-API and V8 internals).
inline bool Take(Walk* w, uintptr_t pc) {
  if (w->skipping && pc >= w->skip_lo && pc < w->skip_hi) return true;
  w->skipping = false;
  w->pcs[w->n++] = pc;
  return w->n < w->max && !(pc >= w->stop_lo && pc < w->stop_hi);
}

_Unwind_Reason_Code Step(struct _Unwind_Context* context, void* arg) {
  auto* w = static_cast<Walk*>(arg);
  auto pc = static_cast<uintptr_t>(_Unwind_GetIP(context));
  if (pc == 0) return _URC_END_OF_STACK;
  return Take(w, pc) ? _URC_NO_REASON : _URC_END_OF_STACK;
}

#if defined(__x86_64__)
// Per-thread cache of unwind rules by code address (return addresses repeat:
// a program allocates from a few hundred call sites), and the thread's
// stack bounds, which every frame's CFA must lie in (a stale rule, e.g. of
// a library unloaded since, ends the walk instead of reading past the
// stack). Mapped on a thread's first capture, never freed (96 KiB a thread).
struct RuleSlot {
  uintptr_t pc;
  CfiRule rule;
};
constexpr size_t kRuleSlots = 4096;  // power of two
// The rules last used at each depth of a walk (two ways: a program's
// malloc and free stacks differ in their first frames and share the
// rest). Addressed by depth, not by code address: a walk's loads of them
// do not wait on each other, where every probe of the hashed table
// waits on the frame before it, and after a guarded malloc+free (a cold
// page read, two mprotect calls) that table's lines are out of the
// nearer caches (measured: bench/README.md, native heap).
constexpr size_t kRecentDepth = 24;
struct ThreadRules {
  RuleSlot* table;
  uintptr_t stack_hi;  // 0: unknown (no fast walk on this thread)
  bool tried;
  RuleSlot recent[kRecentDepth][2];
};
thread_local ThreadRules t_rules;

bool InitThreadRules(ThreadRules* t) {
  t->tried = true;
  uintptr_t lo, hi;
  if (!CurrentThreadStack(&lo, &hi)) return false;
  void* p = mmap(nullptr, sizeof(RuleSlot) * kRuleSlots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  t->table = static_cast<RuleSlot*>(p);
  t->stack_hi = hi;
  return true;
}

const CfiRule* RuleFor(RuleSlot* table, uintptr_t pc) {
  size_t i = static_cast<size_t>((pc * 0x9E3779B97F4A7C15ull) >> 52) & (kRuleSlots - 1);
  for (size_t k = 0; k < 8; k++) {
    RuleSlot& s = table[(i + k) & (kRuleSlots - 1)];
    if (s.pc == pc) return &s.rule;
    if (s.pc == 0) {
      s.rule = ReadCfiRule(pc - 1);  // the call instruction's row
      s.pc = pc;
      return &s.rule;
    }
  }
  RuleSlot& s = table[i];  // probe run full: replace its first entry
  s.rule = ReadCfiRule(pc - 1);
  s.pc = pc;
  return &s.rule;
}

// The rule of `pc` at walk depth `d`: the depth's recent ways, else the table.
inline const CfiRule* RecentRuleFor(ThreadRules& t, size_t d, uintptr_t pc) {
  if (d >= kRecentDepth) return RuleFor(t.table, pc);
  RuleSlot* ways = t.recent[d];
  if (ways[0].pc == pc) return &ways[0].rule;
  if (ways[1].pc == pc) {
    RuleSlot hit = ways[1];  // most recent first
    ways[1] = ways[0];
    ways[0] = hit;
    return &ways[0].rule;
  }
  const CfiRule* rule = RuleFor(t.table, pc);
  ways[1] = ways[0];
  ways[0].pc = pc;
  ways[0].rule = *rule;
  return &ways[0].rule;
}

// Walks with cached rules. True when the stack was walked to its end, its
// stop frame or `max`; false when a frame needs libgcc (then w is reset).
__attribute__((always_inline)) inline bool FastWalk(Walk* w, uintptr_t pc, uintptr_t sp, uintptr_t bp) {
  ThreadRules& t = t_rules;
  if (t.table == nullptr && (t.tried || !InitThreadRules(&t))) return false;
  const uintptr_t hi = t.stack_hi;
  if (sp >= hi) return false;
  for (size_t depth = 0;; depth++) {
    if (!Take(w, pc)) return true;
    const CfiRule* rule = RecentRuleFor(t, depth, pc);
    if (rule->kind == CfiRule::kComplex) break;
    if (rule->kind == CfiRule::kNone) return true;  // no unwind tables: libgcc stops here too
    uintptr_t cfa = (rule->cfa_is_rbp ? bp : sp) + static_cast<uintptr_t>(rule->cfa_offset);
    if (cfa <= sp || cfa > hi || (cfa & 7) != 0) break;
    uintptr_t ra = *reinterpret_cast<const uintptr_t*>(cfa - 8);
    if (rule->rbp_saved) {
      uintptr_t at = cfa + static_cast<intptr_t>(rule->rbp_offset);
      if (at < sp || at + sizeof(uintptr_t) > hi) break;
      bp = *reinterpret_cast<const uintptr_t*>(at);
    }
    sp = cfa;
    pc = ra;
    if (pc == 0) return true;
  }
  w->n = 0;
  w->skipping = true;
  return false;
}
#endif

}  // namespace

void WarmUpStackTrace() {
  uintptr_t pcs[4];
  CaptureStack(pcs, 4, 0, 0, 0, 0);
}

__attribute__((noinline)) size_t CaptureStack(uintptr_t* pcs, size_t max, uintptr_t skip_lo, uintptr_t skip_hi,
                                              uintptr_t stop_lo, uintptr_t stop_hi) {
  if (max == 0) return 0;
  Walk w{pcs, max, 0, skip_lo, skip_hi, stop_lo, stop_hi, true};
#if defined(__x86_64__)
  uintptr_t pc, sp, bp;
  __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(bp));
  if (FastWalk(&w, pc, sp, bp)) return w.n;
#endif
  _Unwind_Backtrace(Step, &w);
  return w.n;
}

}  // namespace platform
}  // namespace mate
