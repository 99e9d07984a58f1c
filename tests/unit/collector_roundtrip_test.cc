// Writer -> reader round trips: every record kind and field survives, the
// file parses as one proto::Trace with libprotobuf, and the columns follow
// the 0/1/count rules of proto/cutrace.proto.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"
#include "tests/unit/encoded_trace.h"

namespace cutrace {
namespace {

using testing::SampleBatch;
using testing::SampleHeader;

template <typename T, typename Same>
void ExpectSameRecords(const std::vector<T>& a, const std::vector<T>& b, Same same) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same(a[i], b[i])) << "record " << i;
}

void ExpectSameBatch(const RecordBatch& a, const RecordBatch& b) {
  ExpectSameRecords(a.kernels, b.kernels, testing::SameKernel);
  ExpectSameRecords(a.memcpys, b.memcpys, testing::SameMemcpy);
  ExpectSameRecords(a.memsets, b.memsets, testing::SameMemset);
  ExpectSameRecords(a.ranges, b.ranges, testing::SameRange);
  ExpectSameRecords(a.api_calls, b.api_calls, testing::SameApi);
  ExpectSameRecords(a.syncs, b.syncs, testing::SameSync);
}

// A complete small trace in memory: header, device, two batches, counters,
// warning, statistics, end.
std::string SmallTrace(StringInterner& interner, RecordBatch* all) {
  TraceEncoder enc;
  std::string out;
  enc.EncodeHeader(SampleHeader(), &out);
  DeviceInfo d;
  d.id = 1;
  d.name = "Test GPU";
  enc.EncodeDevice(d, &out);
  RecordBatch first = SampleBatch(interner);
  enc.EncodeBatch(first, interner, &out);
  RecordBatch second = testing::LaunchStorm(interner.Intern("_Z5stormv"), 50);
  enc.EncodeBatch(second, interner, &out);
  *all = first;
  all->kernels.insert(all->kernels.end(), second.kernels.begin(), second.kernels.end());
  CounterBatchInfo c;
  c.metric_name_ids = {interner.Intern("sm__throughput.avg.pct_of_peak_sustained_elapsed")};
  c.scope = "kernel";
  c.samples.push_back(CounterSampleInfo{10, 0, 1, {42.5}, 1, 1, 0, 0, 0});
  enc.EncodeCounters(c, interner, &out);
  enc.EncodeWarning("something odd", 77, &out);
  StatsInfo s;
  s.kernels = 55;
  enc.EncodeStatistics(s, &out);
  s.kernels = 56;
  enc.EncodeStatistics(s, &out);  // the last one wins
  enc.EncodeEnd(EndInfo{{1, 2, 3}, "exit"}, &out);
  return out;
}

TEST(RoundTrip, EveryRecordKindAndField) {
  StringInterner interner;
  RecordBatch all;
  const std::string bytes = SmallTrace(interner, &all);
  StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "mem");
  ASSERT_TRUE(data.ok()) << data.status().message();
  ExpectSameBatch(all, data->records);

  EXPECT_EQ(data->header.magic(), "cutrace");
  EXPECT_EQ(data->header.host(), "testhost");
  EXPECT_EQ(data->header.cuda_runtime_version(), -1);
  ASSERT_EQ(data->header.command_line_size(), 3);
  EXPECT_EQ(data->header.command_line(2), "");
  ASSERT_EQ(data->devices.size(), 1u);
  EXPECT_EQ(data->devices[0].name, "Test GPU");
  ASSERT_TRUE(data->statistics.has_value());
  EXPECT_EQ(data->statistics->kernels, 56u);
  ASSERT_TRUE(data->clean_shutdown());
  EXPECT_EQ(data->end->reason(), "exit");
  EXPECT_EQ(data->end->end_anchor().monotonic_ns(), 3);
  ASSERT_EQ(data->warnings.size(), 1u);
  EXPECT_EQ(data->warnings[0], "something odd");
  ASSERT_EQ(data->counters.size(), 1u);
  EXPECT_DOUBLE_EQ(data->counters[0].samples(0).values(0), 42.5);
  EXPECT_EQ(data->strings.Raw(data->counters[0].metric_name_ids(0)),
            "sm__throughput.avg.pct_of_peak_sustained_elapsed");

  // Names: raw, demangled where mangled, unknown ids readable.
  const uint32_t k = interner.Find("_Z6kernelPfi");
  EXPECT_EQ(data->strings.Raw(k), "_Z6kernelPfi");
  EXPECT_EQ(data->strings.Display(k), "kernel(float*, int)");
  EXPECT_EQ(data->strings.Display(interner.Find("plain_kernel")), "plain_kernel");
  EXPECT_EQ(data->strings.Display(9999), "<unknown:9999>");
  EXPECT_EQ(data->strings.size(), interner.size());

  EXPECT_FALSE(data->read.truncated);
  EXPECT_EQ(data->read.lost_bytes, 0u);
  EXPECT_EQ(data->read.bytes_used, bytes.size());
  EXPECT_TRUE(data->read.problems.empty());
}

