// Stragglers (analysis/stragglers.h) over three ranks and three steps worked
// out by hand: step 0's straggler computes longer, step 1's waits in its
// all-reduce, step 2's GPU waits for its host.
#include <gtest/gtest.h>

#include <array>

#include "analysis/stragglers.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::analysis {
namespace {

using cutrace::testing::TraceBuilder;

constexpr const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// Step k of a rank: ProfilerStep#k on thread 1 over CPU [1000k, 1000k + 400);
// a gemm launched at +10 runs `gemm` ns from +`late` (50 normally), then the
// all-reduce (launched at +20) `comm` ns right after it.
void Step(TraceBuilder& t, uint64_t k, uint64_t gemm, uint64_t comm, uint64_t late = 50) {
  const uint64_t t0 = 1000 * k;
  t.Range("ProfilerStep#" + std::to_string(k), t0, t0 + 400, 1, 0);
  t.Api("cudaLaunchKernel", t0 + 10, t0 + 15, 1, 100 * k + 1);
  t.Api("ncclAllReduce", t0 + 20, t0 + 25, 1, 100 * k + 2);
  t.Kernel("gemm", t0 + late, t0 + late + gemm, 0, 7, 100 * k + 1);
  t.Kernel(kNccl, t0 + late + gemm, t0 + late + gemm + comm, 0, 20, 100 * k + 2);
}

// Two ranks of Step()s, step k from steps[k] = {gemm, comm} of rank 0, then
// of rank 1.
StatusOr<StragglerReport> TwoRanks(const std::vector<std::array<uint64_t, 4>>& steps) {
  TraceBuilder r0("r0.trace"), r1("r1.trace");
  for (uint64_t k = 0; k < steps.size(); ++k) {
    Step(r0, k, steps[k][0], steps[k][1]);
    Step(r1, k, steps[k][2], steps[k][3]);
  }
  const TraceData* set[] = {r0.get(), r1.get()};
  return FindStragglers(TraceSet(set), "ProfilerStep*");
}

TEST(Stragglers, SlowestRankExcessAndCause) {
  // Durations (window = [1000k, max(CPU end, GPU end))):
  //   step 0: 450, 450, 650 (rank 2: gemm 500)     -> rank 2, +200, compute
  //   step 1: 450, 650, 450 (rank 1: comm 300)     -> rank 1, +200, comm
  //   step 2: 650, 450, 450 (rank 0: gemm at +250) -> rank 0, +200, idle (250 vs 50)
  TraceBuilder r0("r0.trace"), r1("r1.trace"), r2("r2.trace");
  Step(r0, 0, 300, 100);
  Step(r1, 0, 300, 100);
  Step(r2, 0, 500, 100);
  Step(r0, 1, 300, 100);
  Step(r1, 1, 300, 300);
  Step(r2, 1, 300, 100);
  Step(r0, 2, 300, 100, 250);
  Step(r1, 2, 300, 100);
  Step(r2, 2, 300, 100);
  const TraceData* set[] = {r0.get(), r1.get(), r2.get()};
  StatusOr<StragglerReport> report = FindStragglers(TraceSet(set), "ProfilerStep*");
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->steps.size(), 3u);
  const StepStraggler& s0 = report->steps[0];
  EXPECT_EQ(s0.slowest, 2u);
  EXPECT_EQ(s0.duration_ns, 650u);
  EXPECT_EQ(s0.median_ns, 450u);
  EXPECT_EQ(s0.excess_ns, 200u);
  EXPECT_EQ(s0.compute_excess_ns, 200);
  EXPECT_EQ(s0.comm_excess_ns, 0);
  EXPECT_EQ(s0.idle_excess_ns, 0);
  EXPECT_EQ(s0.cause, "compute");
  EXPECT_EQ(s0.ranks[0].compute_ns, 300u);
  EXPECT_EQ(s0.ranks[0].comm_ns, 100u);
  EXPECT_EQ(s0.ranks[0].idle_ns, 50u);

  const StepStraggler& s1 = report->steps[1];
  EXPECT_EQ(s1.slowest, 1u);
  EXPECT_EQ(s1.excess_ns, 200u);
  EXPECT_EQ(s1.comm_excess_ns, 200);
  EXPECT_EQ(s1.cause, "comm");

  const StepStraggler& s2 = report->steps[2];
  EXPECT_EQ(s2.slowest, 0u);
  EXPECT_EQ(s2.excess_ns, 200u);
  EXPECT_EQ(s2.ranks[0].idle_ns, 250u);
  EXPECT_EQ(s2.idle_excess_ns, 200);
  EXPECT_EQ(s2.compute_excess_ns, 0);
  EXPECT_EQ(s2.cause, "idle");
  EXPECT_EQ(report->ranks, (std::vector<std::string>{"r0.trace", "r1.trace", "r2.trace"}));
}

