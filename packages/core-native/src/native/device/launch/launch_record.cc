// A launch into the tracker's log: its kernel, stream, call site and test,
// the guarded allocations its parameters point into (each a use on its
// stream, for the record_stream rule), launch blocking's synchronize, and
// for dumpInputs its inputs saved before it ran.
#include "device/launch/launch_tracker_state.h"

#include "core/process_state.h"
#include "core/stack_store.h"
#include "device/launch/input_dump.h"

namespace mate {
namespace device {
namespace tracker {

thread_local Pending t_pending;

State& S() {
  static State* s = new State();  // never destroyed: callbacks may come during exit
  return *s;
}

namespace {

// MATE_GUARD_TRACK_SKIP=site,args (tuning, bench/cuda): a launch recorded
// without its call site or without its guarded arguments.
bool g_skip_site = false, g_skip_args = false;

// A launch's entry in the log, under the lock: its kernel, stream clock
// and number (taken at its entry when dumpInputs saved its inputs).
struct Opened {
  // A kernel's entry is never erased or moved (a node of the table): its
  // parameter layout is read outside the lock, not copied per launch.
  const std::vector<KernelParam>* params = nullptr;
  bool layout = false;
  StreamUse use;
  uint64_t number = 0;
};

Opened OpenEntry(State& st, const Launch& l, const Pending& pending, uint32_t site_id) {
  Opened o;
  auto lock = Hold(st);
  const Kernel& k = st.kernels.Of(st.drv, l.f, l.symbol);
  o.layout = k.layout;
  o.params = &k.params;
  o.use = st.clocks.Launch(l.stream, l.ptsz);
  o.number = pending.number ? pending.number : ++st.launches;
  o.use.launch = o.number;
  Entry& e = st.ring[o.number % kRing];  // every field a reader reads, nothing more (Entry)
  e.number = o.number;
  e.kernel = k.name;
  e.stream_index = o.use.stream;
  e.faulted = false;
  e.stream = l.stream;
  e.seq = o.use.seq;
  e.site = site_id;
  e.test = CurrentTestId();
  e.arg_total = e.arg_count = e.input_count = 0;
  if (pending.number) {
    e.input_count = pending.input_count;
    for (uint32_t i = 0; i < pending.input_count; i++) e.inputs[i] = pending.inputs[i];
  }
  st.stats.launches++;
  if (!o.layout) st.stats.no_layout++;
  return o;
}

// The parameter words that point into guarded allocations (the first
// kArgsKept of `total` kept).
struct ArgsFound {
  ArgRef found[kArgsKept];
  uint32_t kept = 0, total = 0;
};

// Each word that points into a guarded allocation is a use of it on this
// stream, noted in batches (an allocator's lock once per batch).
void FindGuardedArgs(State& st, const Launch& l, const std::vector<KernelParam>& params, const StreamUse& use,
                     ArgsFound* args) {
  uint64_t words[kMaxLaunchWords];
  uint32_t where[kMaxLaunchWords][3];  // parameter, offset, parameter size
  uint32_t n = 0;
  auto flush = [&] {
    ArgRef refs[kMaxLaunchWords];
    bool hit[kMaxLaunchWords];
    st.hooks.NoteLaunchArgs(words, n, use, refs, hit);
    for (uint32_t i = 0; i < n; i++) {
      if (!hit[i]) continue;
      refs[i].param = static_cast<uint16_t>(where[i][0]);
      refs[i].offset = static_cast<uint16_t>(where[i][1]);
      refs[i].param_size = where[i][2];
      args->total++;
      if (args->kept < kArgsKept) args->found[args->kept++] = refs[i];
    }
    n = 0;
  };
  ScanWords(l, params, [&](uint32_t p, uint32_t off, uint32_t size, uint64_t v) {
    words[n] = v;
    where[n][0] = p;
    where[n][1] = off;
    where[n][2] = size;
    if (++n == kMaxLaunchWords) flush();
  });
  if (n > 0) flush();
}

// The record's parts, timed where the counters are on (TrackerStats).
struct RecordTimes {
  uint64_t start = 0, site = 0, args = 0;
};

// The args found into the launch's entry (unless the ring has moved past it) and the counters.
void CloseEntry(State& st, uint64_t number, const ArgsFound& args, const RecordTimes& t) {
  auto lock = Hold(st);
  Entry& e = st.ring[number % kRing];
  if (e.number == number) {
    e.arg_total = args.total;
    e.arg_count = args.kept;
    for (uint32_t i = 0; i < args.kept; i++) e.args[i] = args.found[i];
  }
  st.stats.guarded_args += args.total;
  st.stats.ns += CounterElapsedNs(t.start);
  st.stats.site_ns += t.site;
  st.stats.args_ns += t.args;
}

// Launch blocking: wait for this launch (our call: not the program's
// ordering), so a fault is pinned on it.
void WaitForLaunch(State& st, CUstream stream, const StreamUse& use, uint64_t number) {
  cuda::CUresult r;
  {
    InternalCalls internal;
    r = st.drv->cuStreamSynchronize(stream);
  }
  if (cuda::IsSticky(r)) {
    {
      std::lock_guard<std::mutex> lock(st.mu);
      Entry& e = st.ring[number % kRing];
      // The first launch whose own synchronize failed; later ones fail on the lost context.
      if (e.number == number && !st.faulted_once) e.faulted = st.faulted_once = true;
    }
    st.hooks.OnStickyError(r, "the synchronize after the launch (launch blocking)", number);
  } else if (r == cuda::kSuccess) {
    std::lock_guard<std::mutex> lock(st.mu);
    st.clocks.LaunchDone(use);
  }
}

}  // namespace

void SkipParts(bool site, bool args) {
  g_skip_site = site;
  g_skip_args = args;
}

void Record(const Launch& l) {
  State& st = S();
  RecordTimes t;
  t.start = CounterStartNs();
  // The call site first: a JS provider runs JS, outside our lock.
  // Numbered (and its call site taken) at its entry when its inputs were saved then.
  const Pending& pending = t_pending;
  SiteProvider site = __atomic_load_n(&st.site, __ATOMIC_ACQUIRE);
  uint32_t site_id = pending.number ? pending.site : site && !g_skip_site ? site() : 0;
  t.site = CounterElapsedNs(t.start);
  Opened o = OpenEntry(st, l, pending, site_id);
  ArgsFound args;
  uint64_t a0 = CounterStartNs();
  if (o.layout && !g_skip_args) FindGuardedArgs(st, l, *o.params, o.use, &args);
  t.args = CounterElapsedNs(a0);
  CloseEntry(st, o.number, args, t);
  if (st.blocking) WaitForLaunch(st, l.stream, o.use, o.number);
}

// dumpInputs: at a matching launch's entry (nothing of it queued yet),
// number it and save the guarded allocations its parameters point into.
void BeforeLaunch(const Launch& l) {
  State& st = S();
  std::vector<KernelParam> params;
  bool layout;
  uint32_t name;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    const Kernel& k = st.kernels.Of(st.drv, l.f, l.symbol);
    auto hit = st.dump_match.find(k.name);
    if (hit == st.dump_match.end())
      hit = st.dump_match.emplace(k.name, DumpWanted(StackStore::Get().Lookup(k.name))).first;
    if (!hit->second) return;
    layout = k.layout;
    params = k.params;
    name = k.name;
  }
  SiteProvider site = __atomic_load_n(&st.site, __ATOMIC_ACQUIRE);
  Pending p;
  p.site = site ? site() : 0;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    p.number = ++st.launches;
  }
  std::vector<DumpInput> inputs;
  if (layout) {
    ScanWords(l, params, [&](uint32_t p, uint32_t off, uint32_t, uint64_t v) {
      ArgRef a;
      if (!st.hooks.FindLaunchArg(v, &a) || a.freed) return;
      for (const DumpInput& in : inputs)
        if (in.alloc_id == a.alloc_id) return;  // one file per allocation, however many parameters point into it
      DumpInput in;
      in.param = p;
      in.offset = off;
      in.value = v;
      in.alloc_id = a.alloc_id;
      in.user = a.user;
      in.size = a.size;
      inputs.push_back(in);
    });
  }
  DumpLaunch what;
  what.number = p.number;
  what.kernel = StackStore::Get().Lookup(name);
  what.site = StackStore::Get().Lookup(p.site);
  what.test = StackStore::Get().Lookup(CurrentTestId());
  // The copy is ordered after the launch's stream: a per-thread default stream launch names it so.
  what.stream = l.ptsz && l.stream == nullptr ? reinterpret_cast<CUstream>(2) : l.stream;  // CU_STREAM_PER_THREAD
  size_t saved;
  {
    InternalCalls internal;  // the copies' synchronize is ours, not the program's ordering
    saved = DumpInputs(st.drv, what, inputs, p.inputs, kMaxDeviceLaunchInputs);
  }
  p.input_count = static_cast<uint32_t>(saved < kMaxDeviceLaunchInputs ? saved : kMaxDeviceLaunchInputs);
  t_pending = p;
}

}  // namespace tracker
}  // namespace device
}  // namespace mate
