// The one report formatter (src/native/report/format/): the event reader's
// limits, escaping per format, frame lines and the fold rule, on events
// written as report_event.cc writes them.
#include <string>
#include <utility>

#include "check.h"
#include "report/format/earlier_header.h"
#include "report/format/escape.h"
#include "report/format/event_origin_fields.h"
#include "report/format/event_schema.h"
#include "report/format/event_sites.h"
#include "report/format/format_ci.h"
#include "report/format/format_text.h"
#include "report/format/js_frames.h"
#include "report/format/json_value.h"
#include "report/format/native_frames.h"
#include "report/format/sha256.h"
#include "report/format/source_paths.h"

namespace {

#define CHECK_STR(a, b)                                                                                   \
  do {                                                                                                    \
    std::string mate_a = (a), mate_b = (b);                                                               \
    if (mate_a != mate_b) {                                                                               \
      fprintf(stderr, "  %s:%d: CHECK_STR failed:\n    %s\n    %s\n", __FILE__, __LINE__, mate_a.c_str(), \
              mate_b.c_str());                                                                            \
      *mate_test_failed = true;                                                                           \
    }                                                                                                     \
  } while (0)

mate::JsonValue Parse(const std::string& json) {
  mate::JsonValue v;
  std::string error;
  if (!mate::ParseJson(json, &v, &error)) fprintf(stderr, "  bad test JSON: %s\n", error.c_str());
  return v;
}

mate::FormatOptions Options() {
  mate::FormatOptions o;
  o.cwd = "/repo";
  o.origin.runtime = "/usr/bin/node";
  return o;
}

std::string StackLines(const std::string& frames_json) {
  mate::Lines lines =
      mate::NativeLines("access", Parse("{\"unwind\":\"unwind-tables\",\"frames\":" + frames_json + "}"), Options());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST(json_reader_refuses_nesting_past_its_depth_and_names_where) {
  std::string deep(40, '[');
  deep += std::string(40, ']');
  mate::JsonValue v;
  std::string error;
  CHECK(!mate::ParseJson(deep, &v, &error));
  CHECK(error.find("nesting deeper than 32 levels") != std::string::npos);
  mate::JsonLimits small;
  small.max_bytes = 8;
  CHECK(!mate::ParseJson("{\"kind\":\"x\"}", &v, &error, small));
  CHECK(error.find("more than the 8") != std::string::npos);
  CHECK(!mate::ParseJson("{\"kind\":\"heap-", &v, &error));
  CHECK(error.find("cut short") != std::string::npos);
}

TEST(json_reader_gives_null_for_missing_or_mistyped_fields) {
  mate::JsonValue v = Parse("{\"a\":{\"b\":[1,\"x\"]},\"s\":\"\\u00e9\\ud83d\\ude00\"}");
  CHECK(v["a"]["b"].At(1).IsString());
  CHECK(v["a"]["nope"]["deeper"].IsNull());
  CHECK(v["s"]["field of a string"].IsNull());
  CHECK_STR(v["s"].Str(), "\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(text_escaping_shows_controls_and_bidi_and_keeps_one_line) {
  CHECK_STR(mate::VisibleText("a\nb\x1b[31m\tc\x7f"), "a\\nb\\x1b[31m\\tc\\x7f");
  CHECK_STR(mate::VisibleText("evil\xE2\x80\xAEtxt.js"), "evil\\u202etxt.js");
  CHECK_STR(mate::VisibleText("bad \xff byte, ok \xE2\x80\xA6"), "bad \\xff byte, ok \xE2\x80\xA6");
}

TEST(filed_report_text_keeps_its_lines_and_tabs_and_shows_every_other_control) {
  const std::string real = "==mate-guard== ERROR: x\n==mate-guard==\tat f (a.js:1)\n\xE2\x80\xA6\n";
  CHECK_STR(mate::VisibleLines(real), real);
  CHECK_STR(mate::VisibleLines("a\x1b]0;t\x07\x1b[2J\r\xC2\x9b\n\xE2\x80\xAE"
                               "b\xff\n"),
            "a\\x1b]0;t\\x07\\x1b[2J\\r\\u009b\n\\u202eb\\xff\n");
}

TEST(github_and_json_escaping_keep_one_command_one_string) {
  CHECK_STR(mate::GithubMessage("50%\r\n::error::x"), "50%25%0D%0A::error::x");
  CHECK_STR(mate::GithubProperty("a:b,c\n"), "a%3Ab%2Cc%0A");
  CHECK_STR(mate::JsonQuote("q\"\\\n\x01\xE2\x80\xA8"), "\"q\\\"\\\\\\n\\u0001\\u2028\"");
}

TEST(frame_lines_print_sanitizer_style_with_paths_relative_to_cwd) {
  std::string out = StackLines(
      "[{\"module\":\"/repo/examples/addon/build/Release/buggy_addon.node\",\"offset\":25256,\"function\":\"(anonymous "
      "namespace)::FillInclusive(Napi::CallbackInfo "
      "const&)\",\"file\":\"/repo/examples/addon/src/buggy.cc\",\"line\":36,"
      "\"inlined\":[{\"function\":\"Outer(int)\",\"file\":\"/repo/a.cc\",\"line\":7}]},"
      "{\"module\":\"/usr/lib/libfoo.so\",\"offset\":6699},"
      "{\"module\":null,\"offset\":1,\"pc\":\"0x7f0011223344\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":12869013,\"function\":\"v8impl::(anonymous "
      "namespace)::FunctionCallbackWrapper::Invoke(v8::FunctionCallbackInfo<v8::Value> const&)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":16059359}]");
  CHECK_STR(out,
            "access:\n"
            "  #0 FillInclusive examples/addon/src/buggy.cc:36 (buggy_addon.node+0x62a8)\n"
            "  #0.1 Outer a.cc:7 (buggy_addon.node+0x62a8)\n"
            "  #1 (libfoo.so+0x1a2b)\n"
            "  #2 (0x7f0011223344, no module)\n"
            "  #3 v8impl::FunctionCallbackWrapper::Invoke (node+0xc45d95)\n"
            "  \xE2\x80\xA6 1 more frame in the runtime\n");
}

TEST(short_function_names_drop_return_types_parameters_and_long_templates) {
  CHECK_STR(mate::ShortFunctionName(
                "napi_value__* Napi::details::WrapCallback<Napi::Value (*)(Napi::CallbackInfo const&)>(napi_env__*)"),
            "Napi::details::WrapCallback<\xE2\x80\xA6>");
  CHECK_STR(mate::ShortFunctionName("Foo::operator()(int) const"), "Foo::operator()");
  CHECK_STR(mate::ShortFunctionName("ThrowUncaught(Napi::CallbackInfo const&) (.cold)"), "ThrowUncaught [clone .cold]");
  CHECK_STR(mate::ShortFunctionName("std::vector<int>::at(unsigned long)"), "std::vector<int>::at");
}

// The case: napi_create_string_utf8 over-reads a buffer inside node;
// the addon frame that passed the bad length is shown, the runtime's folded
// (three or fewer, such as raise and abort above a caller, stay shown).
TEST(fold_rule_shows_the_first_frame_outside_the_runtime) {
  std::string out = StackLines(
      "[{\"module\":\"/usr/bin/"
      "node\",\"offset\":16,\"function\":\"v8::internal::Utf8DecoderBase<v8::internal::Utf8Decoder>::Utf8DecoderBase("
      "v8::base::Vector<unsigned char const>)\"},"
      "{\"module\":\"/usr/bin/"
      "node\",\"offset\":32,\"function\":\"v8::internal::Factory::NewStringFromUtf8(v8::base::Vector<char const>)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":33},{\"module\":\"/usr/bin/node\",\"offset\":34},"
      "{\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":48},"
      "{\"module\":\"/usr/bin/node\",\"offset\":50,\"function\":\"v8::String::NewFromUtf8(v8::Isolate*, char const*, "
      "v8::NewStringType, int)\"},"
      "{\"module\":\"/repo/build/Release/strings.node\",\"offset\":64,\"function\":\"extractStrings(napi_env__*, "
      "napi_callback_info__*)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":80,\"function\":\"v8impl::FunctionCallbackWrapper::Invoke\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":96}]");
  CHECK_STR(out,
            "access:\n"
            "  #0 v8::internal::Utf8DecoderBase<\xE2\x80\xA6>::Utf8DecoderBase (node+0x10)\n"
            "  \xE2\x80\xA6 5 frames in the runtime folded (#1 to #5, in node, libc.so.6; #6 called "
            "v8::String::NewFromUtf8)\n"
            "  #6 extractStrings (strings.node+0x40)\n"
            "  #7 v8impl::FunctionCallbackWrapper::Invoke (node+0x50)\n"
            "  \xE2\x80\xA6 1 more frame in the runtime\n");
}

