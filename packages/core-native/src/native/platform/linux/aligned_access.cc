#include "platform/linux/aligned_access.h"

#include <ucontext.h>

#include "platform/linux/machine_context.h"

namespace mate {

namespace {

// What an opcode of the 0F (or 0F 38) map needs, by its mandatory prefix
// (legacy) or VEX.pp: none, 66, F3, F2. Only forms whose memory operand
// must be aligned: the aligned moves, non-temporal stores and loads, and
// legacy-SSE packed operations (their 16-byte memory operand faults when
// misaligned; VEX forms of those do not).
const char* Named(bool vex, int map, uint8_t op, int pp) {
  if (map == 1) {
    if ((op == 0x28 || op == 0x29) && pp == 0) return vex ? "vmovaps" : "movaps";
    if ((op == 0x28 || op == 0x29) && pp == 1) return vex ? "vmovapd" : "movapd";
    if ((op == 0x6F || op == 0x7F) && pp == 1) return vex ? "vmovdqa" : "movdqa";
    if (op == 0x2B && pp == 0) return vex ? "vmovntps" : "movntps";
    if (op == 0x2B && pp == 1) return vex ? "vmovntpd" : "movntpd";
    if (op == 0xE7 && pp == 1) return vex ? "vmovntdq" : "movntdq";
  }
  if (map == 2 && op == 0x2A && pp == 1) return vex ? "vmovntdqa" : "movntdqa";
  if (vex) return nullptr;
  // Legacy SSE packed operations with a 16-byte memory operand.
  if (map == 1 && (pp == 0 || pp == 1)) {
    bool packed_fp = (op >= 0x51 && op <= 0x5F && op != 0x5A) || op == 0x14 || op == 0x15 || op == 0xC2 || op == 0xC6;
    bool packed_int = pp == 1 && ((op >= 0x60 && op <= 0x6D) || (op >= 0x74 && op <= 0x76) ||
                                  (op >= 0xD1 && op <= 0xFE && op != 0xD6 && op != 0xD7 && op != 0xE7 && op != 0xF7));
    if (packed_fp || packed_int) return "an SSE instruction";
  }
  // 0F 38 with 66 (SSSE3, SSE4.1): all take m128 except pmovsx/pmovzx (m16 to m64).
  if (map == 2 && pp == 1 && op <= 0x40 && !(op >= 0x20 && op <= 0x25) && !(op >= 0x30 && op <= 0x35))
    return "an SSE instruction";
  return nullptr;
}

}  // namespace

bool DecodeMisalignedAccess(const uint8_t* code, size_t len, uintptr_t pc, const uintptr_t regs[16],
                            AlignedAccess* out) {
  size_t i = 0;
  int pp = 0;
  auto need = [&](size_t n) { return i + n <= len; };
  // Legacy prefixes; a segment override (fs, gs) or a 32-bit address size changes the address: not decoded.
  for (; need(1); i++) {
    uint8_t b = code[i];
    if (b == 0x66) pp = pp ? pp : 1;
    else if (b == 0xF3) pp = 2;
    else if (b == 0xF2) pp = 3;
    else if (b == 0xF0 || b == 0x2E || b == 0x3E || b == 0x26 || b == 0x36) continue;
    else if (b == 0x64 || b == 0x65 || b == 0x67) return false;
    else break;
  }
  bool vex = false;
  int map = 0, X = 0, B = 0, L = 0;  // REX.R / VEX.R only name the register operand
  if (!need(1)) return false;
  if (code[i] >= 0x40 && code[i] <= 0x4F) {  // REX
    X = (code[i] >> 1) & 1;
    B = code[i] & 1;
    i++;
  }
  if (need(3) && code[i] == 0xC5) {
    vex = true;
    L = (code[i + 1] >> 2) & 1;
    pp = code[i + 1] & 3;
    map = 1;
    i += 2;
  } else if (need(4) && code[i] == 0xC4) {
    vex = true;
    X = !((code[i + 1] >> 6) & 1);
    B = !((code[i + 1] >> 5) & 1);
    map = code[i + 1] & 0x1F;
    L = (code[i + 2] >> 2) & 1;
    pp = code[i + 2] & 3;
    i += 3;
  } else if (need(2) && code[i] == 0x0F) {
    i++;
    map = 1;
    if (need(1) && code[i] == 0x38) {
      map = 2;
      i++;
    } else if (need(1) && code[i] == 0x3A) {
      map = 3;
      i++;
    }
  } else {
    return false;
  }
  if (!need(2)) return false;
  uint8_t op = code[i++];
  const char* name = Named(vex, map, op, pp);
  if (name == nullptr) return false;
  uint8_t modrm = code[i++];
  int mod = modrm >> 6, rm = modrm & 7;
  if (mod == 3) return false;  // a register operand
  uintptr_t ea = 0;
  bool rip = false;
  if (rm == 4) {
    if (!need(1)) return false;
    uint8_t sib = code[i++];
    int scale = sib >> 6, index = ((sib >> 3) & 7) | (X << 3), base = (sib & 7) | (B << 3);
    if (index != 4) ea += regs[index] << scale;
    if ((sib & 7) == 5 && mod == 0) {
      if (!need(4)) return false;
      int32_t d;
      __builtin_memcpy(&d, code + i, 4);
      i += 4;
      ea += static_cast<uintptr_t>(static_cast<intptr_t>(d));
    } else {
      ea += regs[base];
    }
  } else if (rm == 5 && mod == 0) {
    rip = true;
    if (!need(4)) return false;
    int32_t d;
    __builtin_memcpy(&d, code + i, 4);
    i += 4;
    ea = static_cast<uintptr_t>(static_cast<intptr_t>(d));
  } else {
    ea = regs[rm | (B << 3)];
  }
  if (mod == 1) {
    if (!need(1)) return false;
    ea += static_cast<uintptr_t>(static_cast<intptr_t>(static_cast<int8_t>(code[i++])));
  } else if (mod == 2) {
    if (!need(4)) return false;
    int32_t d;
    __builtin_memcpy(&d, code + i, 4);
    i += 4;
    ea += static_cast<uintptr_t>(static_cast<intptr_t>(d));
  }
  if (rip) {
    // Relative to the next instruction: an immediate byte follows some forms.
    size_t imm = (map == 3 || op == 0xC2 || op == 0xC6) ? 1 : 0;
    ea += pc + i + imm;
  }
  uint32_t alignment = vex && L ? 32 : 16;
  if (ea % alignment == 0) return false;  // aligned: the fault is something else
  out->instruction = name;
  out->address = ea;
  out->alignment = alignment;
  return true;
}

bool MisalignedAccessAt(const void* ucontext, AlignedAccess* out) {
#if defined(__x86_64__)
  if (ucontext == nullptr) return false;
  const ucontext_t* uc = static_cast<const ucontext_t*>(ucontext);
  static const int kByNumber[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  uintptr_t regs[16];
  for (int r = 0; r < 16; r++) regs[r] = static_cast<uintptr_t>(uc->uc_mcontext.gregs[kByNumber[r]]);
  uintptr_t pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  uint8_t code[15];
  size_t len = sizeof(code);
  // The instruction may end the last mapped page of its module: read less.
  while (len > 0 && !SafeRead(pc, code, len)) len--;
  return len > 0 && DecodeMisalignedAccess(code, len, pc, regs, out);
#else
  (void)ucontext;
  (void)out;
  return false;
#endif
}

}  // namespace mate
