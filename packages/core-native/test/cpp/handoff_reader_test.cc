// options/handoff_reader: every row of the settings table by its key, the
// envelope, and foreign or stale handoffs refused by name.
#include <string>

#include "check.h"
#include "options/handoff_reader.h"

TEST(a_handoff_with_every_kind_of_field_is_read_into_options) {
  mate::Handoff h;
  std::string error;
  const char* json = R"({"version":1,"ownerPid":42,"explicit":["mode"],"settings":{"mode":"head","alignment":1,)"
                     R"("logAllocations":true,"captureStacks":false,"quarantineMaxBytes":0,"quarantineMaxCount":7,)"
                     R"("syncOnFree":false,"cudaQuarantine":"strict","launchBlocking":true,"reportDir":"/tmp/r \"x\"",)"
                     R"("nativeModules":["*a.node"],"suppressions":null,"dumpInputs":"*Fill<float, 4>*"}})";
  CHECK(mate::ReadHandoff(json, &h, &error));
  CHECK(h.options.mode == mate::Mode::kHead);
  CHECK_EQ(h.options.alignment, 1u);
  CHECK(h.options.log_allocations);
  CHECK(!h.options.capture_stacks);
  CHECK_EQ(h.options.quarantine_max_bytes, 0u);
  CHECK_EQ(h.options.quarantine_max_count, 7u);
  CHECK(h.options.sync_on_free == mate::Tristate::kOff);
  CHECK(h.options.cuda_quarantine == mate::CudaQuarantine::kStrict);
  CHECK(h.options.launch_blocking);
  CHECK(h.options.track_launches);                     // absent: the table's default
  CHECK(h.options.dump_inputs == "*Fill<float, 4>*");  // a glob with a comma: one string
  CHECK(h.report_dir == "/tmp/r \"x\"");
  CHECK(h.owned);
}

TEST(absent_settings_keep_the_tables_defaults_and_unset_stays_unset) {
  mate::Handoff h;
  std::string error;
  CHECK(mate::ReadHandoff(R"({"version":1,"settings":{}})", &h, &error));
  CHECK(h.options.mode == mate::Mode::kTail);
  CHECK_EQ(h.options.alignment, 16u);
  CHECK(h.options.sync_on_free == mate::Tristate::kUnset);
  CHECK_EQ(h.options.quarantine_max_bytes, mate::kUnsetU64);
  CHECK(h.options.dump_inputs.empty());
  CHECK_EQ(mate::QuarantineBytes(h.options, mate::kDeviceQuarantineBytes), mate::kDeviceQuarantineBytes);
  CHECK(!h.owned);
}

TEST(a_foreign_or_stale_handoff_is_refused_with_the_reason) {
  mate::Handoff h;
  std::string error;
  CHECK(!mate::ReadHandoff("not json", &h, &error));
  CHECK(error.find("not JSON") != std::string::npos);
  CHECK(!mate::ReadHandoff(R"({"version":2,"settings":{}})", &h, &error));
  CHECK(error.find("version 1") != std::string::npos);
  CHECK(!mate::ReadHandoff(R"({"version":1,"settings":{"alignment":"16"}})", &h, &error));
  CHECK(error.find("bad alignment") != std::string::npos);
  CHECK(!mate::ReadHandoff(R"({"version":1,"settings":{"cudaQuarantine":"lenient"}})", &h, &error));
  CHECK(error.find("bad cudaQuarantine") != std::string::npos);
  CHECK(!mate::ReadHandoff(R"({"version":1,"settings":{"dumpInputs":["*Fill*"]}})", &h, &error));
  CHECK(error.find("bad dumpInputs") != std::string::npos);
}