// As node 20 records it: three of node's own frames between the decoder and
// the addon are folded too (only system libraries' raise and abort stay).
TEST(fold_rule_folds_even_a_few_host_runtime_frames_but_shows_raise_and_abort) {
  std::string out = StackLines(
      "[{\"module\":\"/usr/bin/"
      "node\",\"offset\":16,\"function\":\"v8::internal::Utf8DecoderBase<v8::internal::Utf8Decoder>::Utf8DecoderBase("
      "v8::base::Vector<unsigned char const>)\"},"
      "{\"module\":\"/usr/bin/"
      "node\",\"offset\":32,\"function\":\"v8::internal::Factory::NewStringFromUtf8(v8::base::Vector<char const> "
      "const&)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":48,\"function\":\"v8::String::NewFromUtf8(v8::Isolate*, char const*, "
      "v8::NewStringType, int)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":50,\"function\":\"napi_create_string_utf8\"},"
      "{\"module\":\"/repo/build/Release/strings.node\",\"offset\":64,\"function\":\"(anonymous "
      "namespace)::ExtractStrings(Napi::CallbackInfo const&)\"},"
      "{\"module\":\"/repo/build/Release/"
      "strings.node\",\"offset\":72,\"function\":\"Napi::details::CallbackData<int>::Wrapper(napi_env__*, "
      "napi_callback_info__*)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":80,\"function\":\"v8impl::FunctionCallbackWrapper::Invoke\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":96}]");
  CHECK_STR(out,
            "access:\n"
            "  #0 v8::internal::Utf8DecoderBase<\xE2\x80\xA6>::Utf8DecoderBase (node+0x10)\n"
            "  \xE2\x80\xA6 3 frames in the runtime folded (#1 to #3, in node; #4 called napi_create_string_utf8)\n"
            "  #4 ExtractStrings (strings.node+0x40)\n"
            "  #5 Napi::details::CallbackData<int>::Wrapper (strings.node+0x48)\n"
            "  #6 v8impl::FunctionCallbackWrapper::Invoke (node+0x50)\n"
            "  \xE2\x80\xA6 1 more frame in the runtime\n");
  std::string abort = StackLines(
      "[{\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":1,\"function\":\"__pthread_kill_implementation\"},"
      "{\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":2,\"function\":\"raise\"},"
      "{\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":3,\"function\":\"abort\"},"
      "{\"module\":\"/repo/a.node\",\"offset\":4,\"function\":\"Abort(Napi::CallbackInfo const&)\"},"
      "{\"module\":\"/usr/bin/node\",\"offset\":5}]");
  CHECK_STR(abort,
            "access:\n"
            "  #0 __pthread_kill_implementation (libc.so.6+0x1)\n"
            "  #1 raise (libc.so.6+0x2)\n"
            "  #2 abort (libc.so.6+0x3)\n"
            "  #3 Abort (a.node+0x4)\n"
            "  #4 (node+0x5)\n");
}

