#include "crash/death.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

#include "core/canary.h"
#include "crash/describe.h"
#include "crash/terminate_hook.h"
#include "platform/linux/aligned_access.h"
#include "platform/linux/machine_context.h"

namespace mate {

namespace {

// glibc keeps the message of its last fatal check (malloc_printerr,
// assert) for the core dump: `struct abort_msg_s { unsigned size; char msg[]; }*`.
struct AbortMsg {
  unsigned int size;
  char msg[1];
};
AbortMsg** g_abort_msg = nullptr;
// The guarded process's pid at install: a death in another pid is a fork
// that did not exec (exec starts over with a fresh install).
pid_t g_install_pid = 0;

// The free functions a stack may die in: [start, end) of each, as loaded.
struct FreeFunction {
  const char* name;
  uintptr_t start = 0, end = 0;
};
FreeFunction g_free_functions[] = {{"free"}, {"realloc"}, {"reallocarray"}, {"malloc_usable_size"}};

constexpr size_t kMaxScanBytes = 64 * 1024;
constexpr uint64_t kCanaryWord = 0x0101010101010101ull * kCanaryByte;

// libc's own definitions: in a non-PIE executable (node) the global
// lookup names the executable's PLT entries instead.
void RangeOf(void* libc, FreeFunction* f) {
  void* addr = dlsym(libc != nullptr ? libc : RTLD_DEFAULT, f->name);
  if (addr == nullptr) return;
  Dl_info info;
  const ElfW(Sym)* sym = nullptr;
  if (dladdr1(addr, &info, reinterpret_cast<void**>(const_cast<ElfW(Sym)**>(&sym)), RTLD_DL_SYMENT) == 0 ||
      sym == nullptr)
    return;
  f->start = reinterpret_cast<uintptr_t>(addr);
  f->end = f->start + (sym->st_size ? sym->st_size : 1);
}

const FreeFunction* FreeFunctionAt(uintptr_t pc) {
  for (const FreeFunction& f : g_free_functions)
    if (pc >= f.start && pc < f.end) return &f;
  return nullptr;
}

// A pointer into a guarded slot, and the slot's record (nullptr: not ours,
// or a slot no allocation ever used).
const SlotRecord* Owner(const GuardedAllocator& a, uintptr_t word) {
  if (!a.InRegion(word)) return nullptr;
  const SlotRecord* r = a.SlotAt(word);
  if (r == nullptr || LoadState(*r) == SlotState::kNever) return nullptr;
  return r;
}

}  // namespace

void PrepareDeathReports() {
  g_abort_msg = static_cast<AbortMsg**>(dlsym(RTLD_DEFAULT, "__abort_msg"));
  g_install_pid = getpid();
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  for (FreeFunction& f : g_free_functions) RangeOf(libc, &f);
}

void DescribeDeath(const GuardedAllocator* a, int sig, const siginfo_t* info, const void* ucontext, DeathDetail* d,
                   Violation* v) {
  *d = DeathDetail{};
  d->signal = sig;
  d->code = info ? info->si_code : 0;
  d->sender = (info && info->si_code <= 0) ? info->si_pid : 0;
  d->forked = g_install_pid != 0 && getpid() != g_install_pid;
  bool synchronous = info && info->si_code > 0;
  if (synchronous && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP)) {
    d->has_address = true;
    d->address = reinterpret_cast<uintptr_t>(info->si_addr);
  }
  if (synchronous && sig == SIGSEGV) {
    FaultAccess fa = ReadFaultAccess(ucontext);
    d->access = fa == FaultAccess::kWrite  ? AccessType::kWrite
                : fa == FaultAccess::kRead ? AccessType::kRead
                                           : AccessType::kUnknown;
  }
  if (sig == SIGABRT && g_abort_msg != nullptr) {
    const AbortMsg* m = __atomic_load_n(g_abort_msg, __ATOMIC_ACQUIRE);
    if (m != nullptr && m->msg[0] != '\0') d->abort_message = m->msg;
  }
  const UncaughtException* ex = sig == SIGABRT ? UncaughtOnThisThread() : nullptr;
  if (ex != nullptr) {
    d->exception_type = ex->type;
    d->exception_what = ex->what;
  }
  *v = Violation{};
  v->kind = ex != nullptr ? ReportKind::kUncaughtException : ReportKind::kDeadlySignal;
  v->access = AccessType::kNone;
  v->has_record = false;
  v->backend = "none";  // no allocation, unless FindGuardedFree finds one
  v->signal = sig;
  v->death = d;
  if (a != nullptr) {
    FillProcess(*a, v);
    v->test_id = a->CurrentTest();
  }
  // SI_KERNEL: a general-protection fault, no address. An aligned SSE/AVX
  // access of a misaligned address is told apart (and its allocation, if
  // the address is in one mate-guard made).
  AlignedAccess aa;
  if ((sig == SIGSEGV || sig == SIGBUS) && d->code == SI_KERNEL && MisalignedAccessAt(ucontext, &aa)) {
    d->misaligned_instruction = aa.instruction;
    d->misaligned_address = aa.address;
    d->misaligned_alignment = aa.alignment;
    const SlotRecord* r = a != nullptr ? Owner(*a, aa.address) : nullptr;
    if (r != nullptr) {
      FillRecord(*a, *r, v);
      v->has_record = true;
    }
  }
}

