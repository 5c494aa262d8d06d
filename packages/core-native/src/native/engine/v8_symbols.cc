#include "engine/v8_symbols.h"

#include <dlfcn.h>

namespace mate {
namespace engine {

namespace {
template <typename F>
void Find(F* out, const char* mangled) {
  *out = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, mangled));
}

V8Api Resolve() {
  V8Api api{};
  Find(&api.get_current, "_ZN2v87Isolate10GetCurrentEv");
  Find(&api.get_stack_sample, "_ZN2v87Isolate14GetStackSampleERKNS_13RegisterStateEPPvmPNS_10SampleInfoE");
  Find(&api.add_gc_prologue_callback,
       "_ZN2v87Isolate21AddGCPrologueCallbackEPFvPS0_NS_6GCTypeENS_15GCCallbackFlagsEPvES4_S2_");
  Find(&api.add_gc_epilogue_callback,
       "_ZN2v87Isolate21AddGCEpilogueCallbackEPFvPS0_NS_6GCTypeENS_15GCCallbackFlagsEPvES4_S2_");
  Find(&api.entered_or_microtask_context, "_ZN2v87Isolate28GetEnteredOrMicrotaskContextEv");
  Find(&api.context_microtask_queue, "_ZN2v87Context17GetMicrotaskQueueEv");
  const size_t* offset = static_cast<const size_t*>(
      dlsym(RTLD_DEFAULT, "_ZN2v88internal14MicrotaskQueue29kFinishedMicrotaskCountOffsetE"));
  api.finished_microtask_count_offset = offset ? static_cast<intptr_t>(*offset) : -1;
  Find(&api.new_backing_store, "_ZN2v811ArrayBuffer15NewBackingStoreEPvmPFvS1_mS1_ES1_");
  Find(&api.array_buffer_new, "_ZN2v811ArrayBuffer3NewEPNS_7IsolateESt10shared_ptrINS_12BackingStoreEE");
  Find(&api.backing_store_dtor, "_ZN2v812BackingStoreD1Ev");
  Find(&api.set_flags_from_string, "_ZN2v82V818SetFlagsFromStringEPKc");
  Find(&api.isolate_address_from_id, "_ZN2v88internal7Isolate19get_address_from_idENS0_16IsolateAddressIdE");
  Find(&api.embedded_code_range, "_ZN2v87Isolate20GetEmbeddedCodeRangeEPPKvPm");
  Find(&api.memory_pressure_notification, "_ZN2v87Isolate26MemoryPressureNotificationENS_19MemoryPressureLevelE");
  Find(&api.number_new, "_ZN2v86Number3NewEPNS_7IsolateEd");
  Find(&api.handle_next_address, "_ZN2v88internal11HandleScope20current_next_addressEPNS0_7IsolateE");
  Find(&api.handle_limit_address, "_ZN2v88internal11HandleScope21current_limit_addressEPNS0_7IsolateE");
  return api;
}
}  // namespace

const V8Api& V8() {
  static const V8Api api = Resolve();
  return api;
}

bool HasStackSampling() {
  static const bool has = [] {
    const V8Api& a = V8();
    return a.get_current && a.get_stack_sample && a.add_gc_prologue_callback && a.entered_or_microtask_context &&
           a.context_microtask_queue && a.finished_microtask_count_offset > 0 &&
           a.finished_microtask_count_offset < 4096;
  }();
  return has;
}

bool HasBackingStoreDeleters() {
  const V8Api& a = V8();
  return a.get_current && a.new_backing_store && a.array_buffer_new && a.backing_store_dtor && a.set_flags_from_string;
}

}  // namespace engine
}  // namespace mate
