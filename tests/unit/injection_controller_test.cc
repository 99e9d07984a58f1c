// The production controller on its own, without a GPU: continuous windows,
// captures, control and trigger files, rotation, the OpenMetrics file and
// the trigger signal, driven tick by tick (injection/production/production_controller.cc). The
// modes' parsing and a Session in each mode: injection_modes_test.cc.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "collector/rotation.h"
#include "collector/trace_loader.h"
#include "injection/production/production_controller.h"
#include "injection/modes.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

// The controller on its own: a real AsyncWriter and chunk files, CUPTI
// replaced by callbacks, time advanced by hand.
class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()) << "no temporary directory"; }
  void TearDown() override {
    controller_.reset();
    writer_.reset();
  }
  void Make(ProductionConfig config) {
    ProductionController::Callbacks cb;
    cb.set_activity = [this](bool on) { toggles_.push_back(on); };
    cb.flush_activity = [this] { ++flushes_; };
    cb.window_closed = [this] { closed_after_flushes_.push_back(flushes_); };
    cb.now = [this] { return now_.load(); };
    // The wall clock's boundaries: by default the start lies on one of every
    // period's, so windows come whole periods after it.
    cb.wall_offset = [this] { return wall_offset_; };
    MemoryBudget budget;
    budget.ring_bytes = 1u << 20;
    controller_ = std::make_unique<ProductionController>(config, budget, cb);
    path_ = dir_ + "/" + name_;
    HeaderInfo h;
    h.producer = "test";
    controller_->DecorateHeader(&h, path_);
    auto created = TraceWriter::Create(path_);
    ASSERT_TRUE(created.ok()) << created.status().message();
    auto file = std::move(created).value();
    ASSERT_TRUE(file->WriteHeader(h).ok());
    writer_ = std::make_unique<AsyncWriter>(std::move(file), &interner_);
    controller_->Attach(writer_.get(), &interner_);
    controller_->Schedule(now_);
    ASSERT_TRUE(writer_->Start().ok());
  }
  void Push(int n, const char* name) {
    ASSERT_TRUE(writer_->TryPush(
        cutrace::testing::KernelRun(interner_, name, n, static_cast<uint64_t>(now_))));
  }
  void Sync() { ASSERT_TRUE(writer_->Flush(std::chrono::seconds(10))); }
  // A controller for `config` (no signals of its own) whose thread started
  // and stopped, with what it logged at the debug level.
  std::string StartAndStopAtDebug(ProductionConfig config) {
    config.trigger_signal = 0;
    config.capture_signal = 0;
    Make(config);
    const LogLevel level = GetLogLevel();
    SetLogLevel(LogLevel::kDebug);
    ::testing::internal::CaptureStderr();
    controller_->Start();
    controller_->Stop("exit");
    std::string said = ::testing::internal::GetCapturedStderr();
    SetLogLevel(level);
    writer_->Stop();
    return said;
  }

  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
  std::string path_;
  std::string name_ = "run.trace";  // Make()'s file in dir_
  StringInterner interner_;
  std::unique_ptr<AsyncWriter> writer_;
  std::unique_ptr<ProductionController> controller_;
  std::vector<bool> toggles_;
  int flushes_ = 0;
  std::vector<int> closed_after_flushes_;  // flushes_ at each window_closed
  std::atomic<int64_t> now_{1'000'000'000};  // read on the writer thread too
  int64_t wall_offset_ = -1'000'000'000;      // wall clock - trace clock: now_ is wall time 0
};

