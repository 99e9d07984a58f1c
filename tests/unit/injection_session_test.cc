// The session without a GPU: the CUPTI call order, kind selection, and every
// start-up failure staying harmless (no file, nothing left subscribed), plus
// shutdown twice, late callbacks and fork. The fake CUPTI is
// injection_fake_cupti.h; the fixture is injection_session_fixture.h.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "collector/trace_loader.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

TEST_F(InjectionSessionTest, CuptiCallOrderAndKinds) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  const auto& f = *fake_;
  int version = f.IndexOf("cuptiGetVersion");
  int subscribe = f.IndexOf("cuptiSubscribe_v2:cutrace");
  int timestamp = f.IndexOf("cuptiActivityRegisterTimestampCallback");
  int callbacks = f.IndexOf("cuptiActivityRegisterCallbacks");
  int first_enable = f.IndexOf("cuptiActivityEnable:");
  ASSERT_GE(version, 0);
  EXPECT_LT(version, subscribe);
  EXPECT_LT(subscribe, timestamp);
  EXPECT_LT(timestamp, callbacks);
  EXPECT_LT(callbacks, first_enable);
  auto enabled = [&](CUpti_ActivityKind k) {
    return std::count(f.enabled_kinds.begin(), f.enabled_kinds.end(), k) == 1;
  };
  EXPECT_TRUE(enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_KERNEL)) << "KERNEL serializes kernels";
  for (auto k : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                 CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA,
                 CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_DEVICE,
                 CUPTI_ACTIVITY_KIND_CONTEXT}) {
    EXPECT_TRUE(enabled(k)) << k;
  }
  // Sync records only when asked for (injection/config.h says why); the sync
  // API calls below are recorded.
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
  // API records per call, not the whole domain.
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_DRIVER));
  EXPECT_EQ(f.enabled_runtime_cbids,
            (std::set<uint32_t>{CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                                CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020}));
  EXPECT_EQ(f.enabled_driver_cbids, (std::set<uint32_t>{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel}));
  EXPECT_EQ(f.IndexOf("cuptiActivityFlushAll"), -1);
  EXPECT_EQ(session_->clock(), ClockDomain::kMonotonic);
  EXPECT_NE(f.timestamp_fn, nullptr);
  EXPECT_EQ(Files().size(), 1u);
}

TEST_F(InjectionSessionTest, KindsSelectWhatIsEnabled) {
  ASSERT_TRUE(StartWithKinds("kernel").ok());
  // No OVERHEAD records unless the list names them: CUPTI's drop count is
  // then all kernels.
  EXPECT_EQ(EnabledKinds(), (std::set<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                 CUPTI_ACTIVITY_KIND_DEVICE,
                                                 CUPTI_ACTIVITY_KIND_CONTEXT}));
  EXPECT_TRUE(fake_->enabled_runtime_cbids.empty());
}

TEST_F(InjectionSessionTest, OverheadRecordsAreAKindOfTheirOwn) {
  ASSERT_TRUE(StartWithKinds("kernel,overhead").ok());
  EXPECT_EQ(EnabledKinds(), (std::set<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                 CUPTI_ACTIVITY_KIND_OVERHEAD,
                                                 CUPTI_ACTIVITY_KIND_DEVICE,
                                                 CUPTI_ACTIVITY_KIND_CONTEXT}));
  EXPECT_TRUE(fake_->enabled_runtime_cbids.empty());
}

TEST_F(InjectionSessionTest, SyncRecordsWhenAskedFor) {
  ASSERT_TRUE(StartWithKinds("default,sync").ok());
  EXPECT_EQ(std::count(fake_->enabled_kinds.begin(), fake_->enabled_kinds.end(),
                       CUPTI_ACTIVITY_KIND_SYNCHRONIZATION),
            1);
}

TEST_F(InjectionSessionTest, TimestampCallbackCanBeTurnedOff) {
  Config c = MakeConfig();
  c.timestamp_callback = false;
  ASSERT_TRUE(StartSession(c).ok());
  EXPECT_EQ(fake_->IndexOf("cuptiActivityRegisterTimestampCallback"), -1);
  EXPECT_EQ(session_->clock(), ClockDomain::kCupti);
}

