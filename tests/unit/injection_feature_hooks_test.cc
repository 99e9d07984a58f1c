// The production modes' writer hooks one at a time
// (injection/production/feature_hooks.h), called directly as the writer
// thread would: which batches each takes, and what each request makes it
// write. The chain inside the controller: injection_controller_test.cc.
#include "injection/production/feature_hooks.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

#include "collector/trace_loader.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/temp_dir.h"

namespace cutrace::injection {
namespace {

class FeatureHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty()) << "no temporary directory";
    ctx_.pid = 4242;
    ctx_.path = dir_ + "/run.trace";
    ctx_.header.producer = "test";
    ctx_.stats = [](const TraceWriter&) { return StatsInfo{}; };
    ctx_.now = [this] { return now_; };
  }

  // The trace's first file, as Session::OpenTrace makes it.
  std::unique_ptr<TraceWriter> OpenMain(const HeaderInfo& h) {
    auto file = TraceWriter::Create(ctx_.path).value();
    EXPECT_TRUE(file->WriteHeader(h).ok());
    return file;
  }
  RecordBatch Kernels(int n, const char* name) {
    return cutrace::testing::KernelRun(interner_, name, n, static_cast<uint64_t>(now_));
  }

  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
  HookContext ctx_;
  StringInterner interner_;
  int64_t now_ = 1'000'000'000;
};

TEST_F(FeatureHooksTest, SidePathsGoBesideTheTraceBeforeItsExtension) {
  HookContext c;
  c.path = "/d/run.trace";
  EXPECT_EQ(c.SidePath("flight", 3), "/d/run.flight-3.trace");
  c.path = "/d.x/run";
  EXPECT_EQ(c.SidePath("capture", 1), "/d.x/run.capture-1");
  c.path = "/d/.hidden";
  EXPECT_EQ(c.SidePath("flight", 1), "/d/.hidden.flight-1");
}

TEST_F(FeatureHooksTest, TheFlightRecorderDumpsOnRequestAndAtAnAbnormalEndOnly) {
  FlightRecorderOptions o;
  o.max_bytes = 1u << 20;
  o.max_age_ns = 60'000'000'000;
  FlightRecorderHook hook(&ctx_, o);
  auto writer = OpenMain(ctx_.header);
  RecordBatch b = Kernels(4, "ring()");
  EXPECT_FALSE(hook.OnBatch(b, interner_, now_));  // copied, still written
  EXPECT_GT(hook.ring_bytes(), 0u);
  hook.OnFinal(/*abnormal=*/false, "flight-recorder:exit-status-0");
  hook.AfterItem(&writer, interner_, now_);
  EXPECT_TRUE(ctx_.side_files().empty());
  hook.RequestDump("flight-recorder:control");
  hook.AfterItem(&writer, interner_, now_);
  ASSERT_EQ(ctx_.side_files().size(), 1u);
  EXPECT_EQ(ctx_.side_files()[0], dir_ + "/run.flight-1.trace");
  auto dump = LoadTrace(ctx_.side_files()[0]);
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_EQ(dump->header.chunk_reason(), "flight-recorder:control");
  EXPECT_EQ(dump->records.kernels.size(), 4u);
  hook.AfterItem(&writer, interner_, now_);  // a request is acted on once
  EXPECT_EQ(ctx_.side_files().size(), 1u);
  hook.OnFinal(/*abnormal=*/true, "flight-recorder:SIGTERM");
  hook.AfterItem(&writer, interner_, now_);
  ASSERT_EQ(ctx_.side_files().size(), 2u);
  EXPECT_EQ(LoadTrace(ctx_.side_files()[1])->header.chunk_reason(), "flight-recorder:SIGTERM");
}

