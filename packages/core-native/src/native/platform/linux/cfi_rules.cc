// A small DWARF CFI reader: enough of the call-frame program to find, at
// one address, where the CFA is (rsp or rbp plus an offset), where the
// return address is, and where the caller's rbp was saved. Everything
// else (expressions, signal frames, unusual return-address rules) is
// reported as kComplex so the caller falls back to libgcc's unwinder.
#include "platform/linux/cfi_rules.h"

#include <cstring>

namespace mate {
namespace platform {

#if defined(__x86_64__)

namespace {

struct DwarfEhBases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, DwarfEhBases* bases);

constexpr int kRbp = 6, kRsp = 7, kRa = 16;

struct Reader {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  uint8_t U8() {
    if (p >= end) {
      ok = false;
      return 0;
    }
    return *p++;
  }
  uint64_t Uleb() {
    uint64_t v = 0;
    for (int shift = 0; ok; shift += 7) {
      uint8_t b = U8();
      if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  int64_t Sleb() {
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
      b = U8();
      if (shift < 64) v |= static_cast<int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (ok && (b & 0x80));
    if (shift < 64 && (b & 0x40)) v |= -(static_cast<int64_t>(1) << shift);
    return v;
  }
  template <typename T>
  T Fixed() {
    T v{};
    if (end - p < static_cast<long>(sizeof(T))) {
      ok = false;
      return v;
    }
    memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  // Skips one pointer in eh-frame encoding `enc` (its value is not needed:
  // libgcc gave us the function start).
  void SkipEncoded(uint8_t enc) {
    if (enc == 0xff) return;
    switch (enc & 0x0f) {
      case 0x00:
      case 0x04:
      case 0x0c:
        p += 8;
        break;
      case 0x02:
      case 0x0a:
        p += 2;
        break;
      case 0x03:
      case 0x0b:
        p += 4;
        break;
      case 0x01:
        Uleb();
        break;
      case 0x09:
        Sleb();
        break;
      default:
        ok = false;
    }
    if (p > end) ok = false;
  }
  uint64_t Encoded(uint8_t enc) {  // value part only (for the address range)
    switch (enc & 0x0f) {
      case 0x00:
      case 0x04:
      case 0x0c:
        return Fixed<uint64_t>();
      case 0x02:
      case 0x0a:
        return Fixed<uint16_t>();
      case 0x03:
      case 0x0b:
        return Fixed<uint32_t>();
      case 0x01:
        return Uleb();
      case 0x09:
        return static_cast<uint64_t>(Sleb());
      default:
        ok = false;
        return 0;
    }
  }
};

enum RegRule : uint8_t { kSame, kOffset, kOther, kUndefined };
struct State {
  int cfa_reg = kRsp;
  int64_t cfa_off = 8;
  RegRule rbp = kSame, ra = kSame;
  int64_t rbp_off = 0, ra_off = 0;
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint8_t fde_enc = 0;
  bool has_z = false, signal = false;
  const uint8_t* insns = nullptr;
  const uint8_t* end = nullptr;
};

bool ParseCie(const uint8_t* cie, Cie* out) {
  uint32_t len;
  memcpy(&len, cie, 4);
  if (len == 0 || len == 0xffffffffu) return false;
  Reader r{cie + 4, cie + 4 + len};
  if (r.Fixed<uint32_t>() != 0) return false;  // CIE id
  uint8_t version = r.U8();
  const char* aug = reinterpret_cast<const char*>(r.p);
  if (r.p >= r.end) return false;
  size_t aug_len = strnlen(aug, static_cast<size_t>(r.end - r.p));
  r.p += aug_len + 1;
  if (aug_len > 0 && aug[0] != 'z') return false;  // no way to skip unknown augmentation data
  if (version >= 4) r.p += 2;                      // address and segment size
  out->code_align = r.Uleb();
  out->data_align = r.Sleb();
  uint64_t ra_reg = version == 1 ? r.U8() : r.Uleb();
  if (ra_reg != kRa) return false;
  if (aug_len > 0) {
    out->has_z = true;
    uint64_t n = r.Uleb();
    const uint8_t* data_end = r.p + n;
    for (size_t i = 1; i < aug_len && r.ok; i++) {
      switch (aug[i]) {
        case 'R':
          out->fde_enc = r.U8();
          break;
        case 'P': {
          uint8_t enc = r.U8();
          r.SkipEncoded(enc);
          break;
        }
        case 'L':
          r.U8();
          break;
        case 'S':
          out->signal = true;
          break;
        default:
          i = aug_len;
          break;  // the rest is skipped by the length
      }
    }
    r.p = data_end;
  }
  out->insns = r.p;
  out->end = cie + 4 + len;
  return r.ok && r.p <= out->end;
}

// Runs a CFA program until `target` (exclusive of rows after it). Returns
// false for anything it does not model.
bool Run(Reader r, const Cie& cie, uintptr_t loc, uintptr_t target, const State& initial, State* s) {
  constexpr int kDepth = 8;
  State stack[kDepth];
  int depth = 0;
  while (r.ok && r.p < r.end) {
    uint8_t op = r.U8();
    uint8_t hi = op & 0xc0, lo = op & 0x3f;
    uint64_t advance = 0;
    if (hi == 0x40) {
      advance = lo * cie.code_align;
    } else if (hi == 0x80) {
      int64_t off = static_cast<int64_t>(r.Uleb()) * cie.data_align;
      if (lo == kRbp) {
        s->rbp = kOffset;
        s->rbp_off = off;
      }
      if (lo == kRa) {
        s->ra = kOffset;
        s->ra_off = off;
      }
    } else if (hi == 0xc0) {
      if (lo == kRbp) {
        s->rbp = initial.rbp;
        s->rbp_off = initial.rbp_off;
      }
      if (lo == kRa) {
        s->ra = initial.ra;
        s->ra_off = initial.ra_off;
      }
    } else {
      switch (op) {
        case 0x00:
          break;  // nop
        case 0x02:
          advance = r.U8() * cie.code_align;
          break;  // advance_loc1
        case 0x03:
          advance = r.Fixed<uint16_t>() * cie.code_align;
          break;
        case 0x04:
          advance = r.Fixed<uint32_t>() * cie.code_align;
          break;
        case 0x05:
        case 0x11:
        case 0x2f: {  // offset_extended(_sf), GNU negative
          uint64_t reg = r.Uleb();
          int64_t off = op == 0x05   ? static_cast<int64_t>(r.Uleb()) * cie.data_align
                        : op == 0x11 ? r.Sleb() * cie.data_align
                                     : -static_cast<int64_t>(r.Uleb()) * cie.data_align;
          if (reg == kRbp) {
            s->rbp = kOffset;
            s->rbp_off = off;
          }
          if (reg == kRa) {
            s->ra = kOffset;
            s->ra_off = off;
          }
          break;
        }
        case 0x06: {  // restore_extended
          uint64_t reg = r.Uleb();
          if (reg == kRbp) {
            s->rbp = initial.rbp;
            s->rbp_off = initial.rbp_off;
          }
          if (reg == kRa) {
            s->ra = initial.ra;
            s->ra_off = initial.ra_off;
          }
          break;
        }
        case 0x07:
        case 0x08: {  // undefined, same_value
          uint64_t reg = r.Uleb();
          // An undefined return address marks the outermost frame (a
          // thread's start): the end of the stack, as libgcc reads it.
          if (reg == kRa) s->ra = op == 0x07 ? kUndefined : kOther;
          if (reg == kRbp) s->rbp = op == 0x08 ? kSame : kOther;
          break;
        }
        case 0x09: {  // register
          uint64_t reg = r.Uleb();
          r.Uleb();
          if (reg == kRbp || reg == kRa) return false;
          break;
        }
        case 0x0a:
          if (depth == kDepth) return false;
          stack[depth++] = *s;
          break;
        case 0x0b:
          if (depth == 0) return false;
          *s = stack[--depth];  // the whole row, CFA rule included
          break;
        case 0x0c:
          s->cfa_reg = static_cast<int>(r.Uleb());
          s->cfa_off = static_cast<int64_t>(r.Uleb());
          break;
        case 0x0d:
          s->cfa_reg = static_cast<int>(r.Uleb());
          break;
        case 0x0e:
          s->cfa_off = static_cast<int64_t>(r.Uleb());
          break;
        case 0x12:
          s->cfa_reg = static_cast<int>(r.Uleb());
          s->cfa_off = r.Sleb() * cie.data_align;
          break;
        case 0x13:
          s->cfa_off = r.Sleb() * cie.data_align;
          break;
        case 0x10:
        case 0x16: {  // expression, val_expression
          uint64_t reg = r.Uleb();
          uint64_t n = r.Uleb();
          if (reg == kRbp || reg == kRa) return false;
          r.p += n;
          break;
        }
        case 0x14:
        case 0x15: {  // val_offset(_sf)
          uint64_t reg = r.Uleb();
          if (op == 0x14) r.Uleb();
          else r.Sleb();
          if (reg == kRbp || reg == kRa) return false;
          break;
        }
        case 0x2e:
          r.Uleb();
          break;  // GNU_args_size
        default:
          return false;  // def_cfa_expression, set_loc, vendor ops
      }
    }
    if (advance != 0) {
      loc += advance;
      if (loc > target) return r.ok;
    }
  }
  return r.ok;
}

}  // namespace

CfiRule ReadCfiRule(uintptr_t pc) {
  CfiRule rule;
  DwarfEhBases bases{};
  const auto* fde = static_cast<const uint8_t*>(_Unwind_Find_FDE(reinterpret_cast<void*>(pc), &bases));
  if (fde == nullptr) return rule;  // kNone
  rule.kind = CfiRule::kComplex;
  uint32_t len;
  memcpy(&len, fde, 4);
  if (len == 0 || len == 0xffffffffu) return rule;
  int32_t cie_ptr;
  memcpy(&cie_ptr, fde + 4, 4);
  Cie cie;
  if (!ParseCie(fde + 4 - cie_ptr, &cie) || cie.signal) return rule;
  Reader r{fde + 8, fde + 4 + len};
  r.SkipEncoded(cie.fde_enc);
  r.Encoded(cie.fde_enc & 0x0f);  // address range
  if (cie.has_z) {
    uint64_t n = r.Uleb();
    r.p += n;
  }
  if (!r.ok || r.p > r.end) return rule;
  uintptr_t func = reinterpret_cast<uintptr_t>(bases.func);
  State initial;
  if (!Run(Reader{cie.insns, cie.end}, cie, func, ~static_cast<uintptr_t>(0), initial, &initial)) return rule;
  State s = initial;
  if (!Run(r, cie, func, pc, initial, &s)) return rule;
  if (s.ra == kUndefined) {
    rule.kind = CfiRule::kNone;
    return rule;
  }
  if ((s.cfa_reg != kRsp && s.cfa_reg != kRbp) || s.ra != kOffset || s.ra_off != -8 || s.rbp == kOther) return rule;
  if (s.cfa_off < 0 || s.cfa_off > (1 << 24) || s.rbp_off < -(1 << 24) || s.rbp_off > 0) return rule;
  rule.kind = CfiRule::kSimple;
  rule.cfa_is_rbp = s.cfa_reg == kRbp;
  rule.cfa_offset = static_cast<int32_t>(s.cfa_off);
  rule.rbp_saved = s.rbp == kOffset;
  rule.rbp_offset = static_cast<int32_t>(s.rbp_off);
  return rule;
}

#else

CfiRule ReadCfiRule(uintptr_t) {
  CfiRule rule;
  rule.kind = CfiRule::kComplex;
  return rule;
}

#endif

}  // namespace platform
}  // namespace mate
