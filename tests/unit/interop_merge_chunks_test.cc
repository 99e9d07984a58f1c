// The chunks of one run (continuous-mode windows, rotation: the same run id,
// host and pid) read as one trace (issue 21 point 3): reports add their
// kernel totals and see one rank, and merge keeps the run's correlation and
// range ids as one sequence, counts its statistics once (each chunk holds
// the process's totals so far) and takes the hours between windows for no
// skew. Against numbers worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/kernel_stats.h"
#include "analysis/rank_imbalance.h"
#include "analysis/summary.h"
#include "collector/trace_loader.h"
#include "interop/merge/trace_merge.h"
#include "interop/merge/trace_placement.h"
#include "tests/unit/chunk_writer.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace::interop {
namespace {

using cutrace::testing::kHour;
using cutrace::testing::WriteChunk;

class ChunksTest : public ::testing::Test {
 protected:
  void Write(const std::string& run, int64_t pid, uint32_t chunks) {
    for (uint32_t i = 0; i < chunks; ++i) {
      auto t = LoadTrace(WriteChunk(dir_.path(), run, pid, i, chunks));
      ASSERT_TRUE(t.ok()) << t.status().message();
      traces_.push_back(std::make_unique<TraceData>(std::move(t).value()));
    }
  }
  std::vector<const TraceData*> Set() const {
    std::vector<const TraceData*> out;
    for (const auto& t : traces_) out.push_back(t.get());
    return out;
  }
  // The traces placed for merge, with no gap over an hour between them, and
  // merged into `merged`.
  void MergeWithoutGap(MergedTrace* merged) const {
    StatusOr<PlacedTraces> placed = PlaceTraces(Set());
    ASSERT_TRUE(placed.ok()) << placed.status().message();
    StatusOr<std::string> gap = CheckTimeGap(*placed, kHour);
    ASSERT_TRUE(gap.ok()) << gap.status().message();
    EXPECT_EQ(*gap, "");
    *merged = MergePlacedTraces(*placed);
  }
  cutrace::testing::TempDir dir_;
  std::vector<std::unique_ptr<TraceData>> traces_;
};

TEST_F(ChunksTest, SevenChunksAreOneTrace) {
  Write("run-a", 100, 7);
  const std::vector<const TraceData*> set = Set();
  // Kernel totals are the sum over the chunks: 1000 + i for the step of
  // chunk i, and 40 for each of the 6 that ran a chunk after its launch.
  analysis::KernelReport k = analysis::ComputeKernelStats(set);
  ASSERT_EQ(k.kernels.size(), 1u);
  EXPECT_EQ(k.kernels[0].count, 13u);
  EXPECT_EQ(k.total_ns, 7 * 1000u + (0 + 1 + 2 + 3 + 4 + 5 + 6) + 6 * 40u);
  // One rank: no imbalance.
  EXPECT_EQ(analysis::RanksOf(set).size(), 1u);
  EXPECT_TRUE(analysis::ComputeRankImbalance(set).empty());
  analysis::SummaryReport s = analysis::ComputeSummary(set);
  EXPECT_EQ(s.ranks, 1u);
  EXPECT_TRUE(s.imbalance.empty());

  // Merge: six hours from the first window to the last are no skew.
  MergedTrace merged;
  ASSERT_NO_FATAL_FAILURE(MergeWithoutGap(&merged));
  // The process's totals so far: the last chunk's, not their sum (28).
  EXPECT_EQ(merged.statistics.kernels, 7u);
  EXPECT_EQ(merged.header.processes.size(), 1u);
  // Correlation ids stay one sequence: each launch at a chunk's end still
  // names the kernel at the next chunk's start.
  size_t joined = 0;
  for (const ApiRecord& a : merged.records.api_calls)
    for (const KernelRecord& kr : merged.records.kernels)
      if (a.correlation_id == kr.correlation_id && a.correlation_id % 10 == 5) {
        EXPECT_LT(a.start_ns, kr.start_ns);
        ++joined;
      }
  EXPECT_EQ(joined, 6u);
  // Range ids likewise: 1..7, each once.
  std::vector<uint64_t> ids;
  for (const RangeRecord& g : merged.records.ranges) ids.push_back(g.range_id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST_F(ChunksTest, TwoRunsKeepTheirIdsApart) {
  Write("run-a", 100, 7);
  Write("run-b", 200, 2);
  const std::vector<const TraceData*> set = Set();
  EXPECT_EQ(analysis::RanksOf(set).size(), 2u);
  // run-b's two windows lie inside run-a's range: no gap between the runs.
  MergedTrace merged;
  ASSERT_NO_FATAL_FAILURE(MergeWithoutGap(&merged));
  EXPECT_EQ(merged.statistics.kernels, 7u + 2u);
  EXPECT_EQ(merged.header.processes.size(), 2u);
  // run-b's correlation ids come after run-a's largest (61, the step of its
  // last chunk, which launches nothing after it): its launch at the end of
  // chunk 0 (5) becomes 66 and still names its kernel in chunk 1.
  size_t b_joined = 0;
  for (const ApiRecord& a : merged.records.api_calls)
    for (const KernelRecord& kr : merged.records.kernels)
      if (a.correlation_id == kr.correlation_id && a.correlation_id == 61 + 5) ++b_joined;
  EXPECT_EQ(b_joined, 1u);
}

}  // namespace
}  // namespace cutrace::interop