TEST_F(InjectionSessionTest, KeepsItsSubscriptionForTheModuleUnloadFlush) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  EXPECT_FALSE(fake_->unsubscribed);
  for (int cbid : {CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload})
    EXPECT_NE(fake_->IndexOf("cuptiEnableCallback:1:" + std::to_string(CUPTI_CB_DOMAIN_DRIVER_API) +
                             ":" + std::to_string(cbid)),
              -1);
  // Entering cuModuleUnload flushes (forced) so that names are read while valid.
  int before = fake_->flushes;
  CUpti_CallbackData cb{};
  cb.callbackSite = CUPTI_API_ENTER;
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, &cb);
  EXPECT_EQ(fake_->flushes, before + 1);
  EXPECT_NE(fake_->IndexOf("cuptiActivityFlushAll:1"), -1);
  // From the first unload on, launch callbacks give each kernel its name.
  EXPECT_NE(fake_->IndexOf("cuptiEnableCallback:1:" + std::to_string(CUPTI_CB_DOMAIN_DRIVER_API) + ":" +
                           std::to_string(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)),
            -1);
  // Its exit, and other calls, are not flushes.
  cb.callbackSite = CUPTI_API_EXIT;
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, &cb);
  cb.callbackSite = CUPTI_API_ENTER;
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API,
                              CUPTI_DRIVER_TRACE_CBID_cuModuleLoad, &cb);
  EXPECT_EQ(fake_->flushes, before + 1);
}

TEST_F(InjectionSessionTest, ReleasesItsSubscriptionWhenTheProgramHasACuptiClient) {
  // torch.profiler (Kineto) turns GPU tracing off for good if its
  // cuptiSubscribe fails: a program with its own client gets the slot back.
  fake_->program_client = true;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  EXPECT_TRUE(fake_->unsubscribed);
  // Nor does cutrace impose its clock: the timestamp callback is process-wide.
  EXPECT_EQ(fake_->IndexOf("cuptiActivityRegisterTimestampCallback"), -1);
  EXPECT_EQ(session_->clock(), ClockDomain::kCupti);
  EXPECT_EQ(fake_->IndexOf("cuptiEnableCallback"), -1);
  // Tracing itself needs no subscriber: the kinds are on, the trace is written.
  EXPECT_FALSE(fake_->enabled_kinds.empty());
  session_->Finalize("exit");
  EXPECT_EQ(Files().size(), 1u);
}

TEST_F(InjectionSessionTest, AnotherSubscriberKeepsCutraceOut) {
  fake_->subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  fake_->other_subscriber = "CUPTI for Nsight Systems";
  Status s = StartSession(MakeConfig());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUPTI for Nsight Systems"), std::string::npos) << s.message();
  EXPECT_EQ(fake_->IndexOf("cuptiActivityRegisterCallbacks"), -1);
  EXPECT_TRUE(fake_->enabled_kinds.empty());
  EXPECT_TRUE(Files().empty());
  session_->Finalize("exit");  // harmless
  EXPECT_EQ(fake_->flushes, 0);
}

TEST_F(InjectionSessionTest, WrongCuptiMajorVersionKeepsCutraceOut) {
  fake_->version = 26;  // a CUDA 12 libcupti
  Status s = StartSession(MakeConfig());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUTRACE_CUPTI_PATH"), std::string::npos) << s.message();
  EXPECT_EQ(fake_->IndexOf("cuptiSubscribe"), -1);
  EXPECT_TRUE(Files().empty());
}

