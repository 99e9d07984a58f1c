// CUTRACE_* parsing: defaults, good values, and bad values that produce one
// problem line each and fall back to the default.
#include <gtest/gtest.h>

#include <map>

#include "injection/config.h"

namespace cutrace::injection {
namespace {

EnvGetter EnvOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(InjectionConfigTest, Defaults) {
  Config c = ParseConfig(EnvOf({}));
  EXPECT_TRUE(c.problems.empty());
  EXPECT_FALSE(c.disabled);
  EXPECT_EQ(c.output, ".");
  EXPECT_EQ(c.file_mode, 0600u);
  EXPECT_EQ(c.buffer_bytes, 2u << 20);
  EXPECT_EQ(c.buffer_count, 32u);
  EXPECT_EQ(c.queue_batches, 256u);
  EXPECT_EQ(c.flush_timeout_ms, 5000u);
  EXPECT_EQ(c.flush_period_ms, 0u);
  EXPECT_FALSE(c.per_thread_buffers.has_value());
  EXPECT_TRUE(c.timestamp_callback);
  EXPECT_FALSE(c.latency_timestamps);
  EXPECT_EQ(c.log_level, LogLevel::kWarn);
  EXPECT_TRUE(c.cupti_path.empty());
  EXPECT_TRUE(c.run_manifest.empty());
  // Unset: continuous mode's own defaults (ApplyModeDefaults, DecideDetach).
  EXPECT_FALSE(c.detach_between_windows.has_value());
  EXPECT_FALSE(c.kinds_given);
  // Sync records only when asked for (config.h says why).
  EXPECT_EQ(c.kinds.Names(), (std::vector<std::string>{"kernel", "memcpy", "memset", "nvtx",
                                                        "runtime", "driver", "overhead"}));
}

TEST(InjectionConfigTest, GoodValues) {
  Config c = ParseConfig(EnvOf({{"CUTRACE_OUTPUT", "/tmp/t-%p.trace"},
                                {"CUTRACE_FILE_MODE", "0640"},
                                {"CUTRACE_KINDS", "kernel, nvtx"},
                                {"CUTRACE_BUFFER_SIZE", "8M"},
                                {"CUTRACE_BUFFER_COUNT", "4"},
                                {"CUTRACE_QUEUE_BATCHES", "1024"},
                                {"CUTRACE_FLUSH_TIMEOUT_MS", "250"},
                                {"CUTRACE_FLUSH_PERIOD_MS", "100"},
                                {"CUTRACE_PER_THREAD_BUFFERS", "0"},
                                {"CUTRACE_TIMESTAMP_CALLBACK", "0"},
                                {"CUTRACE_LATENCY_TIMESTAMPS", "1"},
                                {"CUTRACE_DETACH", "1"},
                                {"CUTRACE_LOG", "debug"},
                                {"CUTRACE_CUPTI_PATH", "/opt/libcupti.so.13"},
                                {"CUTRACE_RUN_MANIFEST", "/tmp/m"},
                                {"CUTRACE_DISABLE", "0"}}));
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
  EXPECT_EQ(c.output, "/tmp/t-%p.trace");
  EXPECT_EQ(c.file_mode, 0640u);
  EXPECT_EQ(c.kinds.Names(), (std::vector<std::string>{"kernel", "nvtx"}));
  EXPECT_EQ(c.buffer_bytes, 8u << 20);
  EXPECT_EQ(c.buffer_count, 4u);
  EXPECT_EQ(c.queue_batches, 1024u);
  EXPECT_EQ(c.flush_timeout_ms, 250u);
  EXPECT_EQ(c.flush_period_ms, 100u);
  ASSERT_TRUE(c.per_thread_buffers.has_value());
  EXPECT_FALSE(*c.per_thread_buffers);
  EXPECT_FALSE(c.timestamp_callback);
  EXPECT_TRUE(c.latency_timestamps);
  EXPECT_EQ(c.detach_between_windows, std::optional<bool>(true));
  EXPECT_TRUE(c.kinds_given);
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.cupti_path, "/opt/libcupti.so.13");
  EXPECT_EQ(c.run_manifest, "/tmp/m");
  EXPECT_FALSE(c.disabled);
}

TEST(InjectionConfigTest, EachBadValueIsOneProblemAndTheDefault) {
  struct Case {
    const char* name;
    const char* value;
    const char* expect_in_message;
  };
  const Case cases[] = {
      {"CUTRACE_FILE_MODE", "0999", "octal"},
      {"CUTRACE_FILE_MODE", "4755", "octal"},
      {"CUTRACE_KINDS", "kernel,bogus", "unknown kind \"bogus\""},
      {"CUTRACE_KINDS", ",", "empty list"},
      {"CUTRACE_BUFFER_SIZE", "12M", "1M..8M"},
      {"CUTRACE_BUFFER_SIZE", "512K", "1M..8M"},
      {"CUTRACE_BUFFER_SIZE", "lots", "1M..8M"},
      {"CUTRACE_BUFFER_COUNT", "1", "2..256"},
      {"CUTRACE_BUFFER_COUNT", "-3", "2..256"},
      {"CUTRACE_QUEUE_BATCHES", "many", "4..65536"},
      {"CUTRACE_FLUSH_TIMEOUT_MS", "1e3", "0..600000"},
      {"CUTRACE_PER_THREAD_BUFFERS", "maybe", "0 or 1"},
      {"CUTRACE_TIMESTAMP_CALLBACK", "never", "0 or 1"},
      {"CUTRACE_LATENCY_TIMESTAMPS", "2", "0 or 1"},
      {"CUTRACE_DETACH", "sometimes", "0 or 1"},
      {"CUTRACE_DETACH", "", "0 or 1"},
      {"CUTRACE_LOG", "loud", "quiet, error, warn, info or debug"},
      {"CUTRACE_DISABLE", "perhaps", "0 or 1"},
      {"CUTRACE_OUTPUT", "  ", "empty"},
  };
  const Config defaults = ParseConfig(EnvOf({}));
  for (const Case& c : cases) {
    Config got = ParseConfig(EnvOf({{c.name, c.value}}));
    ASSERT_EQ(got.problems.size(), 1u) << c.name << "=" << c.value;
    EXPECT_NE(got.problems[0].find(c.name), std::string::npos) << got.problems[0];
    EXPECT_NE(got.problems[0].find(c.expect_in_message), std::string::npos) << got.problems[0];
    EXPECT_EQ(got.file_mode, defaults.file_mode);
    EXPECT_EQ(got.buffer_bytes, defaults.buffer_bytes);
    EXPECT_EQ(got.buffer_count, defaults.buffer_count);
    EXPECT_EQ(got.queue_batches, defaults.queue_batches);
    EXPECT_EQ(got.kinds.Names(), defaults.kinds.Names());
    EXPECT_EQ(got.log_level, defaults.log_level);
    EXPECT_EQ(got.output, defaults.output);
    EXPECT_EQ(got.timestamp_callback, defaults.timestamp_callback);
    EXPECT_EQ(got.latency_timestamps, defaults.latency_timestamps);
    EXPECT_FALSE(got.detach_between_windows.has_value());  // the mode decides
    EXPECT_FALSE(got.kinds_given);  // a bad list: the mode's default kinds
    EXPECT_FALSE(got.disabled);
  }
}

TEST(InjectionConfigTest, ByteSizes) {
  EXPECT_EQ(ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(ParseByteSize("4096K"), 4u << 20);
  EXPECT_EQ(ParseByteSize("4 MiB"), 4u << 20);
  EXPECT_EQ(ParseByteSize("2mb"), 2u << 20);
  EXPECT_EQ(ParseByteSize("1G"), 1ull << 30);
  EXPECT_FALSE(ParseByteSize("M"));
  EXPECT_FALSE(ParseByteSize("4X"));
  EXPECT_FALSE(ParseByteSize("-4M"));
  EXPECT_FALSE(ParseByteSize("99999999999999999999"));
}

TEST(InjectionConfigTest, OddBufferSizesAreAlignedDown) {
  Config c = ParseConfig(EnvOf({{"CUTRACE_BUFFER_SIZE", "1048581"}}));
  EXPECT_TRUE(c.problems.empty());
  EXPECT_EQ(c.buffer_bytes % 8, 0u);
  EXPECT_EQ(c.buffer_bytes, 1048576u);
}

TEST(InjectionConfigTest, OctalModes) {
  EXPECT_EQ(ParseOctalMode("600"), 0600u);
  EXPECT_EQ(ParseOctalMode("0644"), 0644u);
  EXPECT_FALSE(ParseOctalMode("rw-r--r--"));
  EXPECT_FALSE(ParseOctalMode("08"));
  EXPECT_FALSE(ParseOctalMode(""));
}

TEST(InjectionConfigTest, DisableSwitch) {
  EXPECT_TRUE(ParseConfig(EnvOf({{"CUTRACE_DISABLE", "1"}})).disabled);
  EXPECT_TRUE(ParseConfig(EnvOf({{"CUTRACE_DISABLE", "true"}})).disabled);
  EXPECT_FALSE(ParseConfig(EnvOf({{"CUTRACE_DISABLE", "0"}})).disabled);
}

}  // namespace
}  // namespace cutrace::injection
