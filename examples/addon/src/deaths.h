#ifndef BUGGY_ADDON_DEATHS_H_
#define BUGGY_ADDON_DEATHS_H_

#include <napi.h>

// addon.deaths: ways a process dies that are no guard fault.
void InitDeaths(Napi::Env env, Napi::Object exports);

#endif  // BUGGY_ADDON_DEATHS_H_
