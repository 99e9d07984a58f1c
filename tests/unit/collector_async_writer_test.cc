// AsyncWriter: batches reach the file in order, a full queue refuses batches
// and counts every record dropped, Flush waits for the disk, Stop drains.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "collector/async_writer.h"
#include "collector/trace_loader.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<TraceWriter> NewWriter(const std::string& path) {
  StatusOr<std::unique_ptr<TraceWriter>> w = TraceWriter::Create(path);
  EXPECT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE((*w)->WriteHeader(testing::SampleHeader()).ok());
  return std::move(w).value();
}

RecordBatch Storm(StringInterner& interner, size_t n, uint64_t seed) {
  return testing::LaunchStorm(interner.Intern("k"), n, seed);
}

// Options that hold at most `batches` batches in the queue.
AsyncWriterOptions AtMostBatches(size_t batches) {
  AsyncWriterOptions options;
  options.max_batches = batches;
  return options;
}

TEST(AsyncWriter, WritesEverythingInOrder) {
  testing::TempDir dir;
  StringInterner interner;
  AsyncWriter writer(NewWriter(dir.File("a.trace")), &interner);
  ASSERT_TRUE(writer.Start().ok());
  std::vector<uint64_t> expected_corr;
  for (uint64_t i = 0; i < 20; ++i) {
    RecordBatch b = Storm(interner, 100, i + 1);
    for (size_t j = 0; j < b.kernels.size(); ++j) b.kernels[j].correlation_id = i * 1000 + j;
    for (const KernelRecord& k : b.kernels) expected_corr.push_back(k.correlation_id);
    ASSERT_TRUE(writer.TryPush(std::move(b)));
    EXPECT_TRUE(b.empty());  // moved out
  }
  EXPECT_TRUE(writer.TryPush(RecordBatch{}));  // empty: accepted, ignored
  ASSERT_TRUE(writer.Post([](TraceWriter& w, StringInterner&) {
    (void)w.WriteWarning("posted");
  }));
  writer.Stop();
  EXPECT_EQ(writer.records_written(), 2000u);
  EXPECT_EQ(writer.records_dropped_queue_full(), 0u);
  ASSERT_TRUE(writer.writer()->WriteEnd(EndInfo{{}, "exit"}).ok());
  ASSERT_TRUE(writer.writer()->Close().ok());

  StatusOr<TraceData> data = LoadTrace(dir.File("a.trace"));
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_EQ(data->records.kernels.size(), expected_corr.size());
  for (size_t i = 0; i < expected_corr.size(); ++i) {
    ASSERT_EQ(data->records.kernels[i].correlation_id, expected_corr[i]);
  }
  ASSERT_EQ(data->warnings.size(), 1u);
  EXPECT_TRUE(data->clean_shutdown());
  EXPECT_FALSE(writer.TryPush(Storm(interner, 5, 1)));  // stopped: refused and counted
  EXPECT_EQ(writer.records_dropped_queue_full(), 5u);
}

TEST(AsyncWriter, FullQueueDropsAreCountedExactly) {
  testing::TempDir dir;
  StringInterner interner;
  AsyncWriter writer(NewWriter(dir.File("b.trace")), &interner, AtMostBatches(4));
  ASSERT_TRUE(writer.Start().ok());

  // Hold the writer thread inside a posted task so the queue cannot drain.
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  ASSERT_TRUE(writer.Post([&entered, go](TraceWriter&, StringInterner&) {
    entered.set_value();
    go.wait();
  }));
  entered.get_future().wait();

  for (int i = 0; i < 4; ++i) ASSERT_TRUE(writer.TryPush(Storm(interner, 10 + i, i)));
  RecordBatch refused = Storm(interner, 7, 9);
  EXPECT_FALSE(writer.TryPush(std::move(refused)));
  EXPECT_EQ(refused.kernels.size(), 7u);  // left untouched for the caller
  EXPECT_FALSE(writer.TryPush(Storm(interner, 3, 10)));
  EXPECT_EQ(writer.records_dropped_queue_full(), 10u);
  EXPECT_EQ(writer.batches_dropped(), 2u);
  EXPECT_EQ(writer.peak_queued_batches(), 4u);  // the high-water mark: full
  // Posts still get in while batches fill the queue.
  EXPECT_TRUE(writer.Post([](TraceWriter& w, StringInterner&) { (void)w.WriteWarning("late"); }));

  release.set_value();
  ASSERT_TRUE(writer.Flush(10s));
  EXPECT_EQ(writer.records_written(), 10u + 11u + 12u + 13u);
  EXPECT_TRUE(writer.TryPush(Storm(interner, 1, 11)));  // room again
  EXPECT_EQ(writer.peak_queued_batches(), 4u);           // a peak stays a peak
  writer.Stop();
  EXPECT_EQ(writer.records_written(), 47u);
  EXPECT_EQ(writer.records_dropped_queue_full(), 10u);
  ASSERT_TRUE(writer.writer()->Close().ok());
  StatusOr<TraceData> data = LoadTrace(dir.File("b.trace"));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->records.kernels.size(), 47u);
  EXPECT_EQ(data->warnings.size(), 1u);
}

