// The rerun block (report/format/rerun_block.h): what a run's automatic
// rerun found, as every host prints it under the report, for each thing
// the rerun can file (a fault, a death, nothing, no test run; a kernel
// exception pinned or not).
#include <string>

#include "check.h"
#include "report/format/format_options.h"
#include "report/format/json_value.h"
#include "report/format/rerun_block.h"

namespace {

#define CHECK_TEXT(a, b)                                                                                             \
  do {                                                                                                               \
    std::string mate_a = (a), mate_b = (b);                                                                          \
    if (mate_a != mate_b) {                                                                                          \
      fprintf(stderr, "  %s:%d: texts differ:\n%s\n  vs\n%s\n", __FILE__, __LINE__, mate_a.c_str(), mate_b.c_str()); \
      *mate_test_failed = true;                                                                                      \
    }                                                                                                                \
  } while (0)

const char kTest[] = "canary/canary.spec.cjs > canary damage > underflows by one";

std::string Block(const std::string& rerun, const std::string& extra = "", const std::string& test = kTest) {
  std::string json = std::string("{\"kind\":\"canary-corruption\",\"fatal\":false,\"test\":\"") + test +
                     "\",\"allocation\":{\"id\":6,\"size\":64,\"mode\":\"tail\",\"alignment\":16,\"backend\":\"js\"}" +
                     extra + ",\"rerun\":" + rerun + "}";
  mate::JsonValue e;
  std::string error;
  if (!mate::ParseJson(json, &e, &error)) fprintf(stderr, "  bad test JSON: %s\n", error.c_str());
  mate::FormatOptions o;
  o.cwd = "/repo";
  return mate::RerunBlock(e, o);
}

std::string KernelBlock(const std::string& rerun) {
  mate::JsonValue e;
  std::string error;
  mate::ParseJson(std::string("{\"kind\":\"illegal-address\",\"fatal\":true,\"test\":\"t.py::test_k\","
                              "\"device\":{\"ordinal\":1},\"rerun\":") +
                      rerun + "}",
                  &e, &error);
  return mate::RerunBlock(e, mate::FormatOptions());
}

const char kAbout[] =
    "the canary-corruption of allocation #6 (64 bytes, tail mode) in canary/canary.spec.cjs > canary damage > "
    "underflows by one";

}  // namespace

TEST(rerun_block_of_a_canary_rerun_that_faulted_shows_the_faults_filed_report_under_its_line) {
  CHECK_TEXT(Block("{\"mode\":\"head\",\"alignment\":16,\"fault\":{\"kind\":\"heap-buffer-underflow\","
                   "\"text\":\"==mate-guard== ERROR: heap-buffer-underflow\\n==mate-guard== access:\\n\"}}"),
             std::string("[mate-guard] rerun in head mode: ") + kAbout +
                 " faults at the first bad access:\n==mate-guard== ERROR: heap-buffer-underflow\n"
                 "==mate-guard== access:\n");
}

TEST(rerun_block_of_a_rerun_that_died_first_says_it_proves_nothing_and_shows_the_death) {
  CHECK_TEXT(Block("{\"mode\":\"head\",\"alignment\":16,\"fault\":null,\"death\":{\"kind\":\"signal\","
                   "\"test\":\"other > test\",\"text\":\"==mate-guard== ERROR: SIGSEGV\\n\"}}"),
             std::string("[mate-guard] rerun in head mode: ") + kAbout +
                 " did not fault: the rerun died of something else first (in other > test), before the bad "
                 "access, so it proves nothing about it; the death:\n==mate-guard== ERROR: SIGSEGV\n");
}

TEST(rerun_block_of_a_rerun_that_did_not_fault_says_the_damage_did_not_happen_again) {
  CHECK_TEXT(Block("{\"mode\":\"head\",\"alignment\":16,\"fault\":null}"),
             std::string("[mate-guard] rerun in head mode: ") + kAbout +
                 " did not fault (the damage did not happen again on its own: it may depend on timing or on tests "
                 "that did not rerun)\n");
}

