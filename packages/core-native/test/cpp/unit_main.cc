// Runs every registered C++ unit test (ctest runs this binary; `npm test`
// runs ctest through test/unit/cpp-unit.test.mjs). A name on the command
// line runs the cases whose names contain it.
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int passed = 0, failed = 0;
  for (const mate_test::Case& c : mate_test::Cases()) {
    if (argc > 1 && strstr(c.name, argv[1]) == nullptr) continue;
    bool bad = false;
    c.fn(&bad);
    printf("%s %s\n", bad ? "FAIL" : "ok  ", c.name);
    (bad ? failed : passed)++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