// A synchronous step on two ranks: rank 1's host is late (its gemm starts
// at +250, not +50); rank 0's all-reduce starts after its gemm (+350) and
// spins until rank 1's gemm is done and both finish together at +600.
//   rank 0: compute 300, comm 250, idle 50;  rank 1: compute 300, comm 50,
//   idle 250. Both windows are 600: the "slowest" is rank 0 (ties: the
//   first), by comm (+100 over the median 150, idle -100), which names the
//   wrong rank; the rank waited for is rank 1 (least comm), by 200 ns.
TEST(Stragglers, TheRankWaitedForHasTheLeastCommunication) {
  TraceBuilder r0("r0.trace"), r1("r1.trace");
  for (uint64_t k = 0; k < 3; ++k) {
    const uint64_t t0 = 1000 * k;
    for (TraceBuilder* t : {&r0, &r1}) {
      const bool late = t == &r1;
      t->Range("ProfilerStep#" + std::to_string(k), t0, t0 + 400, 1, 0);
      t->Api("cudaLaunchKernel", t0 + 10, t0 + 15, 1, 100 * k + 1);
      t->Api("ncclAllReduce", t0 + 20, t0 + 25, 1, 100 * k + 2);
      const uint64_t g = t0 + (late ? 250 : 50);
      t->Kernel("gemm", g, g + 300, 0, 7, 100 * k + 1);
      t->Kernel(kNccl, g + 300, t0 + 600, 0, 20, 100 * k + 2);
    }
  }
  const TraceData* set[] = {r0.get(), r1.get()};
  StatusOr<StragglerReport> report = FindStragglers(TraceSet(set), "ProfilerStep*");
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->steps.size(), 3u);
  for (const StepStraggler& s : report->steps) {
    EXPECT_EQ(s.ranks[0].comm_ns, 250u);
    EXPECT_EQ(s.ranks[1].comm_ns, 50u);
    EXPECT_EQ(s.ranks[1].idle_ns, 250u);
    EXPECT_EQ(s.slowest, 0u);
    EXPECT_EQ(s.cause, "comm");
    EXPECT_EQ(s.waited_for, 1);
    EXPECT_EQ(s.wait_ns, 200u);
  }
  EXPECT_EQ(report->waited_for, (std::vector<size_t>{0, 3}));
  // Without communication (or the same on every rank) nobody is named.
  report = TwoRanks({{300, 0, 500, 0}, {300, 100, 500, 100}});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->steps[0].waited_for, -1);
  EXPECT_EQ(report->steps[1].waited_for, -1);
  EXPECT_EQ(report->waited_for, (std::vector<size_t>{0, 0}));
  // Jitter names nobody: all-reduces of 100 and 80 ns in windows of 450 and
  // 430 ns: 20 ns is under 5% of the median 440 (22 ns); 100 and 70 (step
  // 1, median 435): 30 ns is over it. A rank without communication in the
  // step names nobody either (step 2).
  report = TwoRanks({{300, 100, 300, 80}, {300, 100, 300, 70}, {300, 100, 300, 0}});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->steps[0].median_ns, 440u);  // (450 + 430) / 2
  EXPECT_EQ(report->steps[0].waited_for, -1);
  EXPECT_EQ(report->steps[1].waited_for, 1);
  EXPECT_EQ(report->steps[1].wait_ns, 30u);
  EXPECT_EQ(report->steps[2].waited_for, -1);
}

TEST(Stragglers, StepsEveryRankHasAndErrors) {
  TraceBuilder r0("r0.trace"), r1("r1.trace");
  Step(r0, 0, 300, 100);
  Step(r0, 1, 300, 100);
  Step(r1, 0, 300, 100);
  const TraceData* both[] = {r0.get(), r1.get()};
  StatusOr<StragglerReport> report = FindStragglers(TraceSet(both), "ProfilerStep*");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->steps.size(), 1u);
  EXPECT_EQ(report->steps_of, (std::vector<size_t>{2, 1}));
  // Two ranks of equal steps: the median is their mean, no excess.
  EXPECT_EQ(report->steps[0].excess_ns, 0u);
  EXPECT_EQ(report->steps[0].cause, "none");

  const TraceData* one[] = {r0.get()};
  EXPECT_FALSE(FindStragglers(TraceSet(one), "ProfilerStep*").ok());
  StatusOr<StragglerReport> none = FindStragglers(TraceSet(both), "nosuch");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no NVTX range matches 'nosuch'"), std::string::npos);
}

