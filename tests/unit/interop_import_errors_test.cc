// Bad input to the Chrome/Kineto importer: each class gives one clear line
// (no newline, names the problem) and never a crash; and the exact
// microseconds-to-nanoseconds conversion the importer relies on.
#include <string>

#include <gtest/gtest.h>

#include "interop/kineto/chrome_import.h"
#include "interop/kineto/chrome_json_reader.h"

namespace cutrace::interop {
namespace {

// Imports `json`, expects failure, returns the message.
std::string ErrorOf(const std::string& json) {
  auto imported = ImportChromeJson(json);
  EXPECT_FALSE(imported.ok()) << json;
  if (imported.ok()) return "";
  const std::string& m = imported.status().message();
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_FALSE(m.empty());
  return m;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(ChromeImportErrors, EmptyAndWhitespace) {
  EXPECT_EQ(ErrorOf(""), "empty file");
  EXPECT_EQ(ErrorOf(" \n\t "), "empty file");
}

TEST(ChromeImportErrors, InvalidJson) {
  EXPECT_TRUE(Contains(ErrorOf("{\"traceEvents\": [ {\"ph\": \"X\""), "invalid JSON"));
  EXPECT_TRUE(Contains(ErrorOf("[1, 2,"), "invalid JSON"));
  EXPECT_TRUE(Contains(ErrorOf("not json at all"), "invalid JSON"));
  EXPECT_TRUE(Contains(ErrorOf(std::string("\x0a\x05\xff\x00\x13garbage", 12)), "invalid JSON"));
  EXPECT_TRUE(Contains(ErrorOf("{\"traceEvents\": []} trailing"), "invalid JSON"));
  EXPECT_TRUE(Contains(ErrorOf("[1e99999]"), "invalid JSON"));  // overflows a double
}

TEST(ChromeImportErrors, NotAChromeTrace) {
  EXPECT_TRUE(Contains(ErrorOf("{\"foo\": 1}"), "no \"traceEvents\""));
  EXPECT_TRUE(Contains(ErrorOf("{\"traceEvents\": {}}"), "not an array"));
  EXPECT_TRUE(Contains(ErrorOf("{\"traceEvents\": 5}"), "not an array"));
  EXPECT_TRUE(Contains(ErrorOf("42"), "top level"));
  EXPECT_TRUE(Contains(ErrorOf("\"text\""), "top level"));
}

TEST(ChromeImportErrors, NegativeDuration) {
  std::string m = ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,
                               "ts":10,"dur":-1.5}])");
  EXPECT_TRUE(Contains(m, "negative dur -1.5 us")) << m;
  EXPECT_TRUE(Contains(m, "event #0")) << m;
  EXPECT_TRUE(Contains(m, "\"k\"")) << m;
  // Even on a category cutrace does not import: it means the file is corrupt.
  m = ErrorOf(R"({"traceEvents":[{"ph":"M","name":"x"},
                 {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":-0.001}]})");
  EXPECT_TRUE(Contains(m, "event #1")) << m;
  EXPECT_TRUE(Contains(m, "negative dur -0.001 us")) << m;
}

TEST(ChromeImportErrors, NonNumericAndAbsurdTimes) {
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":"abc","dur":1}])"),
                       "\"ts\" is not a number: \"abc\""));
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":null}])"),
                       "\"dur\" is not a number: null"));
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":1e300,"dur":1}])"),
                       "\"ts\" out of range"));
  EXPECT_TRUE(Contains(
      ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":99999999999999999999}])"),
      "\"dur\" out of range"));
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":-5,"dur":1}])"),
                       "negative ts"));
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","dur":1}])"), "no \"ts\""));
  EXPECT_TRUE(Contains(ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":1}])"), "no \"dur\""));
  EXPECT_TRUE(Contains(
      ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"device":1e9}}])"),
      "absurd device id"));
  EXPECT_TRUE(Contains(
      ErrorOf(R"([{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"stream":-7}}])"),
      "absurd stream id"));
}

TEST(ChromeImportErrors, NamesInMessagesAreShortAndPrintable) {
  // A JSON escape (\n, \t) and a raw control character (invalid JSON).
  std::string name(5000, 'x');
  std::string m = ErrorOf("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ab\\ncd\\t" + name +
                          "\",\"ts\":1,\"dur\":-1}]");
  EXPECT_LT(m.size(), 200u);
  for (char c : m) EXPECT_GE(static_cast<unsigned char>(c), 0x20);
  m = ErrorOf("[{\"name\":\"a\tb" + name + "\"}]");
  EXPECT_TRUE(Contains(m, "invalid JSON")) << m;
  EXPECT_LT(m.size(), 200u);
  for (char c : m) EXPECT_GE(static_cast<unsigned char>(c), 0x20);
}