TEST_F(FeatureHooksTest, ACaptureTakesTheBatchesBetweenItsStartAndItsEnd) {
  CaptureHook hook(&ctx_);
  auto writer = OpenMain(ctx_.header);
  RecordBatch before = Kernels(2, "before()");
  EXPECT_FALSE(hook.OnBatch(before, interner_, now_));
  hook.OnFinal(false, "");  // no capture open: nothing to end
  hook.AfterItem(&writer, interner_, now_);
  EXPECT_TRUE(ctx_.side_files().empty());
  hook.RequestStart();
  hook.AfterItem(&writer, interner_, now_);
  RecordBatch during = Kernels(3, "during()");
  EXPECT_FALSE(hook.OnBatch(during, interner_, now_));  // copied, still written
  hook.RequestEnd();
  hook.AfterItem(&writer, interner_, now_);
  RecordBatch after = Kernels(5, "after()");
  EXPECT_FALSE(hook.OnBatch(after, interner_, now_));
  ASSERT_EQ(ctx_.side_files().size(), 1u);
  auto capture = LoadTrace(ctx_.side_files()[0]);
  ASSERT_TRUE(capture.ok()) << capture.status().message();
  EXPECT_EQ(capture->header.chunk_reason(), "capture");
  ASSERT_EQ(capture->records.kernels.size(), 3u);
  EXPECT_EQ(capture->strings.Display(capture->records.kernels[0].name_id), "during()");
}

TEST_F(FeatureHooksTest, SummaryModeTakesEveryBatchAndWritesASummaryWhenDue) {
  SummaryHook hook(&ctx_, /*interval_ns=*/10'000'000'000, /*openmetrics_file=*/"");
  auto writer = OpenMain(ctx_.header);
  hook.Begin(now_);
  RecordBatch b = Kernels(6, "sum()");
  EXPECT_TRUE(hook.OnBatch(b, interner_, now_));  // aggregated, not written
  const uint64_t before = writer->bytes_encoded();
  hook.AfterItem(&writer, interner_, now_ + 9'999'999'999);  // not due yet
  EXPECT_EQ(writer->bytes_encoded(), before);
  hook.AfterItem(&writer, interner_, now_ + 10'000'000'000);  // due
  const uint64_t after_first = writer->bytes_encoded();
  EXPECT_GT(after_first, before);
  hook.AfterItem(&writer, interner_, now_ + 10'000'000'001);  // the next interval runs from then
  EXPECT_EQ(writer->bytes_encoded(), after_first);
  hook.RequestNow();
  hook.AfterItem(&writer, interner_, now_ + 10'000'000'002);
  EXPECT_GT(writer->bytes_encoded(), after_first);
}

TEST_F(FeatureHooksTest, BetweenContinuousWindowsTheChunkIsFinishedAndBatchesAreTaken) {
  RotationOptions o;
  RotationHook hook(&ctx_, /*continuous=*/true, o);
  HeaderInfo h = ctx_.header;
  hook.Decorate(&h, ctx_.path, now_);
  auto writer = OpenMain(h);
  TraceWriter* first = writer.get();
  RecordBatch b = Kernels(1, "in()");
  EXPECT_FALSE(hook.OnBatch(b, interner_, now_));
  EXPECT_FALSE(hook.file_finished());
  hook.RequestWindowOpen("window");  // a window already open: nothing to open
  hook.AfterItem(&writer, interner_, now_);
  EXPECT_EQ(writer.get(), first);
  hook.RequestWindowClose();
  hook.AfterItem(&writer, interner_, now_);
  EXPECT_TRUE(hook.file_finished());
  EXPECT_TRUE(hook.OnBatch(b, interner_, now_));  // late: counted, not written
  hook.RequestWindowOpen("capture");
  hook.AfterItem(&writer, interner_, now_ + 1);
  EXPECT_FALSE(hook.file_finished());
  EXPECT_NE(writer.get(), first);
  EXPECT_FALSE(hook.OnBatch(b, interner_, now_));
}

TEST_F(FeatureHooksTest, RotationBySizeStartsTheNextChunkButNeverAtTheEnd) {
  RotationOptions o;
  o.max_file_bytes = 1;  // every chunk is due at once
  RotationHook hook(&ctx_, /*continuous=*/false, o);
  HeaderInfo h = ctx_.header;
  hook.Decorate(&h, ctx_.path, now_);
  auto writer = OpenMain(h);
  ASSERT_TRUE(writer->Flush().ok());
  TraceWriter* first = writer.get();
  hook.OnFinal(false, "");
  hook.AfterItem(&writer, interner_, now_);  // the session is ending: no new chunk
  EXPECT_EQ(writer.get(), first);
  hook.AfterItem(&writer, interner_, now_);
  EXPECT_NE(writer.get(), first);
  EXPECT_FALSE(hook.file_finished());
}

}  // namespace
}  // namespace cutrace::injection