// Two ranks merged into one file (threads 1 and 2, devices 0 and 1, ids
// apart), rank 1's steps 500 ns after rank 0's: the same figures as the two
// files apart. Rank 1's step 1 computes 500, not 300.
TEST(Stragglers, EachProcessOfAMergedFileIsARank) {
  TraceBuilder apart0("r0.trace"), apart1("r1.trace"), merged("all.trace");
  auto step = [](TraceBuilder& t, uint64_t k, uint64_t gemm, uint64_t thread, uint32_t device,
                 uint64_t shift, uint64_t ids) {
    const uint64_t t0 = 1000 * k + shift;
    t.Range("ProfilerStep#" + std::to_string(k), t0, t0 + 400, thread, 0);
    t.Api("cudaLaunchKernel", t0 + 10, t0 + 15, thread, ids + 100 * k + 1);
    t.Api("ncclAllReduce", t0 + 20, t0 + 25, thread, ids + 100 * k + 2);
    t.Kernel("gemm", t0 + 50, t0 + 50 + gemm, device, 7, ids + 100 * k + 1);
    t.Kernel(kNccl, t0 + 50 + gemm, t0 + 150 + gemm, device, 20, ids + 100 * k + 2);
  };
  for (uint64_t k = 0; k < 3; ++k) {
    const uint64_t gemm1 = k == 1 ? 500 : 300;
    step(apart0, k, 300, 1, 0, 0, 0);
    step(apart1, k, gemm1, 1, 0, 500, 0);
    step(merged, k, 300, 1, 0, 0, 0);
    step(merged, k, gemm1, 2, 1, 500, 1000);
  }
  for (int r : {1, 0})  // listed out of order: the report puts rank 0 first
    merged.Process(0, std::to_string(r), static_cast<uint64_t>(r + 1), static_cast<uint32_t>(r));
  const TraceData* one[] = {merged.get()};
  StatusOr<StragglerReport> got = FindStragglers(TraceSet(one), "ProfilerStep*");
  ASSERT_TRUE(got.ok()) << got.status().message();
  const TraceData* two[] = {apart0.get(), apart1.get()};
  StatusOr<StragglerReport> want = FindStragglers(TraceSet(two), "ProfilerStep*");
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(got->ranks, (std::vector<std::string>{"all.trace: rank 0", "all.trace: rank 1"}));
  EXPECT_EQ(got->rank_ids, (std::vector<long>{0, 1}));
  ASSERT_EQ(got->steps.size(), 3u);
  for (size_t k = 0; k < 3; ++k)
    for (size_t r = 0; r < 2; ++r) {
      const StepOnRank &g = got->steps[k].ranks[r], &w = want->steps[k].ranks[r];
      EXPECT_EQ(g.duration_ns(), w.duration_ns()) << k << r;
      EXPECT_EQ(g.compute_ns, w.compute_ns) << k << r;
      EXPECT_EQ(g.comm_ns, w.comm_ns) << k << r;
      EXPECT_EQ(g.idle_ns, w.idle_ns) << k << r;
    }
  EXPECT_EQ(got->steps[1].slowest, 1u);
  EXPECT_EQ(got->steps[1].ranks[1].compute_ns, 500u);
  EXPECT_EQ(got->steps[1].ranks[0].compute_ns, 300u);
  EXPECT_EQ(got->steps[1].ranks[0].idle_ns, 50u);  // rank 1's work is not rank 0's
}

// Files given as rank1 before rank0 (a glob's order): ranks by the headers'.
// Rank 1 lacks ProfilerStep#0: step N is matched with step N, not the k-th
// with the k-th. Steps inside an enclosing range are still the steps.
TEST(Stragglers, RanksInTheirOrderStepsByNumberAndInsideAnEnclosingRange) {
  TraceBuilder r0("a.trace"), r1("b.trace");
  r0.data().header.set_rank("0");
  r1.data().header.set_rank("1");
  for (uint64_t k = 0; k < 3; ++k) Step(r0, k, 300, 100);
  for (uint64_t k = 1; k < 3; ++k) Step(r1, k, k == 2 ? 600 : 300, 100);
  r1.Range("train", 0, 5000, 1, 0);
  for (RangeRecord& r : r1.data().records.ranges)
    if (r.name_id != r1.Name("train")) r.depth = 1;
  const TraceData* set[] = {r1.get(), r0.get()};
  StatusOr<StragglerReport> report = FindStragglers(TraceSet(set), "ProfilerStep*");
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ranks, (std::vector<std::string>{"a.trace", "b.trace"}));
  EXPECT_EQ(report->steps_of, (std::vector<size_t>{3, 2}));
  EXPECT_TRUE(report->by_number);
  ASSERT_EQ(report->steps.size(), 2u);
  EXPECT_EQ(report->steps[0].step, 1u);
  EXPECT_EQ(report->steps[0].excess_ns, 0u);
  EXPECT_EQ(report->steps[1].step, 2u);
  EXPECT_EQ(report->steps[1].slowest, 1u);  // b.trace, rank 1: gemm 600
  EXPECT_EQ(report->steps[1].compute_excess_ns, 150);  // 600 - median (300 + 600) / 2
  // Numbers no step shares (rank 1's counted from 100): by position again.
  for (RangeRecord& r : r1.data().records.ranges)
    if (r.name_id != r1.Name("train"))
      r.name_id = r1.Name("ProfilerStep#" + std::to_string(r.start_ns / 1000 + 100));
  report = FindStragglers(TraceSet(set), "ProfilerStep*");
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_FALSE(report->by_number);
  EXPECT_EQ(report->steps.size(), 2u);  // the first two of each
}

}  // namespace
}  // namespace cutrace::analysis