// A runner's machinery is the packages the event names (its runner adapters'
// stack roots, `*` within one segment), never a list in the formatter: an
// event naming none shows every node_modules frame.
TEST(js_frames_in_the_packages_an_event_names_are_machinery) {
  const std::string stack =
      "Error\n    at run (/p/node_modules/jest-circus/build/run.js:1:2)\n"
      "    at load (/p/node_modules/@jest/core/build/x.js:1:2)\n"
      "    at stub (/p/node_modules/ava-stub-runner/index.js:1:2)\n"
      "    at lib (/p/node_modules/lodash/index.js:1:2)\n    at t (/p/a.test.js:3:4)";
  mate::FormatOptions o =
      mate::WithOrigin(Options(), Parse("{\"machineryPackages\":[\"jest-*\",\"@jest/*\",\"ava-stub-runner\"]}"));
  mate::TrimmedStack t = mate::TrimJsStack(stack, o);
  CHECK(t.dropped == 3);
  CHECK(t.frames.size() == 3);
  CHECK_STR(t.frames[1], "    at lib (/p/node_modules/lodash/index.js:1:2)");
  mate::TrimmedStack none = mate::TrimJsStack(stack, mate::WithOrigin(Options(), Parse("{\"machineryPackages\":[]}")));
  CHECK(none.dropped == 0);
}