TEST_F(ControllerTest, ContinuousWindowsAreSelfContainedChunks) {
  ProductionConfig c;
  c.mode = Mode::kContinuous;
  c.window_ns = 1'000'000'000;
  c.period_ns = 5'000'000'000;
  Make(c);
  const int64_t t0 = now_;
  for (int w = 0; w < 3; ++w) {
    // Inside window w: events, then the window ends.
    Push(10 + w, "_Z6windowv");
    now_ = t0 + w * 5'000'000'000ll + 1'000'000'000;
    controller_->Tick(now_);
    Sync();
    EXPECT_TRUE(controller_->FileFinished());
    // Between windows nothing is written; the next one opens on time.
    now_ = t0 + (w + 1) * 5'000'000'000ll;
    controller_->Tick(now_);
    Sync();
  }
  EXPECT_EQ(flushes_, 3);
  // Each window's close (where the session may detach CUPTI) follows its flush.
  EXPECT_EQ(closed_after_flushes_, (std::vector<int>{1, 2, 3}));
  ASSERT_EQ(toggles_.size(), 6u);
  for (size_t i = 0; i < toggles_.size(); ++i) EXPECT_EQ(toggles_[i], i % 2 == 1);
  for (uint32_t w = 0; w < 3; ++w) {
    auto t = LoadTrace(ChunkPath(path_, w));
    ASSERT_TRUE(t.ok()) << w;
    EXPECT_EQ(t->records.kernels.size(), 10u + w);
    EXPECT_EQ(t->strings.Display(t->records.kernels[0].name_id), "window()");
    EXPECT_TRUE(t->clean_shutdown());
    EXPECT_EQ(t->end->reason(), "window");
    EXPECT_EQ(t->header.mode(), "continuous");
    EXPECT_EQ(t->header.chunk_index(), w);
    if (w > 0) {
      EXPECT_EQ(t->header.chunk_reason(), "window");
    }
    ASSERT_TRUE(t->statistics.has_value());
    EXPECT_EQ(t->statistics->windows, w + 1u);
  }
  controller_->Stop("exit");
  writer_->Stop();
}

TEST_F(ControllerTest, TheFirstWindowIsLoggedLikeTheOthers) {
  // The session turns the kinds on as it starts; the first window's debug
  // line comes as Start() schedules it, so a reader of the edges finds every window.
  ProductionConfig c;
  c.mode = Mode::kContinuous;
  c.window_ns = 1'000'000'000;
  c.period_ns = 3600'000'000'000ull;
  const std::string said = StartAndStopAtDebug(c);
  EXPECT_NE(said.find("window opens at "), std::string::npos) << said;
  EXPECT_NE(said.find("(monotonic): activity on with the session"), std::string::npos) << said;
  EXPECT_TRUE(toggles_.empty());  // the session's kinds are already on: nothing toggled
}

TEST_F(ControllerTest, TheFirstWindowLogsNothingOutsideContinuousMode) {
  ProductionConfig c;
  c.mode = Mode::kSummary;
  c.summary_interval_ns = 3600'000'000'000ull;
  const std::string said = StartAndStopAtDebug(c);
  EXPECT_EQ(said.find("window opens"), std::string::npos) << said;
}

TEST_F(ControllerTest, SleepsUntilTheNextWindowEdge) {
  // A window shorter than the loop's 50 ms period: the loop wakes at its end
  // and at the next one's start, so windows last what they are told.
  ProductionConfig c;
  c.mode = Mode::kContinuous;
  c.window_ns = 16'000'000;
  c.period_ns = 1'000'000'000;
  Make(c);
  const int64_t t0 = now_;
  EXPECT_EQ(controller_->SleepNs(t0), 16'000'000);  // to the first window's end
  now_ = t0 + 16'000'000;
  controller_->Tick(now_);
  EXPECT_EQ(toggles_, std::vector<bool>{false});
  EXPECT_EQ(controller_->SleepNs(now_), 50'000'000);  // the next start is far: the period
  now_ = t0 + 990'000'000;
  controller_->Tick(now_);
  EXPECT_EQ(controller_->SleepNs(now_), 10'000'000);  // to the next window's start
  now_ = t0 + 1'000'000'000;
  controller_->Tick(now_);
  EXPECT_EQ(toggles_, (std::vector<bool>{false, true}));
  EXPECT_EQ(controller_->SleepNs(now_), 16'000'000);
  // A capture asked for inside a window lengthens it: the wake follows.
  controller_->RequestCapture(30'000'000);
  EXPECT_EQ(controller_->SleepNs(now_), 30'000'000);
  controller_->Stop("exit");
  writer_->Stop();
}

