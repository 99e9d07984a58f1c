// Continuous mode with CUPTI detached between windows (CUTRACE_DETACH=1,
// injection/session/detach.cc) without a GPU: a Session against the fake
// CUPTI, whose cuptiFinalize drops everything and whose calls made while
// detached are kept apart, driven by the controller's real clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collector/trace_loader.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

// The windows run on the controller's real clock. Where a test must act
// between one window's end and the next window's start (or inside a
// window), the periods leave it a second or more: with 200-300 ms, a test
// thread stalled on a loaded machine (ctest -j2 beside other work) was now
// and then overtaken by the next window and failed.
//
// Continuous mode detaches CUPTI between windows (CUTRACE_DETACH): kinds once
// enabled on a live context keep costing every launch after they are off.
class DetachTest : public InjectionSessionTest {
 protected:
  template <typename Pred>
  static bool WaitFor(Pred pred) {
    for (int i = 0; i < 1000; ++i) {  // 10 s at most
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
  }
  static std::string DomainCall(int enable, CUpti_CallbackDomain domain) {
    return "cuptiEnableDomain:" + std::to_string(enable) + ":" + std::to_string(static_cast<int>(domain));
  }
  size_t Count(const std::string& call) {
    std::vector<std::string> calls = fake_->Calls();
    return static_cast<size_t>(std::count(calls.begin(), calls.end(), call));
  }
  // The window closed and asked for a detach at the next API exit (the
  // `n`th time): the runtime domain's callbacks are on.
  bool DetachAsked(size_t n) { return Count(DomainCall(1, CUPTI_CB_DOMAIN_RUNTIME_API)) >= n; }
  // ... and the request published (after those calls): the next exit detaches.
  bool DetachPending(size_t n) { return DetachAsked(n) && session_->detach_pending(); }
  // A session in continuous mode with CUTRACE_DETACH=1, a `window` every `period`.
  Status StartDetaching(const char* window, const char* period) {
    env_ = std::make_unique<ScopedEnv>(std::map<std::string, std::string>{
        {"CUTRACE_MODE", "continuous"}, {"CUTRACE_WINDOW", window}, {"CUTRACE_PERIOD", period}});
    Config c = DetachConfig();
    return StartSession(std::move(c));
  }
  // StartDetaching, then the wait for the first window's detach request.
  void StartAndAwaitFirstDetach(const char* window, const char* period) {
    ASSERT_TRUE(StartDetaching(window, period).ok());
    ASSERT_TRUE(WaitFor([&] { return DetachPending(1); }));
  }
  // Detaching on, and the kinds it works with (no API records).
  Config DetachConfig() {
    Config c = MakeConfig();
    c.detach_between_windows = true;
    std::string error;
    c.kinds = *ParseKinds("kernel,memcpy,memset,nvtx,overhead", &error);
    return c;
  }
  void TearDown() override {
    InjectionSessionTest::TearDown();
    env_.reset();
  }
  std::unique_ptr<ScopedEnv> env_;
  bool KernelsOn() { return fake_->KindsOn().count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1; }
  // A runtime call's exit: where a detach happens (a driver call's may be
  // inside a runtime call).
  void ApiExit() {
    fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT);
  }
  void DriverExit() {
    fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT);
  }
  // A buffer from cutrace's pool, as CUPTI asks for one.
  uint8_t* TakeBuffer(size_t* size) {
    uint8_t* b = nullptr;
    size_t max_records = 0;
    fake_->requested(&b, size, &max_records);
    return b;
  }
  // Whether any file the session left holds a kernel of this (demangled) name.
  bool KernelInFiles(const std::string& name) {
    for (const std::string& f : Files()) {
      auto t = LoadTrace(dir_ + "/" + f);
      if (!t.ok()) continue;  // ExpectCompleteFiles() says so
      for (const auto& k : t->records.kernels)
        if (t->strings.Display(k.name_id) == name) return true;
    }
    return false;
  }
  // Every file the session left is a complete trace.
  void ExpectCompleteFiles() {
    std::vector<std::string> files = Files();
    ASSERT_FALSE(files.empty());
    for (const std::string& f : files) {
      auto t = LoadTrace(dir_ + "/" + f);
      ASSERT_TRUE(t.ok()) << f << ": " << t.status().message();
      EXPECT_TRUE(t->clean_shutdown()) << f;
    }
  }
};

