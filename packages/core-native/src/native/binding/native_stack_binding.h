#ifndef MATE_BINDING_NATIVE_STACK_BINDING_H_
#define MATE_BINDING_NATIVE_STACK_BINDING_H_

#include <napi.h>

namespace mate {

// refreshModuleMap(force?) and the test-only `nativeStackTesting` object.
void AddNativeStackExports(Napi::Env env, Napi::Object exports);

}  // namespace mate

#endif  // MATE_BINDING_NATIVE_STACK_BINDING_H_
