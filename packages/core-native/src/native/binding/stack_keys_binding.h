#ifndef MATE_BINDING_STACK_KEYS_BINDING_H_
#define MATE_BINDING_STACK_KEYS_BINDING_H_

#include <napi.h>

namespace mate {

// stackKeys(frames) and resetStackKeys(): how JS allocation stacks are keyed
// without capturing their text (see engine/stack_keys.h).
void AddStackKeyExports(Napi::Env env, Napi::Object exports);

// This thread's key counters (stackKeyHits, stackKeyMisses, stackV8Samples)
// added to a stats object.
void AddStackKeyStats(Napi::Env env, Napi::Object stats);

}  // namespace mate

#endif  // MATE_BINDING_STACK_KEYS_BINDING_H_