// Windows long enough (300 ms) that polling every 10 ms never misses one.
TEST_F(DetachTest, DetachesAtTheNextApiExitAndAttachesAgainForTheNextWindow) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("300ms", "1s"));
  EXPECT_EQ(Count(DomainCall(1, CUPTI_CB_DOMAIN_DRIVER_API)), 0u);  // the runtime's exits only
  // Not at an entry (CUPTI wants the exit), nor at a driver call's exit.
  fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER);
  DriverExit();
  EXPECT_FALSE(fake_->detached());
  const int flushes = fake_->flushes.load();
  ApiExit();
  EXPECT_TRUE(fake_->detached());
  EXPECT_EQ(Count("cuptiFinalize"), 1u);
  // That exit flushed every buffer back first, with every kind off (DEVICE
  // and CONTEXT too, so none is asked for after the flush).
  EXPECT_EQ(fake_->flushes.load(), flushes + 1);
  {
    std::vector<std::string> calls = fake_->Calls();
    const int finalize_at = fake_->IndexOf("cuptiFinalize");
    ASSERT_GE(finalize_at, 1);
    EXPECT_EQ(calls[static_cast<size_t>(finalize_at) - 1],
              "cuptiActivityFlushAll:" + std::to_string(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    auto disabled_before = [&](CUpti_ActivityKind kind) {
      const std::string call = "cuptiActivityDisable:" + std::to_string(kind);
      return std::find(calls.begin(), calls.begin() + finalize_at, call) != calls.begin() + finalize_at;
    };
    EXPECT_TRUE(disabled_before(CUPTI_ACTIVITY_KIND_DEVICE));
    EXPECT_TRUE(disabled_before(CUPTI_ACTIVITY_KIND_CONTEXT));
  }
  ApiExit();  // a second exit finds nothing to do
  EXPECT_EQ(Count("cuptiFinalize"), 1u);
  // The next window, a second later, attaches again: the subscriber first,
  // then the clock and the buffer callbacks, then the kinds.
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));
  std::vector<std::string> again = fake_->CallsWhileDetached();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0], "cuptiSubscribe_v2:cutrace");
  const int finalize = fake_->IndexOf("cuptiFinalize");
  std::vector<std::string> calls = fake_->Calls();
  auto after = [&](const std::string& prefix) {
    for (size_t i = static_cast<size_t>(finalize) + 1; i < calls.size(); ++i)
      if (calls[i].rfind(prefix, 0) == 0) return static_cast<int>(i);
    return -1;
  };
  const int subscribe = after("cuptiSubscribe_v2"), clock = after("cuptiActivityRegisterTimestampCallback"),
            buffers = after("cuptiActivityRegisterCallbacks"),
            kernels = after("cuptiActivityEnable:" + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)),
            unload = after("cuptiEnableCallback:1:" + std::to_string(CUPTI_CB_DOMAIN_DRIVER_API) + ":" +
                           std::to_string(CUPTI_DRIVER_TRACE_CBID_cuModuleUnload));
  EXPECT_LT(subscribe, clock);
  EXPECT_LT(clock, buffers);
  EXPECT_LT(buffers, kernels);
  EXPECT_GT(unload, subscribe);  // the module-unload flush is back too
  ASSERT_NE(fake_->completed, nullptr);
  // That window records; then it closes and CUPTI detaches again.
  auto name = std::make_unique<std::string>("_Z6secondv");
  DeliverBuffer([&](BufferWriter& w) { w.Add(Kernel(name->c_str(), 5000, 6000, 1)); });
  ASSERT_TRUE(WaitFor([&] { return DetachPending(2); }));
  ApiExit();
  EXPECT_TRUE(fake_->detached());
  // The exit, detached: no CUPTI call at all (each would attach it again).
  session_->Finalize("exit");
  EXPECT_TRUE(fake_->detached());
  EXPECT_EQ(fake_->CallsWhileDetached().size(), 1u);
  ExpectCompleteFiles();
  bool seen = false;
  for (const std::string& f : Files()) {
    auto t = LoadTrace(dir_ + "/" + f);
    ASSERT_TRUE(t.ok());
    bool here = false;
    for (const auto& k : t->records.kernels) here |= t->strings.Display(k.name_id) == "second()";
    if (!here) continue;
    seen = true;
    // Its statistics count the detach before it, and the one after if the
    // writer closed the chunk only once that had happened (a loaded machine).
    ASSERT_TRUE(t->statistics.has_value());
    EXPECT_GE(t->statistics->cupti_detaches, 1u);
    EXPECT_LE(t->statistics->cupti_detaches, 2u);
  }
  EXPECT_TRUE(seen) << "the second window's kernel is in no chunk";
}