void FindGuardedFree(const GuardedAllocator& a, const void* ucontext, const NativeFrame* frames, const uintptr_t* cfas,
                     size_t count, DeathDetail* d, Violation* v) {
  size_t at = count;
  const FreeFunction* fn = nullptr;
  for (size_t i = 0; i < count && fn == nullptr; i++) {
    // A return address's call is the instruction before it.
    uintptr_t pc = frames[i].return_address ? frames[i].pc - 1 : frames[i].pc;
    if ((fn = FreeFunctionAt(pc)) != nullptr) at = i;
  }
  if (fn == nullptr) return;
  MachineRegs regs;
  if (!ReadMachineRegs(ucontext, &regs)) return;
  // The pointer the free function was given is in its frame or a callee's
  // (saved registers, locals), or still in a register.
  uintptr_t words[32];
  size_t n = ReadGeneralRegisters(ucontext, words, 32);
  // Evidence, all of it: glibc rejected the pointer as a guarded one is
  // always rejected (its chunk header, 16 bytes before, is canary bytes
  // with the mmapped bit set: "munmap_chunk(): invalid pointer" from free,
  // "realloc(): invalid pointer" from realloc); the start of a guarded
  // allocation is left in the dying free's callees (their saved registers)
  // or in the registers; and its header is still canary. A caller's
  // unrelated guarded pointer alone (free's prologue saves its caller's
  // registers too) must not name an innocent allocation.
  const char* msg = d->abort_message;
  bool pointer_check = msg != nullptr && (strncmp(msg, "munmap_chunk(): invalid pointer", 31) == 0 ||
                                          strncmp(msg, "realloc(): invalid pointer", 26) == 0 ||
                                          strncmp(msg, "free(): invalid pointer", 23) == 0);
  if (!pointer_check) return;
  const SlotRecord* found = nullptr;
  auto consider = [&](uintptr_t w) {
    if (found != nullptr) return;
    const SlotRecord* r = Owner(a, w);
    if (r == nullptr || r->user != w) return;
    uint64_t header = 0;
    if (!SafeRead(w - sizeof(header), &header, sizeof(header)) || header != kCanaryWord) return;
    found = r;
  };
  for (size_t i = 0; i < n; i++) consider(words[i]);
  // Up to the CFA of free's callee: below free's own saved registers.
  uintptr_t top = cfas && at > 0 ? cfas[at - 1] : 0;
  if (top > regs.sp && top - regs.sp <= kMaxScanBytes) {
    uintptr_t chunk[512];
    for (uintptr_t p = regs.sp & ~(sizeof(uintptr_t) - 1); p < top; p += sizeof(chunk)) {
      size_t len = top - p < sizeof(chunk) ? (top - p) & ~(sizeof(uintptr_t) - 1) : sizeof(chunk);
      if (len == 0 || !SafeRead(p, chunk, len)) break;
      for (size_t i = 0; i < len / sizeof(uintptr_t); i++) consider(chunk[i]);
    }
  }
  if (found == nullptr) return;
  FillRecord(a, *found, v);
  v->has_record = true;
  d->guarded_free = true;
  d->free_frame = static_cast<uint32_t>(at);
  d->free_function = fn->name;
  d->pointer = found->user;
}

}  // namespace mate
