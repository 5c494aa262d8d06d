// Node-API surface of the stack keys.
#include "binding/stack_keys_binding.h"

#include "binding/counters.h"
#include "engine/stack_keys.h"

namespace mate {

namespace {

// stackKeys(frames) -> whether allocKeyed can key stacks here; sets how many
// frames a key covers (the allocation path's own frames + the text's).
Napi::Value StackKeysAvailable(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsNumber())
    engine::StackKeys::SetFrameLimit(info[0].As<Napi::Number>().Uint32Value());
  return Napi::Boolean::New(info.Env(), engine::StackKeys::ForThisThread() != nullptr);
}

// resetStackKeys(): the realm's stack formatter changed; known texts no
// longer apply.
Napi::Value ResetStackKeys(const Napi::CallbackInfo& info) {
  if (engine::StackKeys* keys = engine::StackKeys::ForThisThread()) keys->Reset();
  return info.Env().Undefined();
}

}  // namespace

void AddStackKeyExports(Napi::Env env, Napi::Object exports) {
  exports.Set("stackKeys", Napi::Function::New(env, StackKeysAvailable));
  exports.Set("resetStackKeys", Napi::Function::New(env, ResetStackKeys));
}

void AddStackKeyStats(Napi::Env env, Napi::Object stats) {
  // Allocations whose stack text was known (hits) or captured (misses).
  engine::StackKeys::Counters k{0, 0, 0, 0, 0};
  if (engine::StackKeys* keys = engine::StackKeys::ForThisThread()) k = keys->counters();
  auto num = [&](uint64_t v) { return CountToJs(env, v); };
  stats.Set("stackKeyHits", num(k.hits));
  stats.Set("stackKeyMisses", num(k.misses));
  stats.Set("stackV8Samples", num(k.v8_samples));
  stats.Set("stackKeysComposed", num(k.composed));
  stats.Set("stackKeySameCall", num(k.same_call));
}

}  // namespace mate
