// Every record is validated before it reaches the trace: zero and inverted
// timestamps, timestamps later than the moment CUPTI handed the record over
// (another clock, or garbage), and a kernel, copy or memset that ends before
// the API call that issued it began. Rejected records stay out of the trace,
// so out of every report, and are counted by kind and reason in Statistics.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include <map>
#include <set>

#include "collector/trace_loader.h"
#include "injection/clock.h"
#include "injection/records/convert.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

std::map<std::string, uint64_t> InvalidByReason(const StatsInfo& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& i : s.invalid) out[i.kind + "/" + i.reason] = i.count;
  return out;
}

// The finished trace at `path` holds `kernels` kernels and counts the
// records it refused by "kind/reason" as `invalid`.
void ExpectKernelsAndInvalid(const std::string& path, size_t kernels,
                             const std::map<std::string, uint64_t>& invalid) {
  auto t = LoadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->records.kernels.size(), kernels);
  ASSERT_TRUE(t->statistics.has_value());
  EXPECT_EQ(InvalidByReason(*t->statistics), invalid);
}

CUpti_ActivityMemcpy6 Copy(uint64_t start, uint64_t end, uint32_t corr) {
  auto c = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  c.bytes = 64;
  c.start = start;
  c.end = end;
  c.correlationId = corr;
  c.contextId = 1;
  return c;
}

CUpti_ActivityMemset4 Set(uint64_t start, uint64_t end, uint32_t corr) {
  auto m = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  m.bytes = 64;
  m.start = start;
  m.end = end;
  m.correlationId = corr;
  return m;
}

TEST(InjectionValidation, ReasonNamesAreStable) {
  // They are the trace's InvalidCount.reason strings: reports and tests match on them.
  EXPECT_EQ(ReasonName(InvalidReason::kZeroTimestamp), "zero_timestamp");
  EXPECT_EQ(ReasonName(InvalidReason::kInverted), "inverted");
  EXPECT_EQ(ReasonName(InvalidReason::kEndsBeforeLaunch), "ends_before_launch");
  EXPECT_EQ(ReasonName(InvalidReason::kAfterDelivery), "after_delivery");
}

TEST(InjectionValidation, CheckTimes) {
  EXPECT_EQ(CheckTimes(0, 10), InvalidReason::kZeroTimestamp);
  EXPECT_EQ(CheckTimes(10, 0), InvalidReason::kZeroTimestamp);
  EXPECT_EQ(CheckTimes(20, 10), InvalidReason::kInverted);
  EXPECT_EQ(CheckTimes(10, 10), std::nullopt);  // a zero-length record is possible
  EXPECT_EQ(CheckTimes(10, 20), std::nullopt);
}

TEST_F(InjectionSessionTest, ImpossibleRecordsAreCountedByReasonAndKeptOut) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  const uint64_t t0 = MonotonicNs();
  const uint64_t future = t0 + 3600ull * 1000000000ull;  // an hour after delivery
  const uint32_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  DeliverBuffer([&](BufferWriter& w) {
    // The launch calls come first, as when CUPTI hands over the API buffer first.
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, launch, t0 - 5000, t0 - 4000, 21));
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, launch, t0 - 5000, t0 - 4000, 22));
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, launch, t0 - 5000, t0 - 4000, 23));
    w.Add(Kernel("_Z2okv", t0 - 3000, t0 - 2000, 21));         // fine
    w.Add(Kernel("_Z4earlyv", t0 - 7000, t0 - 6000, 22));      // ends before its launch began
    w.Add(Kernel("_Z4laterv", t0 - 3000, future, 23));         // ends an hour from now
    w.Add(Kernel("_Z4zerov", 0, t0 - 1000, 24));               // zero start
    w.Add(Kernel("_Z8invertedv", t0 - 1000, t0 - 2000, 25));   // end < start
    w.Add(Kernel("_Z7unknownv", t0 - 9000, t0 - 8000, 99));    // no launch call seen: kept
    w.Add(Copy(t0 - 7000, t0 - 6000, 21));                     // before launch 21's call
    w.Add(Copy(t0 - 3000, future, 26));                        // in the future
    w.Add(Set(t0 - 7000, t0 - 6500, 23));                      // before call 23
    w.Add(Set(t0 - 3000, t0 - 2500, 23));                      // fine
  });
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::set<std::string> kernels;
  for (const auto& k : t->records.kernels) kernels.insert(t->strings.Display(k.name_id));
  EXPECT_EQ(kernels, (std::set<std::string>{"ok()", "unknown()"}));
  EXPECT_EQ(t->records.memcpys.size(), 0u);
  EXPECT_EQ(t->records.memsets.size(), 1u);
  ASSERT_TRUE(t->statistics.has_value());
  EXPECT_EQ(t->statistics->kernels, 2u);
  EXPECT_EQ(InvalidByReason(*t->statistics),
            (std::map<std::string, uint64_t>{{"kernel/ends_before_launch", 1},
                                             {"kernel/after_delivery", 1},
                                             {"kernel/zero_timestamp", 1},
                                             {"kernel/inverted", 1},
                                             {"memcpy/ends_before_launch", 1},
                                             {"memcpy/after_delivery", 1},
                                             {"memset/ends_before_launch", 1}}));
}