// Where a V8-style line points: parenthesised, bare, file URLs decoded, an
// eval's origin as V8 writes it; a line that is no frame points nowhere.
TEST(js_frame_locations_parenthesised_bare_file_urls_and_eval_origins) {
  const std::pair<const char*, const char*> cases[] = {
      {"    at f (/a/b.js:1:2)", "/a/b.js"},
      {"    at /a/b c.ts:3:4", "/a/b c.ts"},
      {"    at async file:///a/b%20c.mjs:3:4", "/a/b c.mjs"},
      {"    at async run (file:///a/b.mjs:3:4)", "/a/b.mjs"},
      {"    at new Promise (<anonymous>)", "<anonymous>"},
      {"    at eval (eval at load (/p/h.js:2:3), <anonymous>:1:1)", "eval at load (/p/h.js:2:3), <anonymous>"},
  };
  for (const auto& [line, want] : cases) {
    std::string loc;
    CHECK(mate::JsFrameLocation(line, &loc));
    CHECK_STR(loc, want);
  }
  std::string loc;
  CHECK(!mate::JsFrameLocation("Error: boom", &loc));
}

// No user frame: the innermost frames are kept (the only clue to where in
// the runner), the rest counted; a first line that is no frame stays.
TEST(a_stack_without_user_frames_keeps_its_innermost_frames_and_counts_the_rest) {
  mate::FormatOptions o = mate::WithOrigin(Options(), Parse("{\"machineryPackages\":[\"jest-*\"]}"));
  std::string stack = "Error";
  for (int i = 0; i < 10; i++)
    stack += "\n    at f" + std::to_string(i) + " (/p/node_modules/jest-runtime/build/x.js:1:2)";
  mate::TrimmedStack t = mate::TrimJsStack(stack, o);
  CHECK(t.frames.size() == 1 + mate::kRunnerFramesShown);
  CHECK_STR(t.frames[0], "Error");
  CHECK_STR(t.frames[1], "    at f0 (/p/node_modules/jest-runtime/build/x.js:1:2)");
  CHECK(t.dropped == 10 - mate::kRunnerFramesShown);
  mate::TrimmedStack two =
      mate::TrimJsStack("    at f0 (/p/node_modules/jest-runtime/build/x.js:1:2)\n    at f1 (node:internal/x:1:2)", o);
  CHECK(two.frames.size() == 2);
  CHECK(two.dropped == 0);
}

// The same event renders the same whoever renders it: the writer's runtime
// and machinery folders come from the event, not from the reader.
TEST(event_origin_names_the_writers_runtime_and_machinery_whoever_renders_it) {
  mate::FormatOptions reader;
  reader.cwd = "/repo";
  mate::FormatOptions o =
      mate::WithOrigin(reader, Parse("{\"runtime\":\"/opt/host/bin/embedder\",\"machineryDirs\":[\"/opt/mg/\"]}"));
  CHECK_STR(o.origin.runtime, "/opt/host/bin/embedder");
  mate::Lines lines = mate::NativeLines("access",
                                        Parse("{\"frames\":[{\"module\":\"/opt/host/bin/embedder\",\"offset\":16},"
                                              "{\"module\":\"/opt/host/bin/embedder\",\"offset\":32},"
                                              "{\"module\":\"/repo/addon.node\",\"offset\":64,\"function\":\"f\"}]}"),
                                        o);
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  CHECK_STR(out,
            "access:\n  #0 (embedder+0x10)\n  \xE2\x80\xA6 1 frame in the runtime folded (#1 to #1, in embedder)\n  #2 "
            "f (addon.node+0x40)\n");
  mate::TrimmedStack t =
      mate::TrimJsStack("Error\n    at alloc (/opt/mg/dist/install.js:1:2)\n    at t (/repo/a.test.js:3:4)", o);
  CHECK(t.dropped == 1);
  // An event that does not say (one inside another, or written before events did) keeps what it was given.
  mate::FormatOptions kept = mate::WithOrigin(o, Parse("{\"kind\":\"x\"}"));
  CHECK_STR(kept.origin.runtime, "/opt/host/bin/embedder");
  CHECK(kept.origin.machinery_dirs.size() == 1);
  CHECK(mate::WithOrigin(reader, Parse("{\"runtime\":null}")).origin.runtime.empty());
}