// nvtx_nested detached on the H200: the ranges open when a window ended were
// counted unclosed at an exit inside a later window. They are cut by the
// window's end, not invalid.
TEST_F(DetachTest, ARangeOpenAtAWindowsEndIsNotCountedUnclosed) {
  ASSERT_TRUE(StartDetaching("1s", "2s").ok());
  DeliverBuffer([&](BufferWriter& w) {
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "outer", nullptr));
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 200, "inner", nullptr));
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 300, nullptr, nullptr));
  });
  ASSERT_TRUE(WaitFor([&] { return DetachPending(1); }));
  ApiExit();
  ASSERT_TRUE(fake_->detached());
  // The exit inside the next window, whose chunk the exit ends (with the
  // statistics, unclosed ranges among them).
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));
  session_->Finalize("exit");
  ExpectCompleteFiles();
  std::vector<std::string> files = Files();
  uint64_t ranges = 0, invalid = 0;
  for (const std::string& f : files) {
    auto t = LoadTrace(dir_ + "/" + f);
    ASSERT_TRUE(t.ok());
    ranges += t->records.ranges.size();
    if (!t->statistics.has_value()) continue;
    for (const auto& i : t->statistics->invalid) invalid += i.count;
  }
  EXPECT_EQ(ranges, 1u);  // inner
  EXPECT_EQ(invalid, 0u);
}

TEST_F(DetachTest, NoCudaCallBeforeTheNextWindowLeavesCuptiAttached) {
  ASSERT_TRUE(StartDetaching("100ms", "1500ms").ok());
  ASSERT_TRUE(WaitFor([&] { return DetachAsked(1) && !KernelsOn(); }));
  // The next window takes the request back: the domains off, kinds on.
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  EXPECT_EQ(Count(DomainCall(0, CUPTI_CB_DOMAIN_RUNTIME_API)), 1u);
  EXPECT_EQ(Count("cuptiSubscribe_v2:cutrace"), 1u);  // never subscribed again
  session_->Finalize("exit");
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  ExpectCompleteFiles();
}

