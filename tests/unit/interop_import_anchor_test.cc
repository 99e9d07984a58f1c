// What the Kineto importer keeps besides the events (issue 21, point 4): the
// realtime anchor from "baseTimeNanoseconds" or from Unix-epoch "ts" values,
// the host pid and its process name, distributedInfo.rank, the CUDA/CUPTI
// versions; and string thread ids interned (distinct strings stay distinct,
// equal strings are one thread). Expected values are worked out by hand from
// the JSON below.
#include <string>

#include <gtest/gtest.h>

#include "collector/trace_loader.h"
#include "interop/kineto/chrome_import.h"

namespace cutrace::interop {
namespace {

ImportedTrace Import(const std::string& json) {
  auto imported = ImportChromeJson(json);
  EXPECT_TRUE(imported.ok()) << imported.status().message();
  return imported.ok() ? std::move(imported).value() : ImportedTrace();
}

// 2023-11-14T22:13:20Z in ns.
constexpr int64_t kBase = 1'700'000'000'000'000'000;

TEST(KinetoImportAnchor, BaseTimeNanosecondsAnchorsTraceTimeZero) {
  ImportedTrace t = Import(R"({"baseTimeNanoseconds": 1700000000000000000,
      "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
      "cuda_runtime_version": 12040, "cuda_driver_version": 12080, "cupti_version": 22,
      "traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 777, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
         "args": {"device": 0, "stream": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 777, "tid": 778,
         "ts": 9.5, "dur": 0.25}]})");
  // Times as the file shows them: ts 10 us -> 10000 ns, not moved.
  ASSERT_EQ(t.records.kernels.size(), 1u);
  EXPECT_EQ(t.records.kernels[0].start_ns, 10000u);
  EXPECT_EQ(t.anchor.trace_ns, 0);
  EXPECT_EQ(t.anchor.realtime_ns, kBase);
  EXPECT_EQ(t.anchor_source, "baseTimeNanoseconds");
  EXPECT_EQ(t.pid, 777);  // the runtime call's pid, not the GPU row's 0
  EXPECT_EQ(t.process_name, "python3");
  EXPECT_EQ(t.rank, "3");
  EXPECT_EQ(t.cuda_runtime_version, 12040);
  EXPECT_EQ(t.cuda_driver_version, 12080);
  EXPECT_EQ(t.cupti_version, 22u);

  // The written trace carries them in its header.
  std::string bytes;
  EncodeImportedTrace(t, "x.json", &bytes);
  auto loaded = LoadTraceFromBytes(bytes, "x.trace");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const proto::Header& h = loaded->header;
  EXPECT_EQ(h.start_anchor().trace_ns(), 0);
  EXPECT_EQ(h.start_anchor().realtime_ns(), kBase);
  EXPECT_EQ(h.clock_anchor_source(), "baseTimeNanoseconds");
  EXPECT_EQ(h.pid(), 777);
  ASSERT_EQ(h.command_line_size(), 1);
  EXPECT_EQ(h.command_line(0), "python3");
  EXPECT_EQ(h.rank(), "3");
  EXPECT_EQ(h.cuda_runtime_version(), 12040);
  EXPECT_EQ(h.cuda_driver_version(), 12080);
  EXPECT_EQ(h.cupti_api_version(), 22u);
  EXPECT_EQ(h.clock(), proto::CLOCK_DOMAIN_IMPORTED);
}

TEST(KinetoImportAnchor, UnixEpochMicrosecondsAreTakenAsRealtime) {
  // Older PyTorch: no baseTimeNanoseconds, absolute Unix microseconds.
  ImportedTrace t = Import(R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
       "ts": 1700000000000123.456, "dur": 2},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
       "ts": 1700000000000100, "dur": 2}]})");
  ASSERT_EQ(t.records.kernels.size(), 2u);
  const int64_t first = kBase + 100'000;  // the earlier kernel, in ns
  EXPECT_EQ(t.records.kernels[0].start_ns, static_cast<uint64_t>(first));
  EXPECT_EQ(t.anchor.trace_ns, first);
  EXPECT_EQ(t.anchor.realtime_ns, first);
  EXPECT_EQ(t.anchor_source, "unix-epoch ts");
}

TEST(KinetoImportAnchor, RelativeTimesWithoutBaseHaveNoAnchor) {
  ImportedTrace t = Import(R"([{"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 1}])");
  EXPECT_EQ(t.anchor.realtime_ns, 0);
  EXPECT_EQ(t.anchor_source, "");
  // A base that is not a plausible Unix time (before 2000) is no anchor either.
  t = Import(R"({"baseTimeNanoseconds": 12345, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 1}]})");
  EXPECT_EQ(t.anchor.realtime_ns, 0);
  // A base on top of times that are already Unix times would land past 2100:
  // the times are taken as realtime instead.
  t = Import(R"({"baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 1700000000000000, "dur": 1}]})");
  EXPECT_EQ(t.anchor_source, "unix-epoch ts");
  EXPECT_EQ(t.anchor.realtime_ns, kBase);
}

TEST(KinetoImportAnchor, StringThreadIdsAreInternedNotHashed) {
  ImportedTrace t = Import(R"([
      {"ph": "X", "cat": "cuda_runtime", "name": "a", "pid": 1, "tid": "worker", "ts": 1, "dur": 1},
      {"ph": "X", "cat": "cuda_runtime", "name": "b", "pid": 1, "tid": "loader", "ts": 2, "dur": 1},
      {"ph": "X", "cat": "cuda_runtime", "name": "c", "pid": 1, "tid": "worker", "ts": 3, "dur": 1},
      {"ph": "X", "cat": "cuda_runtime", "name": "d", "pid": 1, "tid": 5, "ts": 4, "dur": 1}])");
  const auto& api = t.records.api_calls;
  ASSERT_EQ(api.size(), 4u);
  EXPECT_EQ(api[0].thread_id, api[2].thread_id);  // "worker" twice: one thread
  EXPECT_NE(api[0].thread_id, api[1].thread_id);  // "loader" another
  EXPECT_EQ(api[3].thread_id, 5u);                // numeric ids kept as they are
  // Interned in order of first appearance: consecutive ids above any real tid.
  EXPECT_EQ(api[1].thread_id, api[0].thread_id + 1);
  EXPECT_GT(api[0].thread_id, uint64_t{INT32_MAX});
}

}  // namespace
}  // namespace cutrace::interop
