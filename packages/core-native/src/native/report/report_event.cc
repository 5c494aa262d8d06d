#include "report/report_event.h"

#include <stdio.h>
#include <unistd.h>

#include <utility>

#include "core/stack_store.h"
#include "report/event_origin.h"
#include "report/report_file.h"
#include "platform/linux/module_map.h"

namespace mate {

namespace {

constexpr int kEventVersion = 2;  // additions (device, candidates, launches, streams) are optional fields

const char* RelationName(Relation r) {
  static const char* const kNames[] = {"past-end", "before-start", "inside"};  // Relation order
  return kNames[static_cast<int>(r)];
}

const char* FreedByName(FreedBy by) {
  static const char* const kNames[] = {nullptr, "explicit", "gc"};  // FreedBy order
  return kNames[static_cast<int>(by)];
}

// A JSON array of `n` elements, each written by `each(i)`.
template <typename Fn>
void List(Writer* w, size_t n, Fn each) {
  w->Char('[');
  for (size_t i = 0; i < n; i++) {
    if (i) w->Char(',');
    each(i);
  }
  w->Char(']');
}

// A count that may be unknown (negative): the number, or null.
void CountOrNull(Writer* w, int64_t v) {
  if (v >= 0) w->Dec(static_cast<uint64_t>(v));
  else w->Str("null");
}

void HexStr(Writer* w, uint64_t v) {
  w->Char('"');
  w->Hex(v);
  w->Char('"');
}

void Range(Writer* w, uintptr_t start, uintptr_t end) {
  w->Char('[');
  HexStr(w, start);
  w->Char(',');
  HexStr(w, end);
  w->Char(']');
}

void Interned(Writer* w, uint32_t id) { w->JsonStr(StackStore::Get().Lookup(id)); }

void Side(Writer* w, const CanarySide& s) {
  w->Str("{\"bytes\":");
  w->Dec(s.damaged_bytes);
  w->Str(",\"nearest\":");
  w->Dec(s.nearest);
  w->Str(",\"farthest\":");
  w->Dec(s.farthest);
  w->Char('}');
}

// Native frames as module + link-time offset; symbolized outside the handler.
void Frames(Writer* w, const NativeFrame* frames, size_t n, UnwindMethod unwind) {
  w->Str("{\"unwind\":");
  w->JsonStr(UnwindMethodName(unwind));
  w->Str(",\"frames\":[");
  for (size_t i = 0; i < n; i++) {
    const NativeFrame& f = frames[i];
    if (i) w->Char(',');
    w->Str("{\"pc\":");
    HexStr(w, f.pc);
    w->Str(",\"module\":");
    w->JsonStr(f.module);
    w->Str(",\"offset\":");
    w->Dec(f.offset);
    w->Str(",\"returnAddress\":");
    w->Str(f.return_address ? "true" : "false");
    w->Char('}');
  }
  w->Str("]}");
}

// Native frames interned in the stack store (return addresses of an
// allocation or a free), resolved to module + offset like a fault's.
void StoredFrames(Writer* w, uint32_t frames_id) {
  const uintptr_t* pcs;
  size_t n = StackStore::Get().LookupFrames(frames_id, &pcs);
  if (n == 0) {
    w->Str("null");
    return;
  }
  NativeFrame frames[kMaxNativeFrames];
  if (n > kMaxNativeFrames) n = kMaxNativeFrames;
  for (size_t i = 0; i < n; i++) {
    ModuleRef m;
    LookupModule(pcs[i], &m);
    frames[i].pc = pcs[i];
    frames[i].offset = m.offset;
    frames[i].module = m.path;
    frames[i].module_index = m.index;
    frames[i].return_address = true;
  }
  Frames(w, frames, n, UnwindMethod::kUnwindTables);
}

// One allocation: its record and slot, as of the report.
void AllocationOf(const SlotRecord& r, const SlotGeometry& g, const char* backend, const char* guard_method, bool freed,
                  Writer* w) {
  w->Str("{\"id\":");
  w->Dec(r.alloc_id);
  w->Str(",\"size\":");
  w->Dec(r.size);
  w->Str(",\"start\":");
  HexStr(w, g.user);
  w->Str(",\"end\":");
  HexStr(w, g.user_end);
  w->Str(",\"mode\":");
  w->JsonStr(ModeName(r.mode));
  w->Str(",\"alignment\":");
  w->Dec(r.alignment);
  w->Str(",\"backend\":");
  w->JsonStr(backend);
  w->Str(",\"guardMethod\":");
  w->JsonStr(guard_method);
  w->Str(",\"slot\":{\"data\":");
  Range(w, g.data_start, g.data_end);
  w->Str(",\"guard\":");
  Range(w, g.guard_start, g.guard_end);
  w->Str(",\"canaryBefore\":");
  Range(w, g.canary_before_start, g.canary_before_end);
  w->Str(",\"canaryAfter\":");
  Range(w, g.canary_after_start, g.canary_after_end);
  w->Str("},\"allocTest\":");
  Interned(w, r.alloc_test);
  w->Str(",\"allocStack\":");
  Interned(w, r.alloc_stack);
  w->Str(",\"allocFrames\":");
  StoredFrames(w, r.alloc_frames);
  w->Str(",\"freed\":");
  w->Str(freed ? "true" : "false");
  w->Str(",\"freedBy\":");
  w->JsonStr(freed ? FreedByName(r.freed_by) : nullptr);
  w->Str(",\"freeTest\":");
  if (freed) Interned(w, r.free_test);
  else w->Str("null");
  w->Str(",\"freeStack\":");
  if (freed) Interned(w, r.free_stack);
  else w->Str("null");
  w->Str(",\"freeFrames\":");
  if (freed) StoredFrames(w, r.free_frames);
  else w->Str("null");
  w->Char('}');
}

void Allocation(const Violation& v, Writer* w) {
  // Canary damage found at a free names that free too (where the check ran).
  bool freed = v.record.freed_by != FreedBy::kNotFreed;
  AllocationOf(v.record, v.geometry, v.backend, v.guard_method, freed, w);
}

// A device allocation named by a device report (a candidate, a kernel argument).
void DeviceAllocation(const DeviceDetail& d, const SlotRecord& r, Writer* w) {
  AllocationOf(r, GeometryOf(r, d.granule), "cuda", "cuda-vmm", r.freed_by != FreedBy::kNotFreed, w);
}

void Launch(const DeviceDetail& d, const DeviceLaunch& l, Writer* w) {
  w->Str("{\"number\":");
  w->Dec(l.number);
  w->Str(",\"kernel\":");
  Interned(w, l.kernel);
  w->Str(",\"stream\":");
  HexStr(w, l.stream);
  w->Str(",\"site\":");
  Interned(w, l.site);
  w->Str(",\"test\":");
  Interned(w, l.test);
  w->Str(",\"faulted\":");
  w->Str(l.faulted ? "true" : "false");
  w->Str(",\"argCount\":");
  w->Dec(l.arg_count);
  w->Str(",\"args\":");
  uint32_t n = l.arg_count < kMaxDeviceLaunchArgs ? l.arg_count : kMaxDeviceLaunchArgs;
  List(w, n, [&](size_t i) {
    const DeviceLaunchArg& a = l.args[i];
    w->Str("{\"param\":");
    w->Dec(a.param);
    w->Str(",\"offset\":");
    w->Dec(a.offset);
    w->Str(",\"paramSize\":");
    w->Dec(a.param_size);
    w->Str(",\"value\":");
    HexStr(w, a.value);
    w->Str(",\"allocation\":");
    DeviceAllocation(d, a.record, w);
    w->Char('}');
  });
  // Inputs saved before the launch (dumpInputs).
  if (l.input_count) {
    w->Str(",\"inputs\":");
    List(w, l.input_count < kMaxDeviceLaunchInputs ? l.input_count : kMaxDeviceLaunchInputs, [&](size_t i) {
      const DeviceLaunchInput& in = l.inputs[i];
      w->Str("{\"param\":");
      w->Dec(in.param);
      w->Str(",\"allocation\":");
      w->Dec(in.alloc_id);
      w->Str(",\"size\":");
      w->Dec(in.size);
      w->Str(",\"saved\":");
      w->Dec(in.saved);
      // The whole path: a report printed in the process itself has no event file to be relative to.
      char file[4352];
      snprintf(file, sizeof(file), "%s/inputs/%llu-%llu-%llu.bin", ReportDir(),
               static_cast<unsigned long long>(getpid()), static_cast<unsigned long long>(l.number),
               static_cast<unsigned long long>(in.index));
      w->Str(",\"file\":");
      w->JsonStr(file);
      w->Char('}');
    });
  }
  w->Char('}');
}

// The device block, and what an illegal-address or cross-stream-free report adds.
void Device(const Violation& v, Writer* w) {
  const DeviceDetail& d = *v.device;
  w->Str(",\"device\":{\"api\":\"cuda\",\"ordinal\":");
  w->Dec(static_cast<uint64_t>(d.ordinal));
  w->Str(",\"granule\":");
  w->Dec(d.granule);
  if (d.rank >= 0 || d.world_size >= 0) {
    w->Str(",\"rank\":");
    CountOrNull(w, d.rank);
    w->Str(",\"localRank\":");
    CountOrNull(w, d.local_rank);
    w->Str(",\"worldSize\":");
    CountOrNull(w, d.world_size);
  }
  w->Str(",\"error\":");
  w->JsonStr(d.error_name);
  w->Str(",\"errorText\":");
  w->JsonStr(d.error_text);
  w->Str(",\"foundBy\":");
  w->JsonStr(d.found_by);
  w->Char('}');
  if (IsKernelException(v.kind)) {
    w->Str(",\"candidates\":{\"liveTotal\":");
    w->Dec(d.live_total);
    w->Str(",\"live\":");
    List(w, d.live_count, [&](size_t i) { DeviceAllocation(d, d.live[i], w); });
    w->Str(",\"freed\":");
    List(w, d.freed_count, [&](size_t i) { DeviceAllocation(d, d.freed[i], w); });
    w->Char('}');
  }
  if (IsKernelException(v.kind) || d.cross_stream) {
    w->Str(",\"launches\":{\"tracking\":");
    w->Str(d.tracking ? "true" : "false");
    w->Str(",\"off\":");
    w->JsonStr(d.tracking_off);
    w->Str(",\"blocking\":");
    w->Str(d.blocking ? "true" : "false");
    w->Str(",\"total\":");
    w->Dec(d.launches_total);
    w->Str(",\"list\":");
    List(w, d.launch_count, [&](size_t i) { Launch(d, d.launches[i], w); });
    w->Char('}');
  }
  if (d.memory) {
    const DeviceMemoryAccount& m = *d.memory;
    const std::pair<const char*, uint64_t> fields[] = {{"requested", m.requested},
                                                       {"liveCount", m.live_count},
                                                       {"liveBytes", m.live_bytes},
                                                       {"liveMapped", m.live_mapped},
                                                       {"quarantinedCount", m.quarantined_count},
                                                       {"quarantinedBytes", m.quarantined_bytes},
                                                       {"pendingBytes", m.pending_bytes},
                                                       {"pooledBytes", m.pooled_bytes},
                                                       {"readyBytes", m.ready_bytes},
                                                       {"givenBack", m.given_back},
                                                       {"deviceTotal", m.device_total},
                                                       {"deviceFree", m.device_free},
                                                       {"failures", m.failures}};
    w->Str(",\"memory\":{");
    bool first = true;
    for (const auto& [name, value] : fields) {
      if (!first) w->Char(',');
      first = false;
      w->Char('"');
      w->Str(name);
      w->Str("\":");
      w->Dec(value);
    }
    w->Char('}');
  }
  if (d.cross_stream) {
    w->Str(",\"streams\":{\"free\":");
    HexStr(w, d.free_stream);
    w->Str(",\"use\":");
    HexStr(w, d.use_stream);
    w->Str(",\"useLaunch\":");
    if (d.use) Launch(d, *d.use, w);
    else w->Str("null");
    w->Char('}');
  }
}

// deadly-signal / uncaught-exception: the signal and what could be told.
void Death(const DeathDetail& d, Writer* w) {
  w->Str(",\"death\":{\"signal\":");
  w->Dec(static_cast<uint64_t>(d.signal));
  w->Str(",\"code\":");
  if (d.code < 0) {
    w->Char('-');
    w->Dec(static_cast<uint64_t>(-static_cast<int64_t>(d.code)));
  } else {
    w->Dec(static_cast<uint64_t>(d.code));
  }
  w->Str(",\"sender\":");
  if (d.sender > 0) w->Dec(static_cast<uint64_t>(d.sender));
  else w->Str("null");
  w->Str(",\"address\":");
  if (d.has_address) HexStr(w, d.address);
  else w->Str("null");
  w->Str(",\"access\":");
  w->JsonStr(AccessTypeName(d.access));
  w->Str(",\"abortMessage\":");
  w->JsonStr(d.abort_message);
  w->Str(",\"exception\":");
  if (d.exception_type) {
    w->Str("{\"type\":");
    w->JsonStr(d.exception_type);
    w->Str(",\"what\":");
    w->JsonStr(d.exception_what);
    w->Char('}');
  } else {
    w->Str("null");
  }
  w->Str(",\"guardedFree\":");
  if (d.guarded_free) {
    w->Str("{\"function\":");
    w->JsonStr(d.free_function);
    w->Str(",\"frame\":");
    w->Dec(d.free_frame);
    w->Str(",\"pointer\":");
    HexStr(w, d.pointer);
    w->Char('}');
  } else {
    w->Str("null");
  }
  w->Str(",\"misaligned\":");
  if (d.misaligned_instruction) {
    w->Str("{\"instruction\":");
    w->JsonStr(d.misaligned_instruction);
    w->Str(",\"address\":");
    HexStr(w, d.misaligned_address);
    w->Str(",\"alignment\":");
    w->Dec(d.misaligned_alignment);
    w->Char('}');
  } else {
    w->Str("null");
  }
  w->Str(",\"forked\":");
  w->Str(d.forked ? "true" : "false");
  w->Char('}');
}

}  // namespace

void FormatEvent(const Violation& v, Writer* w) {
  bool canary = v.kind == ReportKind::kCanaryCorruption;
  bool bad_free = v.kind == ReportKind::kDoubleFree || v.kind == ReportKind::kInvalidFree;
  // Where the address lies relative to the allocation: faults and bad frees.
  bool positioned = v.access != AccessType::kNone || bad_free;
  w->Str("{\"tool\":\"mate-guard\",\"version\":");
  w->Dec(kEventVersion);
  w->Str(",\"kind\":");
  w->JsonStr(ReportKindName(v.kind));
  w->Str(",\"access\":");
  w->JsonStr(AccessTypeName(v.access));
  w->Str(",\"address\":");
  if (positioned) HexStr(w, v.address);
  else w->Str("null");
  w->Str(",\"relation\":");
  w->JsonStr(positioned && v.has_record ? RelationName(v.relation) : nullptr);
  w->Str(",\"distance\":");
  if (positioned && v.has_record) w->Dec(v.distance);
  else w->Str("null");
  w->Str(",\"fatal\":");
  w->Str(v.signal ? "true" : "false");
  w->Str(",\"signal\":");
  if (v.signal) w->Dec(static_cast<uint64_t>(v.signal));
  else w->Str("null");
  w->Str(",\"pid\":");
  w->Dec(static_cast<uint64_t>(getpid()));
  w->Str(",\"test\":");
  Interned(w, v.test_id);
  WriteEventOrigin(w);
  // The stack of the bad access: a fault's thread, or the bad free's call.
  w->Str(",\"accessStack\":");
  if (v.access_frame_count) Frames(w, v.access_frames, v.access_frame_count, v.unwind);
  else StoredFrames(w, v.free_call_frames);
  w->Str(",\"damage\":");
  if (canary) {
    w->Str("{\"before\":");
    Side(w, v.damage.before);
    w->Str(",\"after\":");
    Side(w, v.damage.after);
    w->Char('}');
  } else {
    w->Str("null");
  }
  w->Str(",\"backend\":");
  w->JsonStr(v.backend);
  w->Str(",\"allocation\":");
  if (v.has_record) Allocation(v, w);
  else w->Str("null");
  if (v.device) Device(v, w);
  if (v.death) Death(*v.death, w);
  w->Str(",\"process\":{\"allocations\":");
  w->Dec(v.process_allocations);
  w->Str(",\"peakLive\":");
  w->Dec(v.process_peak_live);
  w->Str(",\"fallbacks\":");
  w->Dec(v.process_fallbacks);
  w->Str(",\"nativeAllocations\":");
  w->Dec(v.process_native_allocations);
  w->Str(",\"nativeUnguarded\":");
  w->Dec(v.process_native_unguarded);
  w->Str("}}\n");
}

}  // namespace mate
