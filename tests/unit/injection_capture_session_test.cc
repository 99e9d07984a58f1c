// Capture ranges in a Session against the fake CUPTI: the program's
// cudaProfilerStart/Stop and NVTX calls arrive as CUPTI callbacks, turn the
// kinds on and off, and leave one chunk per range whose header and end say
// what opened and closed it; a range that never opens leaves no trace.
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <generated_nvtx_meta.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collector/trace_loader.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

class CaptureSessionTest : public InjectionSessionTest {
 protected:
  Status StartCapturing(std::map<std::string, std::string> vars) {
    env_ = std::make_unique<ScopedEnv>(std::move(vars));
    return StartSession(MakeConfig());
  }
  void TearDown() override {
    InjectionSessionTest::TearDown();
    env_.reset();
  }
  bool KernelsOn() { return fake_->KindsOn().count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1; }
  void ProfilerStart() {
    fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, CUPTI_API_ENTER);
    // The driver call inside it, then the runtime call's exit.
    fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, CUPTI_API_ENTER);
    fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, CUPTI_API_EXIT);
    fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, CUPTI_API_EXIT);
  }
  void ProfilerStop() {
    fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, CUPTI_API_ENTER);
    fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, CUPTI_API_ENTER);
    fake_->CallApi(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, CUPTI_API_EXIT);
    fake_->CallApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, CUPTI_API_EXIT);
  }
  void Push(const char* name) {
    nvtxRangePushA_params p{name};
    fake_->CallNvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &p);
  }
  void Pop() {
    nvtxRangePop_params p{nullptr};
    fake_->CallNvtx(CUPTI_CBID_NVTX_nvtxRangePop, &p);
  }
  void StartRange(const char* name, nvtxRangeId_t id) {
    nvtxRangeStartA_params p{name};
    fake_->CallNvtx(CUPTI_CBID_NVTX_nvtxRangeStartA, &p, &id);
  }
  void EndRange(nvtxRangeId_t id) {
    nvtxRangeEnd_params p{id};
    fake_->CallNvtx(CUPTI_CBID_NVTX_nvtxRangeEnd, &p);
  }
  // The kernel CUPTI hands over at the next flush (a range's end).
  void KernelAtNextFlush(const char* name, uint64_t start) {
    pending_name_ = name;
    pending_start_ = start;
    if (!fake_->on_flush) {
      fake_->on_flush = [this] {
        if (pending_name_ == nullptr) return;
        const char* n = std::exchange(pending_name_, nullptr);
        DeliverBuffer([&](BufferWriter& w) { w.Add(Kernel(n, pending_start_, pending_start_ + 100, 1)); });
      };
    }
  }
  const char* pending_name_ = nullptr;
  uint64_t pending_start_ = 0;
  struct Chunk {
    std::string file;
    std::vector<std::string> kernels;
    std::vector<uint32_t> kernel_correlations;
    std::vector<std::pair<std::string, uint32_t>> api_calls;  // name, correlation id
    std::string opened_by;
    std::string closed_by;
  };
  std::vector<Chunk> Chunks() {
    std::vector<Chunk> chunks;
    for (const std::string& f : Files()) {
      auto t = LoadTrace(dir_ + "/" + f);
      EXPECT_TRUE(t.ok()) << f;
      if (!t.ok()) continue;
      Chunk c;
      c.file = f;
      for (const auto& k : t->records.kernels) {
        c.kernels.push_back(t->strings.Display(k.name_id));
        c.kernel_correlations.push_back(k.correlation_id);
      }
      for (const auto& a : t->records.api_calls) c.api_calls.emplace_back(t->strings.Display(a.name_id), a.correlation_id);
      c.opened_by = t->header.chunk_reason();
      c.closed_by = t->end ? t->end->reason() : "(cut short)";
      chunks.push_back(std::move(c));
    }
    return chunks;
  }
  static bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
  std::unique_ptr<ScopedEnv> env_;
};

TEST_F(CaptureSessionTest, ProfilerApiRangeIsItsOwnChunk) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_CAPTURE_RANGE", "cudaProfilerApi"}}).ok());
  // Nothing is on before the range: no kind that costs a launch.
  EXPECT_FALSE(KernelsOn());
  EXPECT_EQ(EnabledKinds(), (std::set<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT}));
  ProfilerStop();  // unmatched: nothing
  ProfilerStart();
  EXPECT_TRUE(KernelsOn());
  KernelAtNextFlush("inside", 5000);
  std::vector<std::string> calls = fake_->Calls();
  const auto syncs_before = std::count(calls.begin(), calls.end(), "cuCtxSynchronize");
  ProfilerStop();
  EXPECT_FALSE(KernelsOn());
  calls = fake_->Calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "cuCtxSynchronize"), syncs_before + 1);
  // stop (the default): a second range never opens.
  ProfilerStart();
  EXPECT_FALSE(KernelsOn());
  session_->Finalize("exit");
  std::vector<Chunk> chunks = Chunks();
  ASSERT_EQ(chunks.size(), 1u);  // chunk 0, the placeholder, is gone
  EXPECT_TRUE(Has(chunks[0].file, ".1.trace")) << chunks[0].file;
  EXPECT_EQ(chunks[0].kernels, std::vector<std::string>{"inside"});
  EXPECT_TRUE(Has(chunks[0].opened_by, "capture-range: cudaProfilerStart on thread")) << chunks[0].opened_by;
  EXPECT_TRUE(Has(chunks[0].closed_by, "capture-range: cudaProfilerStop on thread")) << chunks[0].closed_by;
}