// One line for the crash printer ("this process") and a CLI that outlives the process (its label and pid).
TEST(earlier_reports_header_names_who_how_many_and_what_killed_it) {
  CHECK_STR(mate::EarlierReportsHeader(Parse("{\"kind\":\"heap-buffer-overflow\"}"), 1, "this process"),
            "[mate-guard] this process gave its test runner a report before the guard fault killed it; the runner "
            "never showed it:\n");
  CHECK_STR(
      mate::EarlierReportsHeader(Parse("{\"kind\":\"deadly-signal\",\"death\":{\"signal\":6}}"), 2, "mocha worker 42"),
      "[mate-guard] mocha worker 42 gave its test runner 2 reports before SIGABRT killed it; the runner never showed "
      "them:\n");
  CHECK_STR(
      mate::EarlierReportsHeader(
          Parse("{\"kind\":\"uncaught-exception\",\"death\":{\"signal\":6,\"exception\":{\"type\":\"bad\\nline\"}}}"),
          1, "this process"),
      "[mate-guard] this process gave its test runner a report before an uncaught C++ exception (bad\\nline) killed "
      "it; the runner never showed it:\n");
}

TEST(untrusted_names_cannot_forge_report_lines) {
  std::string text = mate::FormatTextJson(
      "{\"tool\":\"mate-guard\",\"kind\":\"double-free\",\"address\":\"0x10\",\"test\":\"t\\n==mate-guard== hint: all "
      "good\\u001b[2J\",\"allocation\":null}",
      Options());
  CHECK(text.find("test: t\\n==mate-guard== hint: all good\\x1b[2J\n") != std::string::npos);
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  CHECK_EQ(lines, 4u);  // headline, test, hint, suppression: no line of the test's making
  CHECK(text.find("\n==mate-guard== hint: all good") == std::string::npos);
}

TEST(a_bad_event_is_one_error_line_naming_the_field_never_a_crash) {
  CHECK_STR(mate::FormatTextJson("[1,2", Options()),
            "==mate-guard== ERROR: unreadable report event: not JSON (cut short at byte 4)\n");
  CHECK_STR(mate::FormatTextJson("42", Options()),
            "==mate-guard== ERROR: unreadable report event: not a mate-guard report (a number, not an object)\n");
  CHECK_STR(mate::EventTextProblem(
                "{\"tool\":\"mate-guard\",\"kind\":\"double-free\",\"allocation\":{\"id\":1,\"size\":\"x\"}}"),
            "allocation.size is a string, not a number");
  CHECK_STR(mate::EventTextProblem(
                "{\"tool\":\"mate-guard\",\"kind\":\"deadly-signal\",\"accessStack\":{\"frames\":[{\"offset\":1},7]}}"),
            "accessStack.frames[1] is a number, not an object");
  CHECK_STR(mate::EventTextProblem("{\"tool\":\"mate-guard\",\"kind\":\"heap-oops\"}"),
            "kind \"heap-oops\" is no report kind this version knows");
  CHECK_STR(mate::EventTextProblem("{\"tool\":\"mate-guard\",\"kind\":\"illegal-address\",\"launches\":{\"list\":[{"
                                   "\"args\":[{\"allocation\":3}]}]}}"),
            "launches.list[0].args[0].allocation is a number, not an object");
  CHECK_STR(mate::EventTextProblem("{\"tool\":\"mate-guard\",\"kind\":\"out-of-memory\",\"memory\":{\"requested\":1}}"),
            "");
  // Mistyped fields the schema does not reach still give a report, not a crash.
  std::string text = mate::FormatText(mate::JsonValue(), Options());
  CHECK(text.rfind("==mate-guard== ERROR: ", 0) == 0);
}

TEST(a_long_line_is_capped_saying_how_much_was_cut) {
  std::string test_name(mate::kMaxLineBytes + 100, 'x');
  std::string text =
      mate::FormatTextJson("{\"tool\":\"mate-guard\",\"kind\":\"double-free\",\"address\":\"0x10\",\"test\":\"" +
                               test_name + "\",\"allocation\":null}",
                           Options());
  CHECK(text.find("more bytes cut)") != std::string::npos);
  CHECK(text.size() < 3 * mate::kMaxLineBytes);  // the test's line and the suppression line, each capped
}

