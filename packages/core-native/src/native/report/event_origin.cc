#include "report/event_origin.h"

#include <cstring>

namespace mate {

namespace {

char g_runtime[4096];
// The folders, each ended by a NUL, the list by an empty one: written as they are, no copy (the handler's stack is
// small).
char g_machinery_dirs[16384];

}  // namespace

void SetEventRuntime(const char* executable) {
  size_t n = executable != nullptr ? strlen(executable) : 0;
  if (n + 1 > sizeof(g_runtime)) n = 0;
  if (n > 0) memcpy(g_runtime, executable, n);
  g_runtime[n] = '\0';
}

void SetEventMachineryDirs(const char* dirs) {
  size_t n = dirs != nullptr ? strlen(dirs) : 0;
  if (n + 2 > sizeof(g_machinery_dirs)) n = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (dirs[i] != '\n') {
      g_machinery_dirs[k++] = dirs[i];
    } else if (k > 0 && g_machinery_dirs[k - 1] != '\0') {
      g_machinery_dirs[k++] = '\0';
    }
  }
  if (k > 0 && g_machinery_dirs[k - 1] != '\0') g_machinery_dirs[k++] = '\0';
  g_machinery_dirs[k] = '\0';
}

void WriteEventOrigin(Writer* w) {
  w->Str(",\"runtime\":");
  w->JsonStr(g_runtime[0] ? g_runtime : nullptr);
  w->Str(",\"machineryDirs\":[");
  for (const char* p = g_machinery_dirs; *p != '\0'; p += strlen(p) + 1) {
    if (p != g_machinery_dirs) w->Char(',');
    w->JsonStr(p);
  }
  w->Char(']');
}

}  // namespace mate