TEST(AsyncWriter, ByteBoundRefusesBatches) {
  testing::TempDir dir;
  StringInterner interner;
  AsyncWriterOptions options;
  options.max_bytes = 100 * sizeof(KernelRecord);
  AsyncWriter writer(NewWriter(dir.File("c.trace")), &interner, options);
  // Not started: pushes queue up and nothing drains them.
  EXPECT_TRUE(writer.TryPush(Storm(interner, 60, 1)));
  EXPECT_FALSE(writer.TryPush(Storm(interner, 60, 2)));  // 120 records > 100
  EXPECT_TRUE(writer.TryPush(Storm(interner, 40, 3)));   // exactly 100
  EXPECT_EQ(writer.records_dropped_queue_full(), 60u);
  // A batch over the bound on its own is taken when the queue is empty.
  EXPECT_FALSE(writer.Flush(1ms));  // not running: cannot flush what is queued
  writer.Stop();                    // never started: drains on this thread
  EXPECT_EQ(writer.records_written(), 100u);
  ASSERT_TRUE(writer.writer()->Close().ok());
  StatusOr<TraceData> data = LoadTrace(dir.File("c.trace"));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->records.kernels.size(), 100u);
}

TEST(AsyncWriter, FlushMakesDataVisibleOnDisk) {
  testing::TempDir dir;
  StringInterner interner;
  AsyncWriter writer(NewWriter(dir.File("d.trace")), &interner);
  ASSERT_TRUE(writer.Start().ok());
  ASSERT_TRUE(writer.TryPush(Storm(interner, 123, 1)));
  ASSERT_TRUE(writer.Flush(10s));
  // The file is readable while the writer still runs (no end packet yet).
  StatusOr<TraceData> data = LoadTrace(dir.File("d.trace"));
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->records.kernels.size(), 123u);
  EXPECT_FALSE(data->clean_shutdown());
  EXPECT_FALSE(data->read.truncated);
  writer.Stop();
  writer.Stop();  // idempotent
}

TEST(AsyncWriter, SparesComeBackWithCapacity) {
  testing::TempDir dir;
  StringInterner interner;
  AsyncWriter writer(NewWriter(dir.File("e.trace")), &interner);
  ASSERT_TRUE(writer.Start().ok());
  RecordBatch b;
  EXPECT_FALSE(writer.TryTakeSpare(&b));
  ASSERT_TRUE(writer.TryPush(Storm(interner, 500, 1)));
  ASSERT_TRUE(writer.Flush(10s));
  ASSERT_TRUE(writer.TryTakeSpare(&b));
  EXPECT_TRUE(b.empty());
  EXPECT_GE(b.kernels.capacity(), 500u);
  writer.Stop();
}

// Many producers at once, with a small queue: every record is either
// written or counted as dropped. Run under TSan to check the locking.
TEST(AsyncWriter, ConcurrentProducersAccountForEveryRecord) {
  testing::TempDir dir;
  StringInterner interner;
  AsyncWriter writer(NewWriter(dir.File("f.trace")), &interner, AtMostBatches(3));
  ASSERT_TRUE(writer.Start().ok());
  std::atomic<uint64_t> pushed{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        RecordBatch b;
        if (!writer.TryTakeSpare(&b)) b = RecordBatch{};
        const uint32_t name = interner.Intern(std::string("k") + std::to_string(i % 17));
        b.kernels = testing::LaunchStorm(name, 20 + t, i).kernels;
        pushed += b.size();
        (void)writer.TryPush(std::move(b));
        if (i % 50 == 0) {
          (void)writer.Post([](TraceWriter& w, StringInterner&) { (void)w.WriteWarning("tick"); });
        }
      }
    });
  }
  std::thread flusher([&] {
    for (int i = 0; i < 20; ++i) (void)writer.Flush(1s);
  });
  for (std::thread& p : producers) p.join();
  flusher.join();
  writer.Stop();
  EXPECT_EQ(writer.records_written() + writer.records_dropped_queue_full(), pushed.load());
  ASSERT_TRUE(writer.status().ok());
  ASSERT_TRUE(writer.writer()->Close().ok());
  StatusOr<TraceData> data = LoadTrace(dir.File("f.trace"));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->records.kernels.size(), writer.records_written());
  EXPECT_TRUE(data->read.problems.empty());
  for (const KernelRecord& k : data->records.kernels) ASSERT_NE(k.name_id, 0u);
}

}  // namespace
}  // namespace cutrace