TEST(RoundTrip, FileParsesAsOneTraceMessage) {
  StringInterner interner;
  RecordBatch all;
  const std::string bytes = SmallTrace(interner, &all);
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  ASSERT_GE(trace.packet_size(), 8);
  EXPECT_TRUE(trace.packet(0).has_header());
  EXPECT_TRUE(trace.packet(trace.packet_size() - 1).has_end());
  // EndOfTrace.packets counts the packets before it.
  EXPECT_EQ(trace.packet(trace.packet_size() - 1).end().packets(),
            static_cast<uint64_t>(trace.packet_size() - 1));
  // Interned data comes before the first batch that uses it.
  EXPECT_TRUE(trace.packet(2).has_interned());
  EXPECT_TRUE(trace.packet(3).has_events());
  // libprotobuf re-serializes the same bytes: our encoding is canonical.
  EXPECT_EQ(trace.SerializeAsString(), bytes);
}

TEST(RoundTrip, ThroughAFile) {
  testing::TempDir dir;
  const std::string path = dir.File("t.trace");
  StringInterner interner;
  RecordBatch batch = SampleBatch(interner);
  {
    StatusOr<std::unique_ptr<TraceWriter>> w = TraceWriter::Create(path, {0600, 64});
    ASSERT_TRUE(w.ok()) << w.status().message();
    ASSERT_TRUE((*w)->WriteHeader(SampleHeader()).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*w)->WriteBatch(batch, interner).ok());
    ASSERT_TRUE((*w)->WriteEnd(EndInfo{{}, "exit"}).ok());
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_GT((*w)->bytes_written(), 0u);
    EXPECT_EQ((*w)->packets_written(), 1u + 1u + 3u + 1u);  // header, interned, 3 batches, end
    EXPECT_FALSE((*w)->WriteWarning("late").ok());
  }
  StatusOr<TraceData> data = LoadTrace(path);
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->path, path);
  ASSERT_EQ(data->records.kernels.size(), 15u);
  RecordBatch expected;
  for (int i = 0; i < 3; ++i) {
    for (auto& k : batch.kernels) expected.kernels.push_back(k);
    for (auto& m : batch.memcpys) expected.memcpys.push_back(m);
    for (auto& m : batch.memsets) expected.memsets.push_back(m);
    for (auto& r : batch.ranges) expected.ranges.push_back(r);
    for (auto& a : batch.api_calls) expected.api_calls.push_back(a);
    for (auto& s : batch.syncs) expected.syncs.push_back(s);
  }
  ExpectSameBatch(expected, data->records);
  EXPECT_TRUE(data->clean_shutdown());
}

// Values at the edges of their types, and starts far from base_ns.
TEST(RoundTrip, BigValuesAndWrapAround) {
  StringInterner interner;
  RecordBatch b;
  KernelRecord k;
  k.start_ns = UINT64_MAX - 10;
  k.end_ns = UINT64_MAX;
  k.correlation_id = UINT64_MAX;
  k.queued_ns = UINT64_MAX;
  k.graph_node_id = UINT64_MAX;
  k.name_id = interner.Intern("big");
  k.device_id = k.context_id = k.stream_id = k.graph_id = k.channel_id = UINT32_MAX;
  k.grid[0] = k.grid[1] = k.grid[2] = UINT32_MAX;
  k.block[0] = k.block[1] = k.block[2] = UINT32_MAX;
  k.registers_per_thread = k.static_shared_bytes = k.dynamic_shared_bytes = UINT32_MAX;
  k.local_bytes_per_thread = UINT32_MAX;
  k.launch_type = 255;
  b.kernels.push_back(k);
  KernelRecord k2 = k;
  k2.start_ns = 0;
  k2.end_ns = 1;
  k2.correlation_id = 0;
  b.kernels.push_back(k2);
  KernelRecord k3 = k2;
  k3.start_ns = uint64_t{1} << 63;
  k3.end_ns = k3.start_ns + 5;
  b.kernels.push_back(k3);

  TraceEncoder enc;
  std::string bytes;
  enc.EncodeHeader(SampleHeader(), &bytes);
  enc.EncodeBatch(b, interner, &bytes);
  StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "big");
  ASSERT_TRUE(data.ok()) << data.status().message();
  ExpectSameBatch(b, data->records);
}