TEST_F(ControllerTest, WindowsOpenOnTheWallClocksPeriodBoundaries) {
  // Two processes with the same period, started 1.3 s and 3.9 s into a
  // 5 s period of the wall clock: after the first window (at its start)
  // both open windows at the wall clock's multiples of 5 s.
  ProductionConfig c;
  c.mode = Mode::kContinuous;
  c.window_ns = 1'000'000'000;
  c.period_ns = 5'000'000'000;
  for (int64_t into : {1'300'000'000ll, 3'900'000'000ll, 4'500'000'000ll}) {
    SCOPED_TRACE(into);
    toggles_.clear();
    name_ = "run-" + std::to_string(into) + ".trace";
    const int64_t t0 = now_;
    wall_offset_ = 100 * 5'000'000'000ll + into - t0;  // the wall clock at t0: 100 periods + into
    const int64_t boundary = t0 + 5'000'000'000ll - into;
    Make(c);
    EXPECT_EQ(controller_->SleepNs(t0), 50'000'000);
    if (into < 4'000'000'000ll) {
      now_ = t0 + 1'000'000'000;  // the first window, one window long
      controller_->Tick(now_);
      EXPECT_EQ(toggles_, std::vector<bool>{false});
      now_ = boundary - 1;
      controller_->Tick(now_);
      EXPECT_EQ(toggles_, std::vector<bool>{false});
      now_ = boundary;
      controller_->Tick(now_);
      EXPECT_EQ(toggles_, (std::vector<bool>{false, true}));
    } else {
      // The boundary comes inside the first window: that lasts until the
      // boundary's window ends.
      now_ = t0 + 1'000'000'000;
      controller_->Tick(now_);
      EXPECT_TRUE(toggles_.empty());
    }
    now_ = boundary + 1'000'000'000;
    controller_->Tick(now_);
    now_ = boundary + 5'000'000'000ll;
    controller_->Tick(now_);
    EXPECT_EQ(toggles_.back(), true);  // the next boundary's window is open
    EXPECT_EQ(controller_->SleepNs(now_), 50'000'000);
    controller_->Stop("exit");
    writer_->Stop();
    controller_.reset();
    writer_.reset();
    now_ = now_ + 1'000'000'000;
  }
}

TEST_F(ControllerTest, SleepsUntilACaptureEnds) {
  Make(ProductionConfig{});  // trace mode: a capture is a side file
  EXPECT_EQ(controller_->SleepNs(now_), 50'000'000);
  controller_->RequestCapture(5'000'000);
  EXPECT_EQ(controller_->SleepNs(now_), 5'000'000);
  now_ += 5'000'000;
  controller_->Tick(now_);
  EXPECT_EQ(controller_->SleepNs(now_), 50'000'000);
  controller_->Stop("exit");
  writer_->Stop();
}

TEST_F(ControllerTest, CaptureAndDumpCommandsWriteSideFiles) {
  ProductionConfig c;
  c.mode = Mode::kSummary;
  c.summary_interval_ns = 3600'000'000'000ull;
  c.flight_bytes = 1u << 20;
  Make(c);
  Push(5, "_Z6beforev");
  EXPECT_TRUE(controller_->HandleCommand("capture 2s\n"));
  Sync();
  Push(7, "_Z6duringv");
  now_ += 2'000'000'000;
  controller_->Tick(now_);
  Sync();
  Push(3, "_Z5afterv");
  EXPECT_TRUE(controller_->HandleCommand("dump"));
  Sync();
  EXPECT_FALSE(controller_->HandleCommand("reboot"));
  EXPECT_FALSE(controller_->HandleCommand("capture forever"));
  std::vector<std::string> side = controller_->side_files();
  ASSERT_EQ(side.size(), 2u);
  auto capture = LoadTrace(side[0]);
  ASSERT_TRUE(capture.ok());
  EXPECT_EQ(capture->header.chunk_reason(), "capture");
  ASSERT_EQ(capture->records.kernels.size(), 7u);
  EXPECT_EQ(capture->strings.Display(capture->records.kernels[0].name_id), "during()");
  auto dump = LoadTrace(side[1]);
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(dump->header.chunk_reason(), "flight-recorder:control");
  EXPECT_EQ(dump->records.kernels.size(), 15u);  // the whole ring
  controller_->Stop("exit");
  writer_->Stop();
  // Summary mode: no events in the main file, every kernel in its summaries.
  auto main = LoadTrace(path_);
  ASSERT_TRUE(main.ok());
  EXPECT_TRUE(main->records.kernels.empty());
  uint64_t kernels = 0;
  for (const auto& s : main->summaries)
    for (const auto& k : s.kernels()) kernels += k.count();
  EXPECT_EQ(kernels, 15u);
}

TEST_F(ControllerTest, ControlFileAndTriggerFileArePolled) {
  ProductionConfig c;
  c.flight_bytes = 1u << 20;
  c.control_dir = dir_;
  c.trigger_file = dir_ + "/dump-now";
  Make(c);
  Push(4, "_Z1kv");
  Sync();
  { std::ofstream(dir_ + "/" + std::to_string(::getpid()) + ".ctl") << "dump\n"; }
  { std::ofstream(c.trigger_file) << ""; }
  controller_->Tick(now_);
  Sync();
  // One dump per request.
  ASSERT_EQ(controller_->side_files().size(), 2u);
  // Both files are consumed.
  EXPECT_NE(::access(c.trigger_file.c_str(), F_OK), 0);
  EXPECT_NE(::access((dir_ + "/" + std::to_string(::getpid()) + ".ctl").c_str(), F_OK), 0);
  controller_->Stop("exit");
  writer_->Stop();
}

TEST_F(ControllerTest, RotatesBySizeWithTheDiskCap) {
  ProductionConfig c;
  c.max_file_bytes = 2048;
  c.max_disk_bytes = 8192;
  Make(c);
  for (int i = 0; i < 40; ++i) {
    Push(1000, "_Z1kv");
    Sync();
  }
  controller_->Stop("exit");
  writer_->Stop();
  // Chunks were rotated and the oldest deleted: chunk 0 is gone.
  EXPECT_NE(::access(path_.c_str(), F_OK), 0);
  uint64_t total = 0;
  int chunks = 0;
  for (uint32_t i = 0; i < 100; ++i) {
    struct stat st;
    if (::stat(ChunkPath(path_, i).c_str(), &st) == 0) {
      total += static_cast<uint64_t>(st.st_size);
      ++chunks;
    }
  }
  EXPECT_GE(chunks, 2);
  EXPECT_LE(total, c.max_disk_bytes);
}

TEST_F(ControllerTest, OpenMetricsFileIsRewrittenEachInterval) {
  ProductionConfig c;
  c.mode = Mode::kSummary;
  c.summary_interval_ns = 3600'000'000'000ull;
  c.openmetrics_file = dir_ + "/cutrace.prom";
  Make(c);
  Push(5, "_Z4gemmv");
  controller_->RequestSummary();
  Sync();
  auto read = [&] {
    std::ifstream in(c.openmetrics_file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string first = read();
  EXPECT_NE(first.find("cutrace_kernel_calls_total{host=\"\",pid=\""), std::string::npos) << first;
  EXPECT_NE(first.find("name=\"gemm()\",device=\"0\"} 5\n"), std::string::npos) << first;
  // Counters are run totals: the next interval adds to them.
  Push(3, "_Z4gemmv");
  controller_->RequestSummary();
  Sync();
  std::string second = read();
  EXPECT_NE(second.find("name=\"gemm()\",device=\"0\"} 8\n"), std::string::npos) << second;
  EXPECT_EQ(second.substr(second.size() - 6), "# EOF\n");
  controller_->Stop("exit");
  writer_->Stop();
}

TEST_F(ControllerTest, TriggerSignalDumpsWithoutStoppingTheProgram) {
  ProductionConfig c;
  c.flight_bytes = 1u << 20;
  c.trigger_signal = SIGUSR2;
  Make(c);
  Push(6, "_Z6signalv");
  Sync();
  controller_->Start();  // the control thread and the handler
  ASSERT_EQ(::raise(SIGUSR2), 0);  // the default action would end this test
  for (int i = 0; i < 100 && controller_->side_files().empty(); ++i) ::usleep(20000);
  ASSERT_EQ(controller_->side_files().size(), 1u);
  auto dump = LoadTrace(controller_->side_files()[0]);
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(dump->header.chunk_reason(), "flight-recorder:SIGUSR2");
  EXPECT_EQ(dump->records.kernels.size(), 6u);
  controller_->Stop("exit");
  writer_->Stop();
}

}  // namespace
}  // namespace cutrace::injection
