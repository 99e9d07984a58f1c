// The production modes without a GPU: CUTRACE_* parsing, the memory budget,
// a Session in summary mode and with the flight recorder (FakeCupti), and the
// controller's continuous windows, captures and control commands driven
// tick by tick. CUPTI's detach between windows: injection_detach_test.cc.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "collector/rotation.h"
#include "collector/trace_loader.h"
#include "injection/control.h"
#include "injection/modes.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

EnvGetter Env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ProductionConfig, DefaultsAreTraceModeAndNothingActive) {
  ProductionConfig c = ParseProductionConfig(Env({}));
  EXPECT_EQ(c.mode, Mode::kTrace);
  EXPECT_FALSE(c.active());
  EXPECT_EQ(c.summary_interval_ns, 10'000'000'000ull);
  EXPECT_EQ(c.window_ns, 1'000'000'000ull);
  EXPECT_EQ(c.period_ns, 60'000'000'000ull);
  EXPECT_EQ(c.trigger_signal, 0);  // no flight recorder, no trigger
  EXPECT_TRUE(c.problems.empty());
}

TEST(ProductionConfig, ParsesEveryVariable) {
  ProductionConfig c = ParseProductionConfig(Env({{"CUTRACE_MODE", "Continuous"},
                                                  {"CUTRACE_SUMMARY_INTERVAL", "500ms"},
                                                  {"CUTRACE_WINDOW", "2s"},
                                                  {"CUTRACE_PERIOD", "1m"},
                                                  {"CUTRACE_FLIGHT_RECORDER", "30s"},
                                                  {"CUTRACE_CONTROL_DIR", "/tmp/ctl"},
                                                  {"CUTRACE_TRIGGER_FILE", "/tmp/dump-now"},
                                                  {"CUTRACE_CAPTURE_SIGNAL", "SIGUSR1"},
                                                  {"CUTRACE_CAPTURE_DURATION", "3s"},
                                                  {"CUTRACE_MAX_FILE_SIZE", "64M"},
                                                  {"CUTRACE_ROTATE_INTERVAL", "1h"},
                                                  {"CUTRACE_MAX_DISK", "1G"},
                                                  {"CUTRACE_MAX_MEMORY", "256M"}}));
  EXPECT_TRUE(c.problems.empty()) << c.problems[0];
  EXPECT_EQ(c.mode, Mode::kContinuous);
  EXPECT_EQ(c.summary_interval_ns, 500'000'000ull);
  EXPECT_EQ(c.window_ns, 2'000'000'000ull);
  EXPECT_EQ(c.period_ns, 60'000'000'000ull);
  EXPECT_EQ(c.flight_age_ns, 30'000'000'000ull);
  EXPECT_EQ(c.flight_bytes, 0u);
  EXPECT_EQ(c.trigger_signal, SIGUSR2);
  EXPECT_EQ(c.capture_signal, SIGUSR1);
  EXPECT_EQ(c.capture_ns, 3'000'000'000ull);
  EXPECT_EQ(c.max_file_bytes, 64ull << 20);
  EXPECT_EQ(c.rotate_interval_ns, 3600'000'000'000ull);
  EXPECT_EQ(c.max_disk_bytes, 1ull << 30);
  EXPECT_EQ(c.max_memory_bytes, 256ull << 20);
  EXPECT_TRUE(c.active());
}

TEST(ProductionConfig, FlightRecorderBySizeAndBadValuesFallBack) {
  ProductionConfig c = ParseProductionConfig(Env({{"CUTRACE_FLIGHT_RECORDER", "64M"},
                                                  {"CUTRACE_TRIGGER_SIGNAL", "SIGTERM"},
                                                  {"CUTRACE_MODE", "fast"},
                                                  {"CUTRACE_WINDOW", "5s"},
                                                  {"CUTRACE_PERIOD", "2s"},
                                                  {"CUTRACE_MAX_DISK", "1M"},
                                                  {"CUTRACE_OPENMETRICS_FILE", "/tmp/x.prom"}}));
  EXPECT_EQ(c.flight_bytes, 64ull << 20);
  EXPECT_EQ(c.flight_age_ns, 0u);
  EXPECT_EQ(c.trigger_signal, SIGUSR2);  // SIGTERM refused
  EXPECT_EQ(c.mode, Mode::kTrace);
  EXPECT_EQ(c.period_ns, 5'000'000'000ull * 60);
  EXPECT_EQ(c.max_file_bytes, (1ull << 20) / 4);  // a quarter of the cap
  EXPECT_TRUE(c.openmetrics_file.empty());        // summary mode only
  EXPECT_EQ(c.problems.size(), 4u);
  for (const std::string& p : c.problems) EXPECT_EQ(p.find('\n'), std::string::npos);
}

TEST(ProductionConfig, DurationsAndSignals) {
  EXPECT_EQ(ParseDurationNs("10s"), 10'000'000'000ull);
  EXPECT_EQ(ParseDurationNs("1.5s"), 1'500'000'000ull);
  EXPECT_EQ(ParseDurationNs("250us"), 250'000ull);
  EXPECT_EQ(ParseDurationNs("7"), 7'000'000'000ull);
  EXPECT_EQ(ParseDurationNs("2h"), 7200'000'000'000ull);
  EXPECT_FALSE(ParseDurationNs("ten"));
  EXPECT_FALSE(ParseDurationNs("1..2s"));
  EXPECT_FALSE(ParseDurationNs("5 parsecs"));
  EXPECT_EQ(ParseSignal("SIGUSR2"), SIGUSR2);
  EXPECT_EQ(ParseSignal("usr1"), SIGUSR1);
  EXPECT_EQ(ParseSignal("none"), 0);
  EXPECT_EQ(ParseSignal("SIGRTMIN+3"), SIGRTMIN + 3);
  EXPECT_EQ(ParseSignal("12"), 12);
  EXPECT_FALSE(ParseSignal("SIGWHATEVER"));
}

TEST(MemoryBudget, SharesTheCap) {
  ProductionConfig p;
  p.max_memory_bytes = 64u << 20;
  p.flight_bytes = 64u << 20;
  Config c;
  c.buffer_count = 32;
  c.buffer_bytes = 2u << 20;
  std::vector<std::string> problems;
  MemoryBudget b = ApplyMemoryCap(p, &c, &problems);
  EXPECT_EQ(c.buffer_count, 8u);  // a quarter: 16 MiB of 2 MiB buffers
  EXPECT_EQ(b.pool_bytes, 16u << 20);
  EXPECT_EQ(b.ring_bytes, 32u << 20);  // at most half
  EXPECT_EQ(b.queue_bytes, 16u << 20);
  EXPECT_LE(b.pool_bytes + b.ring_bytes + b.queue_bytes, p.max_memory_bytes);
  EXPECT_EQ(problems.size(), 1u);
  // No cap: nothing changes.
  ProductionConfig none;
  Config d;
  MemoryBudget u = ApplyMemoryCap(none, &d, &problems);
  EXPECT_EQ(d.buffer_count, 32u);
  EXPECT_EQ(u.queue_bytes, 256u << 20);
}

// Continuous mode records no API records unless CUTRACE_KINDS names them,
// so that CUPTI can detach between windows; other modes keep every default.
TEST(ModeDefaults, ContinuousModeLeavesOutApiRecordsUnlessAsked) {
  ProductionConfig continuous;
  continuous.mode = Mode::kContinuous;
  Config c;
  EXPECT_TRUE(ApplyModeDefaults(continuous, &c));
  EXPECT_EQ(c.kinds.Names(), (std::vector<std::string>{"kernel", "memcpy", "memset", "nvtx", "overhead"}));
  EXPECT_FALSE(ApplyModeDefaults(continuous, &c));  // nothing left to change
  // Asked for by CUTRACE_KINDS: recorded as asked.
  Config asked = ParseConfig([](const char* name) -> std::optional<std::string> {
    if (std::string_view(name) == "CUTRACE_KINDS") return std::string("kernel,runtime");
    return std::nullopt;
  });
  EXPECT_FALSE(ApplyModeDefaults(continuous, &asked));
  EXPECT_EQ(asked.kinds.Names(), (std::vector<std::string>{"kernel", "runtime"}));
  for (Mode m : {Mode::kTrace, Mode::kSummary}) {
    ProductionConfig other;
    other.mode = m;
    Config d;
    EXPECT_FALSE(ApplyModeDefaults(other, &d));
    EXPECT_EQ(d.kinds.Names(), Config().kinds.Names());
  }
}

using ModesSessionTest = InjectionSessionTest;

TEST_F(ModesSessionTest, SummaryModeWritesSummaryPacketsInsteadOfEvents) {
  ScopedEnv env({{"CUTRACE_MODE", "summary"}, {"CUTRACE_SUMMARY_INTERVAL", "1h"}});
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  auto names = std::make_unique<std::string[]>(2);
  names[0] = "_Z4gemmv";
  names[1] = "_Z4reluv";
  for (int b = 0; b < 3; ++b) {
    DeliverBuffer([&](BufferWriter& w) {
      for (int i = 0; i < 100; ++i) {
        const uint64_t t = 1000 + b * 100000 + i * 500;
        w.Add(Kernel(names[i % 2].c_str(), t, t + 200 + (i % 2) * 100, b * 1000 + i + 1));
      }
    });
  }
  session_->Finalize("exit");
  std::vector<std::string> files = Files();
  ASSERT_EQ(files.size(), 1u);
  auto t = LoadTrace(dir_ + "/" + files[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->header.mode(), "summary");
  EXPECT_TRUE(t->records.kernels.empty());
  ASSERT_GE(t->summaries.size(), 1u);
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_name;  // count, total
  for (const proto::SummaryPacket& p : t->summaries)
    for (const proto::KernelSummary& k : p.kernels()) {
      auto& e = by_name[t->strings.Display(k.name_id())];
      e.first += k.count();
      e.second += k.total_ns();
    }
  ASSERT_EQ(by_name.size(), 2u);
  EXPECT_EQ(by_name["gemm()"].first, 150u);
  EXPECT_EQ(by_name["gemm()"].second, 150u * 200);
  EXPECT_EQ(by_name["relu()"].second, 150u * 300);
  // The tool's cost is in every summary packet and in the statistics.
  const proto::SummaryPacket& last = t->summaries.back();
  EXPECT_TRUE(last.has_statistics());
  EXPECT_EQ(last.statistics().kernels(), 300u);
  EXPECT_EQ(last.statistics().records_handled(), 300u);
  EXPECT_GT(last.statistics().aggregate_bytes(), 0u);
  ASSERT_TRUE(t->statistics.has_value());
  EXPECT_EQ(t->statistics->records_handled(), 300u);
  EXPECT_TRUE(t->clean_shutdown());
}

// Between continuous mode's windows nothing that costs per launch stays on:
// not the traced kinds, not the API calls, not CUPTI's overhead records. Only
// DEVICE and CONTEXT, whose records come once per device or context, stay.
TEST_F(ModesSessionTest, BetweenWindowsOnlyDeviceAndContextRecordsStayOn) {
  ScopedEnv env({{"CUTRACE_MODE", "continuous"}, {"CUTRACE_WINDOW", "10ms"},
                 {"CUTRACE_PERIOD", "1h"}});
  // Attached (CUTRACE_DETACH=0) with every default kind; the detaching
  // default is injection_detach_test.cc's.
  Config config = MakeConfig();
  config.detach_between_windows = false;
  config.kinds_given = true;
  ASSERT_TRUE(StartSession(std::move(config)).ok());
  const std::set<CUpti_ActivityKind> between = {CUPTI_ACTIVITY_KIND_DEVICE,
                                                CUPTI_ACTIVITY_KIND_CONTEXT};
  // The first window opens at the start and closes 10 ms later, on the
  // controller's thread: wait for it (at most 10 s).
  bool closed = false;
  for (int i = 0; i < 1000 && !closed; ++i) {
    closed = fake_->KindsOn() == between && fake_->ApiCallsOn() == 0;
    if (!closed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::set<int> on;
  for (CUpti_ActivityKind k : fake_->KindsOn()) on.insert(static_cast<int>(k));
  EXPECT_TRUE(closed) << "kinds still on: " << ::testing::PrintToString(on) << ", API calls on: "
                      << fake_->ApiCallsOn();
  session_->Finalize("exit");
}

TEST_F(ModesSessionTest, FlightRecorderDumpsOnAbnormalEnd) {
  ScopedEnv env({{"CUTRACE_FLIGHT_RECORDER", "4M"}, {"CUTRACE_MAX_MEMORY", "64M"}});
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  auto name = std::make_unique<std::string>("_Z4lastv");
  DeliverBuffer([&](BufferWriter& w) {
    for (int i = 0; i < 10; ++i) w.Add(Kernel(name->c_str(), 1000 + i * 100, 1050 + i * 100, i + 1));
  });
  session_->Finalize("SIGTERM");
  std::vector<std::string> files = Files();
  ASSERT_EQ(files.size(), 2u) << files[0];
  // "cutrace-HOST-PID.flight-1.trace" sorts before "cutrace-HOST-PID.trace".
  ASSERT_NE(files[0].find(".flight-1."), std::string::npos) << files[0];
  auto dump = LoadTrace(dir_ + "/" + files[0]);
  ASSERT_TRUE(dump.ok());
  EXPECT_EQ(dump->header.chunk_reason(), "flight-recorder:SIGTERM");
  ASSERT_EQ(dump->records.kernels.size(), 10u);
  EXPECT_EQ(dump->strings.Display(dump->records.kernels[0].name_id), "last()");
  auto main = LoadTrace(dir_ + "/" + files[1]);
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main->records.kernels.size(), 10u);  // trace mode writes the events too
  ASSERT_TRUE(main->statistics.has_value());
  EXPECT_EQ(main->statistics->memory_cap_bytes(), 64u << 20);
  EXPECT_GT(main->statistics->ring_bytes(), 0u);
}

// The controller on its own: a real AsyncWriter and chunk files, CUPTI
// replaced by callbacks, time advanced by hand.
class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/cutrace-ctl-XXXXXX";
    dir_ = ::mkdtemp(t);
  }
  void TearDown() override {
    controller_.reset();
    writer_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  void Make(ProductionConfig config) {
    ProductionController::Callbacks cb;
    cb.set_activity = [this](bool on) { toggles_.push_back(on); };
    cb.flush_activity = [this] { ++flushes_; };
    cb.window_closed = [this] { closed_after_flushes_.push_back(flushes_); };
    cb.now = [this] { return now_.load(); };
    MemoryBudget budget;
    budget.ring_bytes = 1u << 20;
    controller_ = std::make_unique<ProductionController>(config, budget, cb);
    path_ = dir_ + "/run.trace";
    HeaderInfo h;
    h.producer = "test";
    controller_->DecorateHeader(&h, path_);
    auto file = TraceWriter::Create(path_).value();
    ASSERT_TRUE(file->WriteHeader(h).ok());
    writer_ = std::make_unique<AsyncWriter>(std::move(file), &interner_);
    controller_->Attach(writer_.get(), &interner_);
    controller_->Schedule(now_);
    ASSERT_TRUE(writer_->Start().ok());
  }
  void Push(int n, const char* name) {
    RecordBatch b;
    for (int i = 0; i < n; ++i) {
      KernelRecord k;
      k.name_id = interner_.Intern(name);
      k.start_ns = static_cast<uint64_t>(now_) + i * 10;
      k.end_ns = k.start_ns + 5;
      b.kernels.push_back(k);
    }
    ASSERT_TRUE(writer_->TryPush(std::move(b)));
  }
  void Sync() { ASSERT_TRUE(writer_->Flush(std::chrono::seconds(10))); }
  // The controller's thread started and stopped, with what it logged at
  // the debug level.
  std::string StartAndStopAtDebug() {
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

  std::string dir_, path_;
  StringInterner interner_;
  std::unique_ptr<AsyncWriter> writer_;
  std::unique_ptr<ProductionController> controller_;
  std::vector<bool> toggles_;
  int flushes_ = 0;
  std::vector<int> closed_after_flushes_;  // flushes_ at each window_closed
  std::atomic<int64_t> now_{1'000'000'000};  // read on the writer thread too
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
    EXPECT_EQ(t->statistics->windows(), w + 1u);
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
  c.trigger_signal = 0;
  c.capture_signal = 0;
  Make(c);
  const std::string said = StartAndStopAtDebug();
  EXPECT_NE(said.find("window opens at "), std::string::npos) << said;
  EXPECT_NE(said.find("(monotonic): activity on with the session"), std::string::npos) << said;
  EXPECT_TRUE(toggles_.empty());  // the session's kinds are already on: nothing toggled
}

TEST_F(ControllerTest, TheFirstWindowLogsNothingOutsideContinuousMode) {
  ProductionConfig c;
  c.mode = Mode::kSummary;
  c.summary_interval_ns = 3600'000'000'000ull;
  c.trigger_signal = 0;
  c.capture_signal = 0;
  Make(c);
  const std::string said = StartAndStopAtDebug();
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