TEST(ChromeImportErrors, UnknownThingsAreIgnoredNotErrors) {
  auto imported = ImportChromeJson(R"({"traceEvents":[
      {"ph":"X","cat":"python_function","name":"f","ts":"whenever"},
      {"ph":"B","cat":"kernel","name":"k","ts":-1},
      {"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,
       "args":{"grid":[1,[2,3],{"a":1},4,5],"block":"wide","device":"zero","extra":{"x":[1]}}},
      {"cat":"kernel"}],
    "deviceProperties": "none", "distributedInfo": [1], "other": {"traceEvents": 3}})");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->counts.kernels, 1u);
  EXPECT_EQ(imported->counts.skipped_phase, 2u);
  EXPECT_EQ(imported->counts.skipped_category, 1u);
  const KernelRecord& k = imported->records.kernels[0];
  EXPECT_EQ(k.grid[0], 1u);
  EXPECT_EQ(k.grid[1], 0u);
  EXPECT_EQ(k.grid[2], 0u);
}

TEST(ChromeImportErrors, DeepNestingDoesNotRecurse) {
  std::string deep = "{\"traceEvents\":[{\"args\":" + std::string(100000, '[') +
                     std::string(100000, ']') + "}]}";
  auto imported = ImportChromeJson(deep);
  EXPECT_TRUE(imported.ok()) << imported.status().message();
}

TEST(MicrosTextToNanos, ExactDecimalRounding) {
  auto ns = [](std::string_view text) {
    int64_t v = -999;
    EXPECT_EQ(MicrosTextToNanos(text, &v), ChromeTime::State::kOk) << text;
    return v;
  };
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("1"), 1000);
  EXPECT_EQ(ns("1.5"), 1500);
  EXPECT_EQ(ns("1020.001"), 1020001);
  EXPECT_EQ(ns("100.0005"), 100001);  // half away from zero
  EXPECT_EQ(ns("99.9995"), 100000);
  EXPECT_EQ(ns("0.0004"), 0);
  EXPECT_EQ(ns("0.0005"), 1);
  EXPECT_EQ(ns("-1.5"), -1500);
  EXPECT_EQ(ns("-0.0005"), -1);
  EXPECT_EQ(ns("1.5e3"), 1500000);
  EXPECT_EQ(ns("15E-1"), 1500);
  EXPECT_EQ(ns("1e-3"), 1);
  EXPECT_EQ(ns("0.000000000000000000001"), 0);
  EXPECT_EQ(ns("00012.000"), 12000);
  // A real absolute Kineto timestamp, beyond a double's exact integers in ns.
  EXPECT_EQ(ns("1700000000123456.789"), 1700000000123456789);
  EXPECT_EQ(ns("1700000000123456.788"), 1700000000123456788);
}

TEST(MicrosTextToNanos, RejectsJunkAndAbsurdValues) {
  int64_t v = 0;
  EXPECT_EQ(MicrosTextToNanos("", &v), ChromeTime::State::kNotNumber);
  EXPECT_EQ(MicrosTextToNanos("-", &v), ChromeTime::State::kNotNumber);
  EXPECT_EQ(MicrosTextToNanos("1.2.3", &v), ChromeTime::State::kNotNumber);
  EXPECT_EQ(MicrosTextToNanos("1e", &v), ChromeTime::State::kNotNumber);
  EXPECT_EQ(MicrosTextToNanos("abc", &v), ChromeTime::State::kNotNumber);
  EXPECT_EQ(MicrosTextToNanos("1e300", &v), ChromeTime::State::kOutOfRange);
  EXPECT_EQ(MicrosTextToNanos("4611686018427387.904", &v), ChromeTime::State::kOutOfRange);
  EXPECT_EQ(MicrosTextToNanos("4611686018427387.903", &v), ChromeTime::State::kOk);
  EXPECT_EQ(MicrosTextToNanos("1e99999999999", &v), ChromeTime::State::kOutOfRange);
}

}  // namespace
}  // namespace cutrace::interop