TEST_F(InjectionSessionTest, LaunchCallsInAnEarlierBufferStillCount) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  const uint64_t t0 = MonotonicNs();
  const uint32_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  DeliverBuffer([&](BufferWriter& w) {
    for (uint32_t c = 1; c <= 100; ++c) {
      w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, launch, t0 - 100000 + c * 100, t0 - 99990 + c * 100, c));
    }
  });
  DeliverBuffer([&](BufferWriter& w) {
    for (uint32_t c = 1; c <= 100; ++c) {
      // Odd ones end 50 ns after their call began; even ones 50 ns before it.
      const uint64_t call = t0 - 100000 + c * 100;
      const uint64_t end = c % 2 ? call + 50 : call - 50;
      w.Add(Kernel("_Z1kv", end - 10, end, c));
    }
  });
  session_->Finalize("exit");
  ExpectKernelsAndInvalid(session_->path(), 50, {{"kernel/ends_before_launch", 50}});
}

TEST_F(InjectionSessionTest, CuptiClockIsValidatedAgainstCuptiTime) {
  // Without the timestamp callback, records are on CUPTI's clock and "now"
  // is cuptiGetTimestamp (the fake says 1000 ns): small times pass.
  fake_->has_timestamp_callback = false;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  DeliverBuffer([&](BufferWriter& w) {
    w.Add(Kernel("_Z1av", 100, 200, 1));
    w.Add(Kernel("_Z1bv", 300, 5000000000000ull, 2));  // 5000 s after "now"
  });
  session_->Finalize("exit");
  ExpectKernelsAndInvalid(session_->path(), 1, {{"kernel/after_delivery", 1}});
}

// A buffer CUPTI never hands back, even to the final forced flush, means
// records went elsewhere (another client took over the buffer callbacks):
// the trace says so instead of looking complete.
TEST_F(InjectionSessionTest, BuffersNeverReturnedAreReportedInTheTrace) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  uint8_t* kept = nullptr;
  size_t size = 0, max_records = 0;
  fake_->requested(&kept, &size, &max_records);  // CUPTI keeps this one for good
  ASSERT_NE(kept, nullptr);
  DeliverBuffer([&](BufferWriter& w) { w.Add(Kernel("_Z1kv", 100, 200, 1)); });
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->records.kernels.size(), 1u);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_EQ(t->warnings[0].rfind("1 activity buffers were not returned by CUPTI's final flush", 0),
            0u)
      << t->warnings[0];
}

TEST_F(InjectionSessionTest, NoWarningWhenEveryBufferCameBack) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  DeliverBuffer([&](BufferWriter& w) { w.Add(Kernel("_Z1kv", 100, 200, 1)); });
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->warnings.empty());
}

// An exhausted pool is one problem: CUPTI's drops that follow from it (per
// buffer and at shutdown) are counted but not announced again. Run in a
// child process, because the "said once" flags are process-wide.
TEST_F(InjectionSessionTest, PoolExhaustionAndItsDropsAreOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string log = dir_ + "/stderr";
  auto run = [&] {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    Config c = MakeConfig();
    c.buffer_count = 2;
    fake_->dropped_per_buffer = 5;
    if (!StartSession(c).ok()) std::_Exit(100);
    uint8_t* b[3];
    size_t size, max_records;
    for (auto& p : b) fake_->requested(&p, &size, &max_records);
    fake_->completed(nullptr, 0, b[0], 1u << 20, 0);
    fake_->completed(nullptr, 0, b[1], 1u << 20, 0);
    session_->Finalize("exit");
    std::ifstream in(log);
    int lines = 0;
    for (std::string line; std::getline(in, line);) lines += line.rfind("cutrace: ", 0) == 0;
    const std::string cleanup = "rm -rf '" + dir_ + "'";  // TearDown does not run in the child
    static_cast<void>(std::system(cleanup.c_str()));
    std::_Exit(lines);
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(1), "");
}

}  // namespace
}  // namespace cutrace::injection