TEST_F(DetachTest, AFailedAttachStopsTheWindowsAndTheExitStaysClean) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("10ms", "1s"));
  // Another tool took CUPTI while cutrace was detached.
  fake_->subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  ApiExit();
  ASSERT_TRUE(WaitFor([&] { return !fake_->CallsWhileDetached().empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the failure handled
  // From then on not one CUPTI call: the CUPTI attached now is the other
  // tool's, and turning kinds off at the window's end would be turning its off.
  const size_t calls = fake_->Calls().size();
  const int queries = fake_->queries.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // two more periods
  EXPECT_FALSE(KernelsOn());
  EXPECT_EQ(Count("cuptiSubscribe_v2:cutrace"), 2u);  // tried once, then no more windows
  EXPECT_EQ(Count("cuptiActivityRegisterCallbacks"), 1u);
  session_->Finalize("exit");
  std::vector<std::string> after = fake_->Calls();
  EXPECT_EQ(after.size(), calls) << after.back();
  EXPECT_EQ(fake_->queries.load(), queries);
  ExpectCompleteFiles();
}

TEST_F(DetachTest, TheExitTakesAPendingDetachBack) {
  ASSERT_TRUE(StartDetaching("10ms", "1h").ok());
  ASSERT_TRUE(WaitFor([&] { return DetachAsked(1); }));
  const int flushes = fake_->flushes.load();
  session_->Finalize("exit");
  // Still attached, so the exit flushes as usual; the domains are off again
  // and nothing was detached, not even by an API exit after it.
  EXPECT_EQ(Count(DomainCall(0, CUPTI_CB_DOMAIN_RUNTIME_API)), 1u);
  EXPECT_EQ(fake_->flushes.load(), flushes + 1);
  ApiExit();
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  ExpectCompleteFiles();
}

TEST_F(DetachTest, AnApiExitWhileTheDetachIsAskedForDoesNotDetach) {
  // Another thread's call ends while RequestDetach turns the callbacks on:
  // the request is not published yet, so it detaches nothing; the next
  // exit does.
  std::atomic<int> inside{0};
  fake_->on_enable_domain = [&](uint32_t enable, CUpti_CallbackDomain) {
    if (enable == 1) {
      ApiExit();
      inside.fetch_add(1);
    }
  };
  ASSERT_TRUE(StartDetaching("10ms", "1h").ok());
  ASSERT_TRUE(WaitFor([&] { return DetachPending(1) && inside.load() == 1; }));
  EXPECT_FALSE(fake_->detached());
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  ApiExit();
  EXPECT_TRUE(fake_->detached());
  session_->Finalize("exit");
  ExpectCompleteFiles();
}

TEST_F(DetachTest, AModuleUnloadBetweenWindowsGetsLaunchNamesFromTheNextWindow) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("100ms", "1500ms"));
  const int flushes = fake_->flushes.load();
  // An unload with a detach asked for: no flush (the window's came first).
  fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, CUPTI_API_ENTER);
  EXPECT_EQ(fake_->flushes.load(), flushes);
  DriverExit();  // the unload's own exit is a driver call's: not there
  EXPECT_FALSE(fake_->detached());
  ApiExit();  // the next runtime call's exit detaches
  EXPECT_TRUE(fake_->detached());
  // The next window attaches again with the launch callbacks on.
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));
  const std::string launch = "cuptiEnableCallback:1:" + std::to_string(CUPTI_CB_DOMAIN_DRIVER_API) + ":" +
                             std::to_string(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  EXPECT_GE(Count(launch), 1u);
  session_->Finalize("exit");
  ExpectCompleteFiles();
}

TEST_F(DetachTest, ABufferCuptiStillHoldsAfterTheFlushKeepsItAttachedUntilItComesBack) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("100ms", "1500ms"));
  // CUPTI took a buffer and keeps it through the forced flush.
  size_t size = 0;
  uint8_t* held = TakeBuffer(&size);
  ASSERT_NE(held, nullptr);
  ApiExit();
  EXPECT_FALSE(fake_->detached());
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  EXPECT_FALSE(session_->detach_pending());
  EXPECT_EQ(Count(DomainCall(0, CUPTI_CB_DOMAIN_RUNTIME_API)), 1u);  // the callbacks off again
  // It comes back with the next window's records; the window after that detaches.
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));
  auto name = std::make_unique<std::string>("_Z4heldv");
  BufferWriter w(held, size);
  w.Add(Kernel(name->c_str(), 5000, 6000, 1));
  fake_->completed(nullptr, 0, held, size, w.used());
  ASSERT_TRUE(WaitFor([&] { return DetachPending(2); }));
  ApiExit();
  EXPECT_TRUE(fake_->detached());
  session_->Finalize("exit");
  ExpectCompleteFiles();
  EXPECT_TRUE(KernelInFiles("held()"));
}

TEST_F(DetachTest, ABufferHandedBackInsideCuptiFinalizeIsDroppedUnreadAndCounted) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("100ms", "1500ms"));
  // A buffer CUPTI had and gave back already, which it hands back again
  // while tearing down (nothing cutrace does lets CUPTI hold one then, and
  // it gets none during a detach: CuptiGetsNoBufferOnceADetachIsUnderWay).
  size_t size = 0;
  uint8_t* stale = TakeBuffer(&size);
  ASSERT_NE(stale, nullptr);
  auto name = std::make_unique<std::string>("_Z4latev");
  BufferWriter w(stale, size);
  w.Add(Kernel(name->c_str(), 5000, 6000, 1));
  const size_t used = w.used();
  fake_->completed(nullptr, 0, stale, size, 0);  // back, empty
  int calls_inside = -1, queries_inside = -1;
  CUpti_BuffersCallbackCompleteFunc completed = fake_->completed;
  fake_->on_finalize = [&] {
    const int queries = fake_->queries.load();
    completed(nullptr, 0, stale, size, used);
    calls_inside = static_cast<int>(fake_->Calls().size());
    queries_inside = fake_->queries.load() - queries;
  };
  ApiExit();
  EXPECT_TRUE(fake_->detached());
  // Not one CUPTI call for it (each would attach CUPTI again).
  EXPECT_EQ(calls_inside, fake_->IndexOf("cuptiFinalize") + 1);
  EXPECT_EQ(queries_inside, 0);
  fake_->on_finalize = nullptr;
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));  // the next window's chunk has the count
  session_->Finalize("exit");
  ExpectCompleteFiles();
  // Counted in the next chunk's statistics; its kernel is in none.
  uint64_t dropped = 0;
  for (const std::string& f : Files()) {
    auto t = LoadTrace(dir_ + "/" + f);
    ASSERT_TRUE(t.ok());
    if (t->statistics.has_value()) dropped = std::max(dropped, t->statistics->buffers_dropped_at_detach);
  }
  EXPECT_FALSE(KernelInFiles("late()"));
  EXPECT_EQ(dropped, 1u);
}

