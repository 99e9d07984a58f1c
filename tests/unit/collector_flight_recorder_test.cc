// FlightRecorder: bounded by age and by bytes whatever the event rate, and a
// dump is a self-contained trace holding exactly the newest events, with
// names remapped into the side file's own strings.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

#include "collector/flight_recorder.h"
#include "collector/trace_loader.h"

namespace cutrace {
namespace {

RecordBatch Batch(uint32_t name, int n, uint64_t t0) {
  RecordBatch b;
  for (int i = 0; i < n; ++i) {
    KernelRecord k;
    k.name_id = name;
    k.start_ns = t0 + i * 10;
    k.end_ns = k.start_ns + 5;
    b.kernels.push_back(k);
  }
  return b;
}

TEST(FlightRecorder, KeepsOnlyTheLastSeconds) {
  FlightRecorderOptions o;
  o.max_age_ns = 1'000'000'000;
  o.max_bytes = 1u << 30;
  FlightRecorder fr(o);
  for (int s = 0; s < 10; ++s) fr.Add(Batch(1, 100, s * 1'000'000'000ull), s * 1'000'000'000ll);
  // Batches received at 8 s and 9 s are within 1 s of the newest.
  EXPECT_EQ(fr.batches(), 2u);
  EXPECT_EQ(fr.records(), 200u);
  EXPECT_EQ(fr.oldest_ns(), 8'000'000'000ll);
  EXPECT_EQ(fr.evicted_records(), 800u);
}

TEST(FlightRecorder, BytesStayUnderTheCapAtAnyRate) {
  FlightRecorderOptions o;
  o.max_bytes = 1u << 20;
  FlightRecorder fr(o);
  for (int i = 0; i < 1000; ++i) {
    fr.Add(Batch(1, 1000, i * 10000ull), i);
    ASSERT_LE(fr.bytes(), o.max_bytes);
  }
  EXPECT_GE(fr.bytes(), o.max_bytes / 2);
  // One batch bigger than the cap keeps its newest records.
  fr.Add(Batch(2, 100000, 1ull << 40), 2000);
  EXPECT_LE(fr.bytes(), o.max_bytes);
  EXPECT_EQ(fr.batches(), 1u);
}

TEST(FlightRecorder, DumpIsASelfContainedTraceOfTheNewestEvents) {
  StringInterner source;
  // Ids in the main trace: many strings before the one the ring uses.
  for (int i = 0; i < 50; ++i) source.Intern("other" + std::to_string(i));
  const uint32_t old_name = source.Intern("_Z3oldv");
  const uint32_t new_name = source.Intern("_Z6newestv");
  FlightRecorderOptions o;
  o.max_age_ns = 100;
  FlightRecorder fr(o);
  fr.Add(Batch(old_name, 5, 0), 0);
  fr.Add(Batch(new_name, 7, 1000), 1000);
  RangeRecord r;
  r.name_id = source.Intern("step");
  r.domain_id = source.Intern("app");
  RecordBatch ranges;
  ranges.ranges.push_back(r);
  fr.Add(ranges, 1050);

  char dir[] = "/tmp/cutrace-fr-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/dump.trace";
  HeaderInfo h;
  h.mode = "summary";
  h.chunk_reason = "flight-recorder:SIGUSR2";
  DeviceInfo d;
  d.name = "H200";
  auto side = SideTrace::Create(path, h, {d});
  ASSERT_TRUE(side.ok()) << side.status().message();
  ASSERT_TRUE(fr.Dump(side->get(), source).ok());
  ASSERT_TRUE((*side)->Finish({}, EndInfo{{}, "flight-recorder"}).ok());
  // The ring is kept after a dump.
  EXPECT_EQ(fr.records(), 8u);

  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->header.chunk_reason(), "flight-recorder:SIGUSR2");
  ASSERT_EQ(t->records.kernels.size(), 7u);
  EXPECT_EQ(t->strings.Display(t->records.kernels[0].name_id), "newest()");
  EXPECT_LE(t->strings.size(), 3u);  // only what the dump uses
  ASSERT_EQ(t->records.ranges.size(), 1u);
  EXPECT_EQ(t->strings.Display(t->records.ranges[0].name_id), "step");
  EXPECT_EQ(t->strings.Display(t->records.ranges[0].domain_id), "app");
  EXPECT_EQ(t->devices.size(), 1u);
  EXPECT_TRUE(t->clean_shutdown());
  // Never overwrites: a second dump to the same path fails.
  EXPECT_FALSE(SideTrace::Create(path, h, {}).ok());
  std::system((std::string("rm -rf ") + dir).c_str());
}

}  // namespace
}  // namespace cutrace
