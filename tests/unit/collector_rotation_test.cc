// ChunkSeries: chunk names, rotation by size and time, every chunk a
// self-contained trace (its own strings, shapes, devices and end marker),
// the header's chunk fields, and the disk cap deleting the oldest first.
// Also the AsyncWriter hooks that drive it from the writer thread.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "collector/async_writer.h"
#include "collector/rotation.h"
#include "collector/trace_loader.h"

namespace cutrace {
namespace {

class TempDir {
 public:
  TempDir() {
    char t[] = "/tmp/cutrace-rot-XXXXXX";
    path_ = ::mkdtemp(t);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool Exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

RecordBatch Kernels(StringInterner& in, const std::string& name, int n, uint64_t t0) {
  RecordBatch b;
  const uint32_t id = in.Intern(name);
  for (int i = 0; i < n; ++i) {
    KernelRecord k;
    k.name_id = id;
    k.start_ns = t0 + i * 1000;
    k.end_ns = k.start_ns + 500;
    k.grid[0] = 1;
    b.kernels.push_back(k);
  }
  return b;
}

TEST(ChunkPath, NumbersBeforeTheExtension) {
  EXPECT_EQ(ChunkPath("/d/run.trace", 0), "/d/run.trace");
  EXPECT_EQ(ChunkPath("/d/run.trace", 3), "/d/run.3.trace");
  EXPECT_EQ(ChunkPath("/d.x/run", 2), "/d.x/run.2");
  EXPECT_EQ(ChunkPath("run.trace", 1), "run.1.trace");
}

TEST(ChunkSeries, EachChunkIsSelfContainedAndNamesItsPredecessor) {
  TempDir dir;
  const std::string first = dir.path() + "/run.trace";
  HeaderInfo h;
  h.producer = "test";
  h.run_id = "r1";
  h.mode = "trace";
  RotationOptions o;
  o.max_file_bytes = 1;  // every check is due
  ChunkSeries series(first, h, o);
  StringInterner interner;
  auto w0 = TraceWriter::Create(first).value();
  ASSERT_TRUE(w0->WriteHeader(series.FirstHeader()).ok());
  series.AdoptFirst(0);
  DeviceInfo dev;
  dev.id = 0;
  dev.name = "H200";
  series.AddDevice(dev);
  ASSERT_TRUE(w0->WriteDevice(dev).ok());
  ASSERT_TRUE(w0->WriteBatch(Kernels(interner, "_Z1av", 10, 0), interner).ok());
  EXPECT_TRUE(series.Due(*w0, 0));
  StatsInfo stats;
  stats.kernels = 10;
  ASSERT_TRUE(series.Finish(w0.get(), stats, EndInfo{{}, "rotate"}).ok());
  auto w1 = series.OpenNext(interner, "size", 5);
  ASSERT_TRUE(w1.ok()) << w1.status().message();
  // The same kernel name again: the new chunk must define it itself.
  ASSERT_TRUE((*w1)->WriteBatch(Kernels(interner, "_Z1av", 5, 100000), interner).ok());
  ASSERT_TRUE(series.Finish(w1->get(), stats, EndInfo{{}, "exit"}).ok());

  auto c0 = LoadTrace(first);
  auto c1 = LoadTrace(dir.path() + "/run.1.trace");
  ASSERT_TRUE(c0.ok() && c1.ok());
  EXPECT_EQ(c0->header.chunk_index(), 0u);
  EXPECT_EQ(c0->end->reason(), "rotate");
  EXPECT_EQ(c1->header.chunk_index(), 1u);
  EXPECT_EQ(c1->header.previous_chunk(), "run.trace");
  EXPECT_EQ(c1->header.chunk_reason(), "size");
  EXPECT_EQ(c1->header.run_id(), "r1");
  EXPECT_EQ(c1->header.rotation().max_file_bytes(), 1u);
  ASSERT_EQ(c1->devices.size(), 1u);
  EXPECT_EQ(c1->devices[0].name, "H200");
  ASSERT_EQ(c1->records.kernels.size(), 5u);
  EXPECT_EQ(c1->strings.Display(c1->records.kernels[0].name_id), "a()");
  EXPECT_EQ(c1->records.kernels[0].grid[0], 1u);  // the kernel shape was re-defined
  EXPECT_TRUE(c1->read.problems.empty());
  EXPECT_TRUE(c1->clean_shutdown());
}

TEST(ChunkSeries, RotatesByAge) {
  TempDir dir;
  RotationOptions o;
  o.rotate_interval_ns = 1000;
  ChunkSeries series(dir.path() + "/t.trace", {}, o);
  auto w = TraceWriter::Create(dir.path() + "/t.trace").value();
  series.AdoptFirst(500);
  EXPECT_FALSE(series.Due(*w, 1499));
  EXPECT_TRUE(series.Due(*w, 1500));
}

TEST(ChunkSeries, DiskCapDeletesTheOldestChunksFirst) {
  TempDir dir;
  const std::string first = dir.path() + "/c.trace";
  RotationOptions o;
  o.max_file_bytes = 4096;
  o.max_disk_bytes = 4 * 4096;
  ChunkSeries series(first, {}, o);
  StringInterner interner;
  std::unique_ptr<TraceWriter> w = TraceWriter::Create(first).value();
  ASSERT_TRUE(w->WriteHeader(series.FirstHeader()).ok());
  series.AdoptFirst(0);
  for (int chunk = 0; chunk < 12; ++chunk) {
    // ~4 KiB of events per chunk.
    while (!series.Due(*w, 0)) {
      ASSERT_TRUE(w->WriteBatch(Kernels(interner, "k", 200, chunk * 1000000ull), interner).ok());
      ASSERT_TRUE(w->Flush().ok());
    }
    ASSERT_TRUE(series.Finish(w.get(), {}, EndInfo{{}, "rotate"}).ok());
    w = std::move(series.OpenNext(interner, "size", 0)).value();
    // On disk: never more than the cap (plus the chunk being written).
    uint64_t total = 0;
    for (const std::string& p : series.live_chunks()) {
      struct stat st;
      ASSERT_EQ(::stat(p.c_str(), &st), 0) << p;
      total += static_cast<uint64_t>(st.st_size);
    }
    EXPECT_LE(total, o.max_disk_bytes + 2 * 4096) << chunk;
  }
  EXPECT_GT(series.chunks_deleted(), 0u);
  EXPECT_FALSE(Exists(first));                          // the oldest went first
  EXPECT_TRUE(Exists(ChunkPath(first, 12)));            // the current one stays
  EXPECT_EQ(series.live_chunks().back(), ChunkPath(first, 12));
  EXPECT_EQ(series.chunks_deleted() + series.live_chunks().size(), 13u);
  // A later chunk's header says how many were deleted before it.
  ASSERT_TRUE(series.Finish(w.get(), {}, EndInfo{{}, "exit"}).ok());
  auto last = LoadTrace(ChunkPath(first, 12));
  ASSERT_TRUE(last.ok());
  EXPECT_GT(last->header.rotation().chunks_deleted(), 0u);
  EXPECT_EQ(last->header.rotation().max_disk_bytes(), o.max_disk_bytes);
}

// Rotation driven from the writer thread through WriterHooks.
class RotateEveryBatch : public WriterHooks {
 public:
  explicit RotateEveryBatch(ChunkSeries* s) : series_(s) {}
  bool OnBatch(RecordBatch&, TraceWriter&, StringInterner&) override {
    ++batches_;
    return false;
  }
  void AfterItem(std::unique_ptr<TraceWriter>* w, StringInterner& in) override {
    if (!series_->Due(**w, 0)) return;
    static_cast<void>(series_->Finish(w->get(), {}, EndInfo{{}, "rotate"}));
    auto next = series_->OpenNext(in, "size", 0);
    if (next.ok()) *w = std::move(next).value();
  }
  int batches_ = 0;

 private:
  ChunkSeries* series_;
};

TEST(AsyncWriterHooks, RotateOnTheWriterThread) {
  TempDir dir;
  const std::string first = dir.path() + "/a.trace";
  RotationOptions o;
  o.max_file_bytes = 1;
  ChunkSeries series(first, {}, o);
  auto w = TraceWriter::Create(first).value();
  ASSERT_TRUE(w->WriteHeader(series.FirstHeader()).ok());
  series.AdoptFirst(0);
  StringInterner interner;
  RotateEveryBatch hooks(&series);
  AsyncWriter writer(std::move(w), &interner);
  writer.SetHooks(&hooks);
  ASSERT_TRUE(writer.Start().ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.TryPush(Kernels(interner, "k" + std::to_string(i), 4, i * 100000ull)));
  ASSERT_TRUE(writer.Flush(std::chrono::seconds(10)));
  writer.Stop();
  EXPECT_EQ(hooks.batches_, 3);
  // Three chunks with a batch each, and the fourth (empty) being written.
  for (uint32_t i = 0; i < 3; ++i) {
    auto c = LoadTrace(ChunkPath(first, i));
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->records.kernels.size(), 4u) << i;
    EXPECT_TRUE(c->clean_shutdown());
  }
  EXPECT_EQ(series.chunk_index(), 3u);
}

}  // namespace
}  // namespace cutrace