// Records whose end precedes their start round-trip through the writer but
// the loader drops them (analysis relies on end >= start) and says so.
TEST(RoundTrip, InvertedRecordsAreDroppedWithAProblem) {
  StringInterner interner;
  RecordBatch b = testing::LaunchStorm(interner.Intern("k"), 4);
  std::swap(b.kernels[1].start_ns, b.kernels[1].end_ns);
  TraceEncoder enc;
  std::string bytes;
  enc.EncodeHeader(SampleHeader(), &bytes);
  enc.EncodeBatch(b, interner, &bytes);
  StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "inv");
  ASSERT_TRUE(data.ok());
  ASSERT_EQ(data->records.kernels.size(), 3u);
  EXPECT_EQ(data->records.kernels[1].correlation_id, b.kernels[2].correlation_id);
  ASSERT_EQ(data->read.problems.size(), 1u);
  EXPECT_NE(data->read.problems[0].find("1 records whose end precedes"), std::string::npos);
}

// Theoretical occupancy's inputs (analysis/occupancy.h): the carveout the
// driver configured is part of a kernel's shape, and the device's SM limits
// reach the reader's Device.
TEST(RoundTrip, OccupancyInputsAreWritten) {
  StringInterner interner;
  RecordBatch b = testing::LaunchStorm(interner.Intern("k"), 3);
  b.kernels[0].shared_memory_config_bytes = 102400;  // as CUPTI's sharedMemoryExecuted
  b.kernels[1].shared_memory_config_bytes = 102400;
  b.kernels[2].shared_memory_config_bytes = 233472;  // else the same launch: a shape of its own
  TraceEncoder enc;
  std::string bytes;
  enc.EncodeHeader(SampleHeader(), &bytes);
  DeviceInfo d;
  d.id = 0;
  testing::SetH200SmLimits(&d);
  enc.EncodeDevice(d, &bytes);
  enc.EncodeBatch(b, interner, &bytes);

  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  std::vector<uint32_t> carveouts;
  for (const proto::TracePacket& p : trace.packet())
    for (const proto::KernelShape& s : p.interned().kernel_shapes())
      carveouts.push_back(s.shared_memory_config_bytes());
  EXPECT_EQ(carveouts, (std::vector<uint32_t>{102400, 233472}));
  EXPECT_EQ(trace.SerializeAsString(), bytes);

  StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "occ");
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->devices.size(), 1u);
  testing::ExpectH200SmLimits(data->devices[0]);
  ASSERT_EQ(data->records.kernels.size(), 3u);
  // And the carveout comes back with each launch (the loader's decoder).
  EXPECT_EQ(data->records.kernels[0].shared_memory_config_bytes, 102400u);
  EXPECT_EQ(data->records.kernels[1].shared_memory_config_bytes, 102400u);
  EXPECT_EQ(data->records.kernels[2].shared_memory_config_bytes, 233472u);
}

TEST(RoundTrip, EmptyBatchWritesNothingButNewStrings) {
  StringInterner interner;
  TraceEncoder enc;
  std::string bytes;
  enc.EncodeHeader(SampleHeader(), &bytes);
  const size_t after_header = bytes.size();
  enc.EncodeBatch(RecordBatch{}, interner, &bytes);
  EXPECT_EQ(bytes.size(), after_header);
  interner.Intern("domain");
  enc.EncodeBatch(RecordBatch{}, interner, &bytes);
  proto::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  ASSERT_EQ(trace.packet_size(), 2);
  EXPECT_EQ(trace.packet(1).interned().strings(0).value(), "domain");
}

}  // namespace
}  // namespace cutrace
