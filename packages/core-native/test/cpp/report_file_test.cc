// report/report_file: a report file never replaces one that an earlier
// process with the same pid left (pid reuse over a long run, or the process
// this one replaced: the pytest plugin's continuation after a fault keeps
// the pid).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "check.h"
#include "report/report_file.h"

namespace {

std::string Slurp(const std::string& path) {
  std::string out;
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return "(missing)";
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

}  // namespace

TEST(a_report_file_never_replaces_one_an_earlier_process_with_this_pid_left) {
  char dir[] = "/tmp/mate-report-file-test-XXXXXX";
  CHECK(mkdtemp(dir) != nullptr);
  mate::SetReportDir(dir);
  // What an earlier process with this pid filed: its first two reports.
  std::string pid = std::to_string(getpid());
  for (const char* n : {"1", "2"}) {
    FILE* f = fopen((std::string(dir) + "/mate-guard-" + pid + "-" + n + ".json").c_str(), "w");
    fputs("{\"earlier\":true}", f);
    fclose(f);
  }
  char path[4200];
  const char json[] = "{\"kind\":\"this\"}";
  CHECK(mate::WriteReportFile(json, strlen(json), path, sizeof(path)));
  CHECK(std::string(path) != std::string(dir) + "/mate-guard-" + pid + "-1.json");
  CHECK(std::string(path) != std::string(dir) + "/mate-guard-" + pid + "-2.json");
  CHECK(Slurp(path) == std::string(json));
  CHECK(Slurp(std::string(dir) + "/mate-guard-" + pid + "-1.json") == std::string("{\"earlier\":true}"));
  CHECK(Slurp(std::string(dir) + "/mate-guard-" + pid + "-2.json") == std::string("{\"earlier\":true}"));
  CHECK_EQ(access((std::string(path) + ".tmp").c_str(), F_OK), -1);  // nothing left beside it
  mate::SetReportDir("");
  std::string rm = std::string("rm -rf ") + dir;
  CHECK_EQ(system(rm.c_str()), 0);
}
