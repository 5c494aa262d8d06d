// platform/linux/aligned_access: a general-protection fault told apart as an
// aligned SSE/AVX access of a misaligned address, from the instruction bytes.
#include <cstring>

#include "check.h"
#include "platform/linux/aligned_access.h"

namespace {

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

bool Decode(std::initializer_list<uint8_t> bytes, const uintptr_t (&regs)[16], mate::AlignedAccess* out,
            uintptr_t pc = 0x400000) {
  uint8_t code[15] = {};
  size_t n = 0;
  for (uint8_t b : bytes) code[n++] = b;
  return mate::DecodeMisalignedAccess(code, n, pc, regs, out);
}

}  // namespace

TEST(movdqa_of_an_address_8_bytes_off_its_16_byte_boundary_is_named_with_its_address) {
  uintptr_t regs[16] = {};
  regs[RSI] = 0x7f0000001008;
  mate::AlignedAccess a;
  CHECK(Decode({0x66, 0x0F, 0x6F, 0x06}, regs, &a));  // movdqa xmm0, [rsi]
  CHECK(strcmp(a.instruction, "movdqa") == 0);
  CHECK_EQ(a.address, 0x7f0000001008u);
  CHECK_EQ(a.alignment, 16u);
  regs[RSI] = 0x7f0000001010;
  CHECK(!Decode({0x66, 0x0F, 0x6F, 0x06}, regs, &a));  // aligned: the fault is something else
}

TEST(a_256_bit_vex_aligned_move_needs_32_bytes_and_a_displacement_counts) {
  uintptr_t regs[16] = {};
  regs[RAX] = 0x10000;
  mate::AlignedAccess a;
  CHECK(Decode({0xC5, 0xFC, 0x28, 0x40, 0x10}, regs, &a));  // vmovaps ymm0, [rax+0x10]
  CHECK(strcmp(a.instruction, "vmovaps") == 0);
  CHECK_EQ(a.address, 0x10010u);
  CHECK_EQ(a.alignment, 32u);
}

TEST(sib_addressing_and_legacy_sse_arithmetic_are_decoded) {
  uintptr_t regs[16] = {};
  regs[RDI] = 0x20000;
  regs[RCX] = 3;
  mate::AlignedAccess a;
  CHECK(Decode({0x66, 0x0F, 0xFE, 0x44, 0x8F, 0x08}, regs, &a));  // paddd xmm0, [rdi+rcx*4+8]
  CHECK_EQ(a.address, 0x20000u + 12 + 8);
  CHECK(strcmp(a.instruction, "an SSE instruction") == 0);
}

TEST(rip_relative_operands_count_from_the_next_instruction) {
  uintptr_t regs[16] = {};
  mate::AlignedAccess a;
  // movdqa xmm0, [rip+0x101]: 8 bytes long.
  CHECK(Decode({0x66, 0x0F, 0x6F, 0x05, 0x01, 0x01, 0x00, 0x00}, regs, &a, 0x400000));
  CHECK_EQ(a.address, 0x400000u + 8 + 0x101);
}

TEST(unaligned_forms_register_operands_and_other_instructions_are_not_misaligned_accesses) {
  uintptr_t regs[16] = {};
  regs[RSI] = 0x1003;
  mate::AlignedAccess a;
  CHECK(!Decode({0x0F, 0x10, 0x06}, regs, &a));              // movups xmm0, [rsi]
  CHECK(!Decode({0x66, 0x0F, 0x6F, 0xC1}, regs, &a));        // movdqa xmm0, xmm1
  CHECK(!Decode({0x48, 0x8B, 0x06}, regs, &a));              // mov rax, [rsi]
  CHECK(!Decode({0x66, 0x0F, 0x38, 0x20, 0x06}, regs, &a));  // pmovsxbw xmm0, [rsi] (8 bytes, unaligned)
  CHECK(!Decode({0x64, 0x66, 0x0F, 0x6F, 0x06}, regs, &a));  // fs: segment: not decoded
}