TEST_F(DetachTest, AGraphStopsTheDetachingForTheRestOfTheProcess) {
  ASSERT_TRUE(StartDetaching("1s", "2s").ok());
  // The graph callbacks are on from the start, and again after each attach.
  const std::string graph_launch = "cuptiEnableCallback:1:" + std::to_string(CUPTI_CB_DOMAIN_DRIVER_API) + ":" +
                                   std::to_string(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
  EXPECT_EQ(Count(graph_launch), 1u);
  ASSERT_TRUE(WaitFor([&] { return DetachPending(1); }));
  ApiExit();
  ASSERT_TRUE(fake_->detached());
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));
  EXPECT_EQ(Count(graph_launch), 2u);
  // A graph launched in this window: its end asks for no detach, and no
  // later one does.
  fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_API_ENTER);
  const size_t asked = Count(DomainCall(1, CUPTI_CB_DOMAIN_RUNTIME_API));
  ASSERT_TRUE(WaitFor([&] { return !KernelsOn(); }));
  ASSERT_TRUE(WaitFor([&] { return KernelsOn(); }));  // the next window
  ASSERT_TRUE(WaitFor([&] { return !KernelsOn(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ApiExit();
  EXPECT_EQ(Count(DomainCall(1, CUPTI_CB_DOMAIN_RUNTIME_API)), asked);
  EXPECT_EQ(Count("cuptiFinalize"), 1u);
  session_->Finalize("exit");
  ExpectCompleteFiles();
}

TEST_F(DetachTest, AGraphWhileADetachIsPendingKeepsCuptiAttached) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("100ms", "1h"));
  // The graph call's own exit is the next runtime exit: no detach there.
  fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_ENTER);
  fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_EXIT);
  ApiExit();
  EXPECT_FALSE(fake_->detached());
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  EXPECT_FALSE(session_->detach_pending());
  session_->Finalize("exit");
  ExpectCompleteFiles();
}

TEST_F(DetachTest, CuptiGetsNoBufferOnceADetachIsUnderWay) {
  ASSERT_NO_FATAL_FAILURE(StartAndAwaitFirstDetach("100ms", "1h"));
  // CUPTI asks for a buffer in the middle of the detach's flush (a kernel
  // of the window ending late): refused, so cuptiFinalize finds none out.
  uint8_t* got = reinterpret_cast<uint8_t*>(1);
  size_t size = 99;
  ::testing::internal::CaptureStderr();
  fake_->on_flush = [&] { got = TakeBuffer(&size); };
  ApiExit();
  fake_->on_flush = nullptr;
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(got, nullptr);
  EXPECT_EQ(size, 0u);
  EXPECT_TRUE(fake_->detached());
  EXPECT_EQ(said.find("activity buffers are in use"), std::string::npos) << said;  // not the pool's fault
  session_->Finalize("exit");
  ExpectCompleteFiles();
}

// Where cuptiFinalize would take more than cutrace's own state with it, or
// CUPTI's clock would be read between windows, CUPTI stays attached.
class StaysAttachedTest : public DetachTest, public ::testing::WithParamInterface<int> {};

