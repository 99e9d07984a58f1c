// Communication kernels as their own class (analysis/comm_kernels.h,
// device_timeline.h): comm, comm ∩ compute and the exposed rest, against a
// timeline worked out by hand, whole and through a window.
#include <gtest/gtest.h>

#include <memory>

#include "analysis/comm_kernels.h"
#include "analysis/device_timeline.h"
#include "analysis/report_engine.h"
#include "tests/unit/analysis_expect.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::ExpectOverlap;
using cutrace::testing::TraceBuilder;

// One device, ns:
//   compute  k1 [0,100)                    k2 [300,400)
//   copy        [20,40)    [150,250)
//   comm     AllReduce [50,200)               AllGather [350,450)
// compute = 100 + 100 = 200; copy = 20 + 100 = 120; comm = 150 + 100 = 250
// busy = [0,250) + [300,450) = 400 of a 450 span; idle 50
// compute ∩ copy = [20,40) = 20 (the comm kernel under the copy is no compute)
// comm ∩ compute = [50,100) + [350,400) = 100: hidden; exposed 150; 40 %
void Build(TraceBuilder& t) {
  t.Kernel("k1", 0, 100);
  t.Copy(CopyKind::kHtoD, 20, 40, 64);
  t.Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 50, 200,
           0, /*stream=*/9);
  t.Copy(CopyKind::kDtoH, 150, 250, 64);
  t.Kernel("k2", 300, 400);
  t.Kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", 350, 450, 0, /*stream=*/9);
}

TimelineReport Sweep(const TraceBuilder& t, std::shared_ptr<const CommClassifier> comm = nullptr,
                     std::shared_ptr<const Window> window = nullptr) {
  const TraceData* one[] = {t.get()};
  ReportParts parts{.timeline = true};
  parts.comm = std::move(comm);
  return EngineOver(TraceSet(one), parts, {}, std::move(window))->Timeline();
}

TEST(Comm, OverlapWithComputeExact) {
  TraceBuilder t;
  Build(t);
  TimelineReport r = Sweep(t);
  ASSERT_EQ(r.devices.size(), 1u);
  ExpectOverlap(r.devices[0], {.span = 450,
                               .busy = 400,
                               .idle = 50,
                               .compute = 200,
                               .copy = 120,
                               .overlap = 20,
                               .compute_only = 180,
                               .copy_only = 100,
                               .ops = 6,
                               .comm = 250,
                               .comm_only = 150,
                               .comm_compute_overlap = 100});
  EXPECT_DOUBLE_EQ(r.devices[0].comm_hidden_pct(), 40.0);
}

TEST(Comm, DeviceWithoutCommKeepsItsFigures) {
  // A second device with no communication in a trace that has some: its
  // overlap is still compute ∩ copy, its comm figures zero.
  TraceBuilder t;
  Build(t);
  t.Kernel("k", 0, 100, /*device=*/1);
  t.Copy(CopyKind::kHtoD, 50, 150, 8, /*device=*/1);
  TimelineReport r = Sweep(t);
  ASSERT_EQ(r.devices.size(), 2u);
  ExpectOverlap(r.devices[1],
                {.busy = 150, .overlap = 50, .comm = 0, .comm_only = 0, .comm_compute_overlap = 0});
  EXPECT_EQ(r.devices[1].comm_hidden_pct(), 0.0);
  EXPECT_EQ(r.devices[0].comm_ns, 250u);
}

TEST(Comm, InsideAWindow) {
  // Window [60, 380): compute [60,100) + [300,380) = 120; copy [150,250) =
  // 100; comm [60,200) + [350,380) = 170; comm ∩ compute [60,100) +
  // [350,380) = 70; busy [60,250) + [300,380) = 270 of 320.
  TraceBuilder t;
  Build(t);
  auto window = std::make_shared<Window>();
  window->active = true;
  window->parts = {TimeSpan{60, 380}};
  TimelineReport r = Sweep(t, nullptr, window);
  ASSERT_EQ(r.devices.size(), 1u);
  ExpectOverlap(r.devices[0], {.span = 320,
                               .busy = 270,
                               .compute = 120,
                               .copy = 100,
                               .overlap = 0,
                               .comm = 170,
                               .comm_only = 100,
                               .comm_compute_overlap = 70});
}

TEST(Comm, PatternAddsKernels) {
  // Without a pattern the framework's own collective is compute: busy 300,
  // compute 300 (overlapping kernels count once). With one, it is comm,
  // half of it under the other kernel.
  TraceBuilder t;
  t.Kernel("gemm", 0, 200);
  t.Kernel("my_allreduce_kernel<float>", 100, 300);
  TimelineReport plain = Sweep(t);
  EXPECT_EQ(plain.devices[0].compute_ns, 300u);
  EXPECT_EQ(plain.devices[0].comm_ns, 0u);
  auto pattern = CommClassifier::WithPattern("allreduce|all_gather");
  ASSERT_TRUE(pattern.ok());
  TimelineReport with = Sweep(t, *pattern);
  EXPECT_EQ(with.devices[0].compute_ns, 200u);
  EXPECT_EQ(with.devices[0].comm_ns, 200u);
  EXPECT_EQ(with.devices[0].comm_compute_overlap_ns, 100u);
  EXPECT_EQ(with.devices[0].comm_only_ns, 100u);
  EXPECT_EQ(with.devices[0].busy_ns, 300u);
}

TEST(Comm, Classifier) {
  const CommClassifier& builtin = *BuiltinComm();
  EXPECT_TRUE(builtin.IsComm("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_TRUE(builtin.IsComm("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(builtin.IsComm("void nvshmemi_transfer_rma_kernel<int>(int*)"));
  EXPECT_FALSE(builtin.IsComm("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(builtin.IsComm("NcclLikeButNot"));
  EXPECT_FALSE(builtin.IsComm(""));
  auto bad = CommClassifier::WithPattern("(unclosed");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a regex: (unclosed"), std::string::npos);
  EXPECT_EQ(bad.status().message().find('\n'), std::string::npos);
  // A pattern that cannot match within the first kMaxMatchedChars: a
  // hostile name is cut, not matched to its end.
  auto tail = CommClassifier::WithPattern("x$");
  ASSERT_TRUE(tail.ok());
  EXPECT_TRUE((*tail)->IsComm("abcx"));
  EXPECT_FALSE((*tail)->IsComm(std::string(CommClassifier::kMaxMatchedChars, 'a') + "x"));
}

}  // namespace
}  // namespace cutrace::analysis
