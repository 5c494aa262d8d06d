#ifndef MATE_BINDING_COUNTERS_H_
#define MATE_BINDING_COUNTERS_H_

#include <napi.h>

#include <cstdint>

namespace mate {

inline Napi::Number CountToJs(Napi::Env env, uint64_t v) { return Napi::Number::New(env, static_cast<double>(v)); }

// The counters every backend keeps (host AllocatorStats, device
// DeviceStats), under the names stats() and deviceStats() share.
template <typename Stats>
void SetAllocationCounts(Napi::Env env, Napi::Object o, const Stats& s) {
  o.Set("allocations", CountToJs(env, s.allocations));
  o.Set("frees", CountToJs(env, s.frees));
  o.Set("live", CountToJs(env, s.live));
  o.Set("peakLive", CountToJs(env, s.peak_live));
  o.Set("liveBytes", CountToJs(env, s.live_bytes));
  o.Set("fallbacks", CountToJs(env, s.fallbacks));
  o.Set("fallbackReason",
        s.last_fallback_reason ? Napi::Value(Napi::String::New(env, s.last_fallback_reason)) : env.Null());
  o.Set("quarantined", CountToJs(env, s.quarantined));
}

}  // namespace mate

#endif  // MATE_BINDING_COUNTERS_H_