TEST(rerun_block_of_a_rerun_that_ran_no_test_says_it_tells_nothing) {
  CHECK_TEXT(Block("{\"mode\":\"head\",\"alignment\":16,\"fault\":null,\"ranNoTest\":true}"),
             std::string("[mate-guard] rerun in head mode: ran no test, so it tells nothing about ") + kAbout +
                 ": the runner selected none of its tests (a name that changes from run to run, or an argument of "
                 "the command that excludes it)\n");
}

TEST(rerun_block_label_names_a_smaller_tail_alignment_and_a_byte_exact_native_size) {
  std::string tail = Block("{\"mode\":\"tail\",\"alignment\":1,\"fault\":null}");
  CHECK(tail.find("[mate-guard] rerun in tail mode with alignment 1: the canary") == 0);
  std::string same = Block("{\"mode\":\"tail\",\"alignment\":16,\"fault\":null}");
  CHECK(same.find("[mate-guard] rerun in tail mode: the canary") == 0);
  std::string exact = Block("{\"mode\":\"tail\",\"alignment\":16,\"nativeExactSize\":64,\"fault\":null}");
  CHECK(exact.find("[mate-guard] rerun in tail mode with the native heap's 64-byte allocations placed byte-exact: "
                   "the canary") == 0);
}

TEST(rerun_block_is_empty_without_a_rerun_for_a_suppressed_report_or_another_kind) {
  mate::JsonValue e;
  std::string error;
  mate::ParseJson("{\"kind\":\"canary-corruption\",\"allocation\":{\"id\":1}}", &e, &error);
  CHECK_TEXT(mate::RerunBlock(e, mate::FormatOptions()), "");
  CHECK_TEXT(Block("{\"mode\":\"head\",\"alignment\":16,\"fault\":null}",
                   ",\"suppressed\":{\"file\":\"s.supp\",\"line\":1,\"rule\":\"r\"}"),
             "");
  mate::ParseJson("{\"kind\":\"use-after-free\",\"rerun\":{\"mode\":\"head\",\"alignment\":16,\"fault\":null}}", &e,
                  &error);
  CHECK_TEXT(mate::RerunBlock(e, mate::FormatOptions()), "");
}

TEST(rerun_block_spells_out_control_characters_of_a_test_name) {
  std::string text = Block("{\"mode\":\"head\",\"alignment\":16,\"fault\":null}", "", "a\\u001b[2Jb");
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("in a\\x1b[2Jb did not fault") != std::string::npos);
}

TEST(rerun_block_of_a_kernel_exception_pinned_by_launch_blocking_shows_the_launchs_report) {
  CHECK_TEXT(KernelBlock("{\"mode\":\"tail\",\"alignment\":16,\"fault\":{\"kind\":\"illegal-address\","
                         "\"text\":\"==mate-guard== ERROR: illegal-address in kernel k\\n\"}}"),
             "[mate-guard] rerun with launch blocking: the illegal-address on device 1 in t.py::test_k is this "
             "launch's:\n==mate-guard== ERROR: illegal-address in kernel k\n");
}

TEST(rerun_block_of_a_kernel_exception_not_pinned_asks_for_launch_blocking_or_says_no_test_ran) {
  CHECK_TEXT(KernelBlock("{\"mode\":\"tail\",\"alignment\":16,\"fault\":null}"),
             "[mate-guard] rerun with launch blocking: the illegal-address on device 1 in t.py::test_k did not "
             "happen again (it may depend on timing, data or tests that did not rerun): rerun with "
             "--guard-launch-blocking yourself\n");
  CHECK_TEXT(KernelBlock("{\"mode\":\"tail\",\"alignment\":16,\"fault\":null,\"ranNoTest\":true}"),
             "[mate-guard] rerun with launch blocking: ran no test, so it tells nothing about the illegal-address "
             "on device 1 in t.py::test_k\n");
}
