// What a streamed report does with the start each batch states
// (EventBatch.min_start_ns; collector_start_hints_test.cc for the hints
// themselves): one stated later than the batch's events is a corrupt trace,
// said as such, never a report from events out of order.
#include <gtest/gtest.h>

#include <string>

#include "analysis/stream_summary.h"
#include "analysis/summary.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/analysis_summary_dump.h"

namespace cutrace::analysis {
namespace {

// Each batch states its earliest start (EventBatch min_start_ns), and the
// stream releases events up to what later batches can hold. A batch whose
// events start before the start it states arrives after their time went
// out: an error naming the packet, not a report with events out of order.
// A stated start that is early only holds events longer: the same report.
TEST(StreamHintsTest, ABatchThatStartsBeforeItSaysIsReportedCorrupt) {
  StringInterner strings;
  const uint32_t name = strings.Intern("k");
  const uint64_t t0 = 1'700'000'000'000'000'000ull;
  // A device buffer delivered late: the second batch's kernels ran first.
  RecordBatch later, earlier;
  for (uint64_t i = 0; i < 4; ++i) {
    later.kernels.push_back({.start_ns = t0 + 10'000 + 1000 * i, .end_ns = t0 + 10'500 + 1000 * i,
                             .correlation_id = 10 + i, .name_id = name});
    earlier.kernels.push_back({.start_ns = t0 + 100 + 1000 * i, .end_ns = t0 + 600 + 1000 * i,
                               .correlation_id = 1 + i, .name_id = name});
  }
  TraceEncoder encoder;
  std::string bytes;
  encoder.EncodeHeader(testing::SampleHeader(), &bytes);
  encoder.EncodeBatch(later, strings, &bytes);
  encoder.EncodeBatch(earlier, strings, &bytes);
  encoder.EncodeStatistics(StatsInfo{}, &bytes);

  auto summarize = [](const std::string& b) {
    auto stream = StreamedTrace::FromBytes(b, "a.trace");
    EXPECT_TRUE(stream.ok());
    StreamedTrace* streams[] = {stream->get()};
    return SummarizeStreams(streams);
  };
  StatusOr<SummaryReport> honest = summarize(bytes);
  ASSERT_TRUE(honest.ok()) << honest.status().message();
  StatusOr<TraceData> loaded = LoadTraceFromBytes(bytes, "a.trace");
  ASSERT_TRUE(loaded.ok());
  const TraceData* one[] = {&loaded.value()};
  EXPECT_EQ(Dump(*honest), Dump(ComputeSummary(TraceSet(one))));

  // Stated earlier than it is: harmless.
  std::string early = bytes;
  ASSERT_EQ(testing::ReplaceMinStart(&early, t0 + 100, t0 + 1), 1u);
  StatusOr<SummaryReport> held = summarize(early);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_EQ(Dump(*held), Dump(*honest));

  // Stated later than its kernels: the first batch's went out before them.
  std::string late = bytes;
  ASSERT_EQ(testing::ReplaceMinStart(&late, t0 + 100, t0 + 20'000), 1u);
  StatusOr<SummaryReport> broken = summarize(late);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("a.trace: packet"), std::string::npos)
      << broken.status().message();
  EXPECT_NE(broken.status().message().find("min_start_ns; the trace is corrupt"), std::string::npos)
      << broken.status().message();
}

}  // namespace
}  // namespace cutrace::analysis