TEST_F(InjectionSessionTest, UnwritableOutputUnsubscribes) {
  Config c = MakeConfig();
  c.output = dir_ + "/missing-dir/x.trace";
  Status s = StartSession(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUTRACE_OUTPUT"), std::string::npos) << s.message();
  EXPECT_TRUE(fake_->unsubscribed);
  EXPECT_EQ(fake_->IndexOf("cuptiActivityRegisterCallbacks"), -1);
  EXPECT_TRUE(fake_->enabled_kinds.empty());
}

TEST_F(InjectionSessionTest, ExistingFileGetsANumberedSibling) {
  std::ofstream(dir_ + "/fixed.trace") << "someone else's";
  Config c = MakeConfig();
  c.output = dir_ + "/fixed.trace";
  c.file_mode = 0640;
  ASSERT_TRUE(StartSession(c).ok());
  EXPECT_EQ(session_->path(), dir_ + "/fixed-1.trace");
  struct stat st;
  ASSERT_EQ(::stat(session_->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  session_->Finalize("exit");
  EXPECT_TRUE(LoadTrace(session_->path()).ok());
}

TEST_F(InjectionSessionTest, ManifestGetsThePath) {
  std::string manifest = dir_ + "/manifest";
  std::ofstream(manifest).close();
  Config c = MakeConfig();
  c.output = dir_ + "/t-%p.trace";
  c.run_manifest = manifest;
  ASSERT_TRUE(StartSession(c).ok());
  std::ifstream in(manifest);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), session_->path() + "\n");
  EXPECT_EQ(session_->path(), dir_ + "/t-" + std::to_string(::getpid()) + ".trace");
}

TEST_F(InjectionSessionTest, PoolExhaustionIsCountedAndWarned) {
  Config c = MakeConfig();
  c.buffer_count = 2;
  ASSERT_TRUE(StartSession(c).ok());
  uint8_t* b[3];
  size_t size, max_records;
  for (auto& p : b) fake_->requested(&p, &size, &max_records);
  EXPECT_NE(b[0], nullptr);
  EXPECT_NE(b[1], nullptr);
  EXPECT_EQ(b[2], nullptr);
  EXPECT_EQ(size, 0u);
  fake_->completed(nullptr, 0, b[0], 1u << 20, 0);
  fake_->completed(nullptr, 0, b[1], 1u << 20, 0);
  session_->Finalize("SIGTERM");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->statistics->buffers_refused, 1u);
  EXPECT_EQ(t->statistics->buffers_requested, 3u);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("CUTRACE_BUFFER_COUNT"), std::string::npos);
  EXPECT_EQ(t->end->reason(), "SIGTERM");
}

TEST_F(InjectionSessionTest, FinalizeRunsOnceAndLateCallbacksAreHarmless) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  uint8_t* held = nullptr;
  size_t size, max_records;
  fake_->requested(&held, &size, &max_records);
  ASSERT_NE(held, nullptr);
  session_->Finalize("exit");
  session_->Finalize("exit");
  EXPECT_EQ(fake_->flushes, 1);
  EXPECT_TRUE(session_->finished());
  // After shutdown CUPTI gets no buffers, and one it still held is taken back.
  uint8_t* late = reinterpret_cast<uint8_t*>(1);
  fake_->requested(&late, &size, &max_records);
  EXPECT_EQ(late, nullptr);
  BufferWriter w(held, size);
  w.Add(Kernel("_Z4latev", 1, 2, 1));
  fake_->completed(nullptr, 0, held, size, w.used());
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->clean_shutdown());
  EXPECT_TRUE(t->records.kernels.empty());
}

TEST_F(InjectionSessionTest, CuptiClockWhenNoTimestampCallback) {
  fake_->has_timestamp_callback = false;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  EXPECT_EQ(session_->clock(), ClockDomain::kCupti);
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->header.clock(), proto::CLOCK_DOMAIN_CUPTI);
  EXPECT_EQ(t->header.start_anchor().trace_ns(), 1000);  // FakeCupti's timestamp
  EXPECT_GT(t->header.start_anchor().monotonic_ns(), 0);
}

TEST_F(InjectionSessionTest, ForkedChildNeverTouchesTheParentsTrace) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // In the child: no flush, no writer, no file change; returns at once.
    session_->Finalize("exit");
    uint8_t* buffer = nullptr;
    size_t size, max_records;
    fake_->requested(&buffer, &size, &max_records);
    if (buffer != nullptr) fake_->completed(nullptr, 0, buffer, size, 0);
    ::_exit(fake_->flushes == 0 && session_->finished() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(session_->running());
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->clean_shutdown());
  EXPECT_EQ(t->statistics->buffers_completed, 0u);
}

}  // namespace
}  // namespace cutrace::injection