TEST_P(StaysAttachedTest, WhereDetachingCannotWork) {
  std::map<std::string, std::string> vars = {
      {"CUTRACE_MODE", "continuous"}, {"CUTRACE_WINDOW", "10ms"}, {"CUTRACE_PERIOD", "1h"}};
  Config c = DetachConfig();
  switch (GetParam()) {
    case 0: c.detach_between_windows = false; break;  // CUTRACE_DETACH=0
    case 1:  // torch.profiler's Kineto in the process (then CUPTI's clock, too)
      fake_->program_client = true;
      fake_->moving_timestamps = true;
      break;
    case 2:  // CUPTI's clock (which the control thread then reads)
      c.timestamp_callback = false;
      fake_->moving_timestamps = true;
      break;
    case 3: fake_->has_enable_domain = false; break;
    case 4: {  // API records (detaching with them corrupted the heap on the H200)
      std::string error;
      c.kinds = *ParseKinds("kernel,api", &error);
      c.kinds_given = true;
      break;
    }
    default: {  // the same, CUTRACE_DETACH unset: no warning (a line at CUTRACE_LOG=info)
      std::string error;
      c.kinds = *ParseKinds("kernel,api", &error);
      c.kinds_given = true;
      c.detach_between_windows.reset();
      break;
    }
  }
  ScopedEnv env(vars);
  ::testing::internal::CaptureStderr();
  const bool started = StartSession(std::move(c)).ok();
  const std::string said = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(started) << said;
  // Only API records (a choice the user can change) get a line, with the fix.
  const size_t line = said.find("CUPTI stays attached between windows (API records are on)");
  EXPECT_EQ(line != std::string::npos, GetParam() == 4) << said;
  if (GetParam() == 4) {
    EXPECT_NE(said.find("CUTRACE_KINDS=kernel,memcpy,memset,nvtx,overhead", line), std::string::npos) << said;
    EXPECT_EQ(said.find("stays attached", said.find('\n', line)), std::string::npos) << said;  // once
  }
  ASSERT_TRUE(WaitFor([&] { return fake_->IndexOf("cuptiActivityFlushAll") >= 0 && !KernelsOn(); }));
  if (GetParam() == 3) {
    ASSERT_TRUE(WaitFor([&] { return Count(DomainCall(1, CUPTI_CB_DOMAIN_RUNTIME_API)) == 1; }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ApiExit();
  EXPECT_FALSE(fake_->detached());
  EXPECT_EQ(Count("cuptiFinalize"), 0u);
  // cuptiEnableDomain only where it was tried and CUPTI refused it; the
  // module-unload callback is back on then.
  EXPECT_EQ(Count(DomainCall(1, CUPTI_CB_DOMAIN_RUNTIME_API)), GetParam() == 3 ? 1u : 0u);
  session_->Finalize("exit");
  ExpectCompleteFiles();
}

INSTANTIATE_TEST_SUITE_P(Cases, StaysAttachedTest, ::testing::Values(0, 1, 2, 3, 4, 5));

// Continuous mode with nothing set detaches: its default kinds leave API
// records out (which the trace's header says), and CUTRACE_DETACH unset
// means "where it can".
TEST_F(DetachTest, ContinuousModeDetachesByDefault) {
  env_ = std::make_unique<ScopedEnv>(std::map<std::string, std::string>{
      {"CUTRACE_MODE", "continuous"}, {"CUTRACE_WINDOW", "300ms"}, {"CUTRACE_PERIOD", "1h"}});
  Config c = MakeConfig();
  ASSERT_FALSE(c.detach_between_windows.has_value());
  ASSERT_FALSE(c.kinds_given);
  ::testing::internal::CaptureStderr();
  const bool started = StartSession(std::move(c)).ok();
  const std::string said = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(started) << said;
  EXPECT_EQ(said.find("stays attached"), std::string::npos) << said;
  ASSERT_TRUE(WaitFor([&] { return DetachPending(1); }));
  ApiExit();
  EXPECT_TRUE(fake_->detached());
  EXPECT_EQ(Count("cuptiFinalize"), 1u);
  session_->Finalize("exit");
  ExpectCompleteFiles();
  std::vector<std::string> files = Files();
  ASSERT_FALSE(files.empty());
  auto t = LoadTrace(dir_ + "/" + files[0]);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(std::vector<std::string>(t->header.enabled_kinds().begin(), t->header.enabled_kinds().end()),
            (std::vector<std::string>{"kernel", "memcpy", "memset", "nvtx", "overhead"}));
}

}  // namespace
}  // namespace cutrace::injection
