// The bundled example trace (recorded on an H200 by `cutrace run -- ct_demo`)
// is the compatibility test of the format: every reader must keep opening it
// and finding what ct_demo is known to have done (testapps/demo.cu: 10 steps,
// each 1 H2D copy, 1 memset, 3 kernels, 2 D2H copies, 4 NVTX ranges).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collector/trace_loader.h"

namespace cutrace {
namespace {

TEST(ExampleTrace, OpensAndHoldsWhatTheDemoDid) {
  auto trace = LoadTrace(std::string(CUTRACE_SOURCE_DIR) + "/examples/demo.trace");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->header.magic(), "cutrace");
  EXPECT_TRUE(trace->clean_shutdown());
  EXPECT_FALSE(trace->read.truncated);
  EXPECT_EQ(trace->read.lost_bytes, 0u);
  ASSERT_FALSE(trace->devices.empty());
  EXPECT_NE(trace->devices[0].name.find("H200"), std::string::npos);

  const RecordBatch& r = trace->records;
  EXPECT_EQ(r.kernels.size(), 30u);
  EXPECT_EQ(r.memcpys.size(), 30u);
  EXPECT_EQ(r.memsets.size(), 10u);
  EXPECT_EQ(r.ranges.size(), 40u);

  std::map<std::string, int> kernels_by_name;
  for (const auto& k : r.kernels) kernels_by_name[trace->strings.Display(k.name_id)]++;
  EXPECT_EQ(kernels_by_name.size(), 3u);
  EXPECT_EQ(kernels_by_name["matmul_naive(float*, float*, float*, int)"], 10);
  EXPECT_EQ(kernels_by_name["reduce_sum(float*, float*, int)"], 10);
  EXPECT_EQ(kernels_by_name["preprocess(float*, int)"], 10);

  int htod = 0, dtoh = 0, pageable = 0;
  for (const auto& c : r.memcpys) {
    htod += c.copy_kind == CopyKind::kHtoD;
    dtoh += c.copy_kind == CopyKind::kDtoH;
    pageable += c.pageable();
  }
  EXPECT_EQ(htod, 10);
  EXPECT_EQ(dtoh, 20);
  EXPECT_EQ(pageable, 10);
  for (const auto& k : r.kernels) EXPECT_LT(k.start_ns, k.end_ns);
  ASSERT_TRUE(trace->statistics.has_value());
  EXPECT_EQ(trace->statistics->records_dropped_by_cupti, 0u);
  EXPECT_EQ(trace->statistics->records_dropped_queue_full, 0u);
}

}  // namespace
}  // namespace cutrace
