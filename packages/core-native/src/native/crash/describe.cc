#include "crash/describe.h"

#include "native_heap/native_heap.h"

namespace mate {

void FillProcess(const GuardedAllocator& a, Violation* v) {
  AllocatorStats s = a.StatsUnlocked();
  v->process_allocations = s.allocations;
  v->process_peak_live = s.peak_live;
  v->process_fallbacks = s.fallbacks;
  v->process_native_allocations = s.native_allocations;
  v->process_native_unguarded = native_heap::GetCounters().unguarded;
}

void FillRecord(const GuardedAllocator& a, const SlotRecord& r, Violation* v) {
  v->record = r;
  v->backend = SlotBackendName(r.backend);
  v->geometry = a.Geometry(r);
  v->guard_method = GuardMethodName(a.guard_method());
  v->test_id = a.CurrentTest();
  FillProcess(a, v);
}

namespace {

void Fill(const GuardedAllocator& a, const SlotRecord& r, Violation* v) { FillRecord(a, r, v); }

// Distance from `addr` to the logical allocation of `r`, and on which side.
uint64_t DistanceTo(const GuardedAllocator& a, const SlotRecord& r, uintptr_t addr, Relation* rel) {
  SlotGeometry g = a.Geometry(r);
  if (addr >= g.user_end) {
    *rel = Relation::kPastEnd;
    return addr - g.user_end + 1;
  }
  if (addr < g.user) {
    *rel = Relation::kBeforeStart;
    return g.user - addr;
  }
  *rel = Relation::kInside;
  return addr - g.user;
}

bool Freed(const SlotRecord& r) {
  SlotState s = LoadState(r);
  return s == SlotState::kQuarantined || s == SlotState::kReusable;
}

}  // namespace

bool DescribeFault(const GuardedAllocator& a, uintptr_t addr, AccessType access, Violation* out) {
  if (!a.InRegion(addr)) return false;
  const SlotRecord* owner = a.SlotAt(addr);
  const SlotRecord* chosen = nullptr;
  if (owner != nullptr) {
    SlotGeometry g = a.Geometry(*owner);
    bool in_data = addr >= g.data_start && addr < g.data_end;
    if (in_data) {
      // Data pages fault only once freed; a live one faulting is not ours.
      if (!Freed(*owner)) return false;
      chosen = owner;
    } else {
      // A guard page sits between two slots: pick the allocation the access
      // is nearer to (an overflow of one, or an underflow of the other).
      const SlotRecord* other = owner->mode == Mode::kTail ? a.SlotAfter(*owner) : a.SlotBefore(*owner);
      chosen = owner;
      if (other != nullptr && LoadState(*other) != SlotState::kNever) {
        Relation r1, r2;
        uint64_t d1 = DistanceTo(a, *owner, addr, &r1);
        uint64_t d2 = DistanceTo(a, *other, addr, &r2);
        if (LoadState(*owner) == SlotState::kNever || d2 < d1) chosen = other;
      }
    }
  } else {
    // Past the last slot handed out: nearest slot below, within a few pages.
    for (uintptr_t p = addr, n = 0; n < 64 && p >= a.page_size(); n++, p -= a.page_size()) {
      chosen = a.SlotAt(p - a.page_size());
      if (chosen) break;
    }
  }
  if (chosen == nullptr || LoadState(*chosen) == SlotState::kNever) {
    // Guarded address space no allocation ever used: still ours, still a bug.
    SlotRecord none{};
    none.slot_start = addr & ~(static_cast<uintptr_t>(a.page_size()) - 1);
    none.user = addr;
    Fill(a, none, out);
    out->kind = ReportKind::kWildAccess;
    out->access = access;
    out->address = addr;
    out->relation = Relation::kInside;
    out->distance = 0;
    return true;
  }
  Fill(a, *chosen, out);
  out->access = access;
  out->address = addr;
  out->distance = DistanceTo(a, *chosen, addr, &out->relation);
  if (Freed(*chosen)) {
    out->kind = ReportKind::kHeapUseAfterFree;
  } else {
    out->record.freed_by = FreedBy::kNotFreed;
    out->kind =
        out->relation == Relation::kBeforeStart ? ReportKind::kHeapBufferUnderflow : ReportKind::kHeapBufferOverflow;
  }
  return true;
}

Violation DescribeCanary(const GuardedAllocator& a, const CanaryViolation& c) {
  Violation v;
  Fill(a, c.record, &v);
  v.kind = ReportKind::kCanaryCorruption;
  v.access = AccessType::kNone;
  v.damage = c.damage;
  return v;
}

Violation DescribeBadFree(const GuardedAllocator& a, bool double_free, const SlotRecord* record, uintptr_t address,
                          uint32_t frames, uint32_t test) {
  Violation v;
  SlotRecord none{};
  none.backend = SlotBackend::kNativeHeap;
  none.slot_start = address & ~(static_cast<uintptr_t>(a.page_size()) - 1);
  none.user = address;
  Fill(a, record ? *record : none, &v);
  v.kind = double_free ? ReportKind::kDoubleFree : ReportKind::kInvalidFree;
  v.has_record = record != nullptr;
  v.address = address;
  v.free_call_frames = frames;
  v.test_id = test;
  if (record) v.distance = DistanceTo(a, *record, address, &v.relation);
  else v.relation = Relation::kInside;
  return v;
}

Violation DescribeFinding(const GuardedAllocator& a, const native_heap::Finding& f) {
  if (f.kind != native_heap::FindingKind::kForeignWriteAfterFree)
    return DescribeBadFree(a, f.kind == native_heap::FindingKind::kDoubleFree, f.has_record ? &f.record : nullptr,
                           f.address, f.frames, f.test);
  Violation v;
  Fill(a, f.record, &v);
  v.kind = ReportKind::kHeapUseAfterFree;
  v.access = AccessType::kWrite;
  v.address = f.address;
  v.relation = Relation::kInside;
  v.distance = f.address - f.record.user;
  v.test_id = f.test;
  v.guard_method = "foreign-quarantine";
  // The block as malloc measured it: no slot, no guard page, no canary.
  SlotGeometry g{};
  g.data_start = g.user = f.record.user;
  g.data_end = g.user_end = f.record.user + f.record.size;
  v.geometry = g;
  return v;
}

}  // namespace mate
