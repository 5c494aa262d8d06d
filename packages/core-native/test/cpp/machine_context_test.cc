// platform/linux/machine_context: how a fault touched memory, read from a
// signal context built here (the kernel's layout), on the architecture
// this binary is built for (the arm64 one runs under qemu in the arm64
// tier: qemu's signal frames carry no ESR record, so the record path is
// pinned here).
#include <string.h>
#include <ucontext.h>

#include <cstdint>

#include "check.h"
#include "platform/linux/machine_context.h"

using mate::FaultAccess;
using mate::ReadFaultAccess;

#if defined(__aarch64__)
namespace {

// A context whose __reserved holds a 16-byte dummy record, then (with
// `esr`) an esr_context record, then the terminator.
ucontext_t ContextWith(const uint64_t* esr, uintptr_t pc) {
  ucontext_t uc;
  memset(&uc, 0, sizeof(uc));
  unsigned char* p = uc.uc_mcontext.__reserved;
  const uint32_t dummy[4] = {0x46508001, 16, 0, 0};
  memcpy(p, dummy, sizeof(dummy));
  p += sizeof(dummy);
  if (esr) {
    const uint32_t head[2] = {0x45535201, 16};
    memcpy(p, head, sizeof(head));
    memcpy(p + sizeof(head), esr, sizeof(*esr));
  }
  uc.uc_mcontext.pc = pc;
  return uc;
}

constexpr uint64_t kDataAbortLowerEl = 0x24ull << 26;
constexpr uint64_t kWnR = 1ull << 6;
constexpr uint64_t kCacheMaintenance = 1ull << 8;
// Instructions the fallback decodes, read from memory at the context's pc.
const uint32_t kNop = 0xd503201f;
const uint32_t kStrb = 0x39000001;   // strb w1, [x0]
const uint32_t kLdrb = 0x39400001;   // ldrb w1, [x0]
const uint32_t kSturb = 0x38001001;  // sturb w1, [x0, #1]
const uint32_t kStp = 0xa90007e0;    // stp x0, x1, [sp]
const uint32_t kLdp = 0xa94007e0;    // ldp x0, x1, [sp]
const uint32_t kStrQ = 0x3d800000;   // str q0, [x0]
const uint32_t kLdrQ = 0x3dc00000;   // ldr q0, [x0]
const uint32_t kLdadd = 0xf8210002;  // ldadd x1, x2, [x0]
const uint32_t kStlr = 0xc89ffc01;   // stlr x1, [x0]
const uint32_t kLdar = 0xc8dffc01;   // ldar x1, [x0]
const uint32_t kCas = 0xc8a17c02;    // cas x1, x2, [x0]
const uint32_t kCasp = 0x08207c02;   // casp w0, w1, w2, w3, [x0]
const uint32_t kLdxp = 0xc87f0801;   // ldxp x1, x2, [x0]
const uint32_t kLdraa = 0xf8200401;  // ldraa x1, [x0]

FaultAccess Decoded(const uint32_t& insn) {
  ucontext_t uc = ContextWith(nullptr, reinterpret_cast<uintptr_t>(&insn));
  return ReadFaultAccess(&uc);
}

}  // namespace

TEST(arm64_a_data_abort_esr_record_says_write_by_wnr) {
  uint64_t esr = kDataAbortLowerEl | kWnR;
  ucontext_t uc = ContextWith(&esr, reinterpret_cast<uintptr_t>(&kLdrb));  // the record wins over the instruction
  CHECK(ReadFaultAccess(&uc) == FaultAccess::kWrite);
  esr = kDataAbortLowerEl;
  uc = ContextWith(&esr, reinterpret_cast<uintptr_t>(&kStrb));
  CHECK(ReadFaultAccess(&uc) == FaultAccess::kRead);
  esr = kDataAbortLowerEl | kWnR | kCacheMaintenance;  // a cache maintenance op reads
  uc = ContextWith(&esr, reinterpret_cast<uintptr_t>(&kNop));
  CHECK(ReadFaultAccess(&uc) == FaultAccess::kRead);
}

TEST(arm64_without_an_esr_record_the_faulting_instruction_says_it) {
  CHECK(Decoded(kStrb) == FaultAccess::kWrite);
  CHECK(Decoded(kLdrb) == FaultAccess::kRead);
  CHECK(Decoded(kSturb) == FaultAccess::kWrite);
  CHECK(Decoded(kStp) == FaultAccess::kWrite);
  CHECK(Decoded(kLdp) == FaultAccess::kRead);
  CHECK(Decoded(kStrQ) == FaultAccess::kWrite);
  CHECK(Decoded(kLdrQ) == FaultAccess::kRead);
  CHECK(Decoded(kLdadd) == FaultAccess::kWrite);
  CHECK(Decoded(kStlr) == FaultAccess::kWrite);
  CHECK(Decoded(kLdar) == FaultAccess::kRead);
  CHECK(Decoded(kCas) == FaultAccess::kWrite);
  CHECK(Decoded(kCasp) == FaultAccess::kWrite);
  CHECK(Decoded(kLdxp) == FaultAccess::kRead);
  CHECK(Decoded(kLdraa) == FaultAccess::kRead);
  CHECK(Decoded(kNop) == FaultAccess::kUnknown);
  // A non-data-abort ESR (an instruction abort) leaves it to the instruction.
  uint64_t esr = 0x20ull << 26;
  ucontext_t uc = ContextWith(&esr, reinterpret_cast<uintptr_t>(&kStrb));
  CHECK(ReadFaultAccess(&uc) == FaultAccess::kWrite);
}
#elif defined(__x86_64__)
TEST(x64_the_page_fault_error_code_says_write) {
  ucontext_t uc;
  memset(&uc, 0, sizeof(uc));
  uc.uc_mcontext.gregs[REG_ERR] = 6;  // user, write
  CHECK(ReadFaultAccess(&uc) == FaultAccess::kWrite);
  uc.uc_mcontext.gregs[REG_ERR] = 4;  // user, read
  CHECK(ReadFaultAccess(&uc) == FaultAccess::kRead);
}
#endif

TEST(no_context_is_an_unknown_access) { CHECK(ReadFaultAccess(nullptr) == FaultAccess::kUnknown); }