// An annotation is one workflow command whatever the event holds: a test
// name with a newline and a command of its own, a `%0A` meant to decode
// into one, a file name with `,` and `:` meant to add properties.
TEST(github_annotation_is_exactly_one_command) {
  mate::JsonValue e = Parse(
      "{\"tool\":\"mate-guard\",\"kind\":\"double-free\",\"address\":\"0x10\",\"allocation\":null,"
      "\"test\":\"t\\n::error file=x::forged %0A::warning::also forged\"}");
  mate::SourcePlace at{"src/a,line=1:b.cc", "12", ""};
  std::string cmd = mate::GithubAnnotation(e, Options(), at);
  size_t newlines = 0;
  for (char c : cmd) newlines += c == '\n';
  CHECK_EQ(newlines, 1u);
  CHECK(cmd.rfind("::error file=src/a%2Cline=1%3Ab.cc,line=12,title=mate-guard%3A double-free of 0x10", 0) == 0);
  CHECK(cmd.find("test: t\\n::error file=x::forged %250A::warning::also forged") != std::string::npos);
  // Text read back from the event is escaped the same way.
  mate::JsonValue with_text = Parse(
      "{\"tool\":\"mate-guard\",\"kind\":\"out-of-memory\",\"text\":\"==mate-guard== ERROR: x\\r\\n==mate-guard== "
      "y\\u001b[1m\\n\"}");
  CHECK_STR(mate::GithubAnnotation(with_text, Options(), mate::SourcePlace()),
            "::notice title=mate-guard%3A x\\r::ERROR: x\\r%0Ay\\x1b[1m\n");
  CHECK_STR(mate::GithubUnreadable("/r/a.json", "not JSON (50% read)\n"),
            "::error title=mate-guard%3A a report file could not be read::cannot read report file /r/a.json: not JSON "
            "(50%25 read)%0A; counted as a violation that could not be read\n");
}

TEST(ci_lines_from_a_huge_filed_text_are_capped_like_the_report) {
  std::string line(mate::kMaxLineBytes * 2, 'y');
  std::string text;
  for (int i = 0; i < 100; i++) text += "==mate-guard== " + line + "\\n";
  mate::JsonValue e = Parse("{\"tool\":\"mate-guard\",\"kind\":\"double-free\",\"text\":\"" + text + "\"}");
  mate::Lines lines = mate::PlainLines(e, Options());
  size_t total = 0;
  for (const std::string& l : lines) total += l.size();
  CHECK(total <= mate::kMaxTextBytes + 200);
  CHECK(lines.back().find("more lines cut") != std::string::npos);
  CHECK(lines[0].find("more bytes cut)") != std::string::npos);
}

// The fingerprint's hash: FIPS 180-4's examples (one block, two blocks, empty).
TEST(sha256_matches_the_standard_vectors) {
  CHECK_STR(mate::Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK_STR(mate::Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK_STR(mate::Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// As Node's path.resolve and pathToFileURL (node 20) write them: SARIF's URIs are compared byte for byte.
TEST(source_paths_resolve_and_encode_as_node_does) {
  CHECK_STR(mate::ResolvePath("/repo/sub", "../a/./b//c.js"), "/repo/a/b/c.js");
  CHECK_STR(mate::FileUri("/cwd", "/x y/a#b%c~[d].js"), "file:///x%20y/a%23b%25c%7E%5Bd%5D.js");
  CHECK_STR(mate::FileUri("/cwd", "rel/\xC3\xA9.json"), "file:///cwd/rel/%C3%A9.json");
  CHECK_STR(mate::FileUri("/cwd", "/repo/"), "file:///repo/");
  mate::SourcePaths paths{"/repo"};
  CHECK_STR(paths.Relative("/repo/src/a.cc", mate::RunPlace()), "src/a.cc");
  CHECK_STR(paths.Relative("/elsewhere/a.cc", mate::RunPlace()), "");
  // A CI artifact read in another checkout: under the root the run recorded first.
  CHECK_STR(paths.Relative("/ci/build/src/a.cc", mate::RunPlace{"/ci/build/test", "/ci/build"}), "src/a.cc");
  CHECK_STR(paths.Relative("t/x.test.js", mate::RunPlace{"/ci/build/test", "/ci/build"}), "test/t/x.test.js");
}

TEST(system_modules_are_never_a_site) {
  CHECK(mate::IsSystemModule("/lib/x86_64-linux-gnu/libc.so.6"));
  CHECK(mate::IsSystemModule("/usr/lib/libstdc++.so.6.0.33"));
  CHECK(mate::IsSystemModule("/lib64/ld-linux-x86-64.so.2"));
  CHECK(mate::IsSystemModule("/usr/bin/node"));
  CHECK(mate::IsSystemModule("/x/mate_guard.node"));
  CHECK(!mate::IsSystemModule("/repo/build/Release/buggy_addon.node"));
  CHECK(!mate::IsSystemModule("/usr/lib/libcrypto.so.3"));
  CHECK(!mate::IsSystemModule("/usr/lib/libcurl.so.4"));
}