// Issue 20: a captured chunk held its kernels and no API record. The range
// opens once CUDA runs, where CUPTI 13 takes per-call API enables and
// records nothing (FakeCupti::cuda_running): the API calls must go on so
// that they record, and off again at the range's end.
TEST_F(CaptureSessionTest, ProfilerApiRangeRecordsTheLaunchCalls) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_CAPTURE_RANGE", "cudaProfilerApi"}}).ok());
  const uint32_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  const uint32_t get_device = CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020;
  EXPECT_FALSE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_RUNTIME, launch));
  EXPECT_FALSE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  ProfilerStart();
  EXPECT_TRUE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_RUNTIME, launch));
  EXPECT_TRUE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  // What CUPTI hands over at the range's end: the launch call and its
  // kernel (correlation 7), and a call cutrace does not record (8).
  auto delivered = std::make_shared<bool>(false);
  fake_->on_flush = [this, launch, get_device, delivered] {
    if (std::exchange(*delivered, true)) return;
    DeliverBuffer([&](BufferWriter& w) {
      w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, launch, 4000, 4100, 7));
      w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, get_device, 4200, 4210, 8));
      w.Add(Kernel("inside", 5000, 5100, 7));
    });
  };
  ProfilerStop();
  EXPECT_FALSE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_RUNTIME, launch));
  EXPECT_FALSE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  session_->Finalize("exit");
  std::vector<Chunk> chunks = Chunks();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].kernel_correlations, std::vector<uint32_t>{7});
  ASSERT_EQ(chunks[0].api_calls.size(), 1u);
  EXPECT_EQ(chunks[0].api_calls[0].second, 7u);
  EXPECT_TRUE(Has(chunks[0].api_calls[0].first, "cudaLaunchKernel")) << chunks[0].api_calls[0].first;
}

TEST_F(CaptureSessionTest, NvtxRepeatGivesOneChunkPerOutermostRangeUpToTheLimit) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_CAPTURE_RANGE", "nvtx:step"}, {"CUTRACE_CAPTURE_RANGE_END", "repeat:3"}}).ok());
  Pop();  // unmatched
  Push("setup");
  Pop();
  EXPECT_FALSE(KernelsOn());
  for (int step = 0; step < 5; ++step) {
    Push("step");
    EXPECT_EQ(KernelsOn(), step < 3) << step;
    Push("step");  // nested: inside, opens nothing
    Push("forward");
    Pop();
    Pop();
    if (step < 3) {
      EXPECT_TRUE(KernelsOn());
      static const char* const kNames[] = {"k0", "k1", "k2"};
      // Every range's API calls record, not the first one's only.
      EXPECT_TRUE(fake_->RecordsApi(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000))
          << step;
      KernelAtNextFlush(kNames[step], 1000 * (step + 1));
    }
    Pop();
    EXPECT_FALSE(KernelsOn());
  }
  session_->Finalize("exit");
  std::vector<Chunk> chunks = Chunks();
  ASSERT_EQ(chunks.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(chunks[i].kernels, std::vector<std::string>{"k" + std::to_string(i)}) << chunks[i].file;
    EXPECT_TRUE(Has(chunks[i].opened_by, "nvtx push 'step'")) << chunks[i].opened_by;
    EXPECT_TRUE(Has(chunks[i].closed_by, "nvtx pop 'step'")) << chunks[i].closed_by;
  }
}

TEST_F(CaptureSessionTest, StartEndRangeEndedOnAnotherThreadCloses) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_CAPTURE_RANGE", "nvtx:load"}}).ok());
  StartRange("load", 41);
  EXPECT_TRUE(KernelsOn());
  // A pop on this thread, or the end of another id: the range stays open.
  Pop();
  EndRange(40);
  EXPECT_TRUE(KernelsOn());
  KernelAtNextFlush("loader", 7000);
  std::thread([&] { EndRange(41); }).join();
  EXPECT_FALSE(KernelsOn());
  session_->Finalize("exit");
  std::vector<Chunk> chunks = Chunks();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].kernels, std::vector<std::string>{"loader"});
  EXPECT_TRUE(Has(chunks[0].closed_by, "nvtx end 'load' on thread")) << chunks[0].closed_by;
  // The end came from the other thread, whose id is not this one's.
  EXPECT_FALSE(Has(chunks[0].closed_by, "thread " + std::to_string(::syscall(SYS_gettid)))) << chunks[0].closed_by;
}

TEST_F(CaptureSessionTest, RangeOpenAtExitEndsWithTheProcess) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_CAPTURE_RANGE", "nvtx:step"}}).ok());
  Push("step");
  DeliverBuffer([&](BufferWriter& w) { w.Add(Kernel("late", 100, 200, 1)); });
  session_->Finalize("exit");
  std::vector<Chunk> chunks = Chunks();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].kernels, std::vector<std::string>{"late"});
  EXPECT_EQ(chunks[0].closed_by, "exit");
}

TEST_F(CaptureSessionTest, RangeThatNeverOpensLeavesNoTrace) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_CAPTURE_RANGE", "nvtx:step"}}).ok());
  Push("steps");  // a near miss
  Pop();
  EXPECT_FALSE(KernelsOn());
  EXPECT_EQ(Files().size(), 1u);  // the placeholder, while the program runs
  session_->Finalize("exit");
  EXPECT_TRUE(Files().empty());
}

TEST_F(CaptureSessionTest, DurationAloneRecordsOneTimedWindow) {
  ASSERT_TRUE(StartCapturing({{"CUTRACE_DURATION", "200ms"}}).ok());
  EXPECT_TRUE(KernelsOn());  // no trigger, no delay: from the start
  for (int i = 0; i < 300 && KernelsOn(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(KernelsOn());
  session_->Finalize("exit");
  std::vector<Chunk> chunks = Chunks();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].opened_by, "capture-range: start");
  EXPECT_EQ(chunks[0].closed_by, "capture-range: duration 200ms elapsed");
}

}  // namespace
}  // namespace cutrace::injection
