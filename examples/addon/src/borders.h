#ifndef BUGGY_ADDON_BORDERS_H_
#define BUGGY_ADDON_BORDERS_H_

#include <napi.h>

// addon.borders: correct code whose memory crosses module borders.
void InitBorders(Napi::Env env, Napi::Object exports);

#endif  // BUGGY_ADDON_BORDERS_H_
