#include "report/event_origin.h"

#include <cstring>

namespace mate {

namespace {

char g_runtime[4096];
// The folders, each ended by a NUL, the list by an empty one: written as they are, no copy (the handler's stack is
// small).
char g_machinery_dirs[16384];
char g_machinery_packages[4096];

// `lines` (newline-separated) into `out` as NUL-ended items ended by an empty one; too long keeps none.
void SetList(const char* lines, char* out, size_t size) {
  size_t n = lines != nullptr ? strlen(lines) : 0;
  if (n + 2 > size) n = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (lines[i] != '\n') {
      out[k++] = lines[i];
    } else if (k > 0 && out[k - 1] != '\0') {
      out[k++] = '\0';
    }
  }
  if (k > 0 && out[k - 1] != '\0') out[k++] = '\0';
  out[k] = '\0';
}

void WriteList(Writer* w, const char* name, const char* list) {
  w->Str(",\"");
  w->Str(name);
  w->Str("\":[");
  for (const char* p = list; *p != '\0'; p += strlen(p) + 1) {
    if (p != list) w->Char(',');
    w->JsonStr(p);
  }
  w->Char(']');
}

}  // namespace

void SetEventRuntime(const char* executable) {
  size_t n = executable != nullptr ? strlen(executable) : 0;
  if (n + 1 > sizeof(g_runtime)) n = 0;
  if (n > 0) memcpy(g_runtime, executable, n);
  g_runtime[n] = '\0';
}

void SetEventMachineryDirs(const char* dirs) { SetList(dirs, g_machinery_dirs, sizeof(g_machinery_dirs)); }

void SetEventMachineryPackages(const char* packages) {
  SetList(packages, g_machinery_packages, sizeof(g_machinery_packages));
}

void WriteEventOrigin(Writer* w) {
  w->Str(",\"runtime\":");
  w->JsonStr(g_runtime[0] ? g_runtime : nullptr);
  WriteList(w, "machineryDirs", g_machinery_dirs);
  WriteList(w, "machineryPackages", g_machinery_packages);
}

}  // namespace mate
