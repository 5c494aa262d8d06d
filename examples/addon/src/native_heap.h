#ifndef BUGGY_ADDON_NATIVE_HEAP_H_
#define BUGGY_ADDON_NATIVE_HEAP_H_

#include <napi.h>

// Adds `nativeHeap` (the native-heap planted bugs and clean workloads) to exports.
void InitNativeHeap(Napi::Env env, Napi::Object exports);

#endif  // BUGGY_ADDON_NATIVE_HEAP_H_
