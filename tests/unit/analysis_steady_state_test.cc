// The steady state (analysis/region.h): which range a trace's steady state
// is, and its window read once with the whole trace's (its ranges kept by
// the first pass and replayed, not read again), on traces made by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "analysis/region.h"
#include "analysis/stream_summary.h"
#include "collector/trace_loader.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace::analysis {
namespace {

using testing::TraceFileBytes;

constexpr uint64_t us = 1000;

// The steady state: a depth-0 range with 10 or more instances, after its
// first 10% (at least 1); ProfilerStep#N names count as one.
TEST(SteadyState, Candidate) {
  StringInterner strings;
  RecordBatch host;
  for (int i = 0; i < 25; ++i) {
    RangeRecord r;
    r.name_id = strings.Intern("ProfilerStep#" + std::to_string(i));
    r.start_ns = i * 100 * us;
    r.end_ns = r.start_ns + 90 * us;
    r.thread_id = 1;
    r.depth = 1;  // under another range: ProfilerStep* counts at any depth
    host.ranges.push_back(r);
    RangeRecord s = r;
    s.name_id = strings.Intern("loop");
    s.depth = 0;
    if (i < 12) host.ranges.push_back(s);  // 12 of a depth-0 name: ProfilerStep* still wins
  }
  const std::string bytes = TraceFileBytes(strings, {&host});
  TraceData t = LoadTraceFromBytes(bytes, "p.trace").value();
  const TraceData* set[] = {&t};
  Window w = ResolveWindow(set, {}).value();
  ASSERT_TRUE(w.steady.has_value());
  EXPECT_EQ(w.steady->pattern, "ProfilerStep*");
  EXPECT_EQ(w.steady->instances, 25u);
  EXPECT_EQ(w.steady->skip, 2u);
  RegionSpec s = SteadySpec(*w.steady);
  EXPECT_EQ(s.range, "ProfilerStep*");
  EXPECT_EQ(s.skip_first, 2u);
}


// A trace for the steady state read once: 15 depth-0 ranges named "s*p"
// (the candidate: the most instances; as a pattern it matches "step" too)
// and 12 named "step" at depth 1, 100 us apart, each with one launch whose
// kernel runs past the range's end.
std::string SteadyTrace() {
  StringInterner strings;
  RecordBatch host, gpu;
  const uint32_t launch = strings.Intern("cudaLaunchKernel");
  for (uint64_t i = 0; i < 27; ++i) {
    RangeRecord r;
    r.name_id = strings.Intern(i < 15 ? "s*p" : "step");
    r.depth = i < 15 ? 0 : 1;
    r.start_ns = i * 100 * us;
    r.end_ns = r.start_ns + 50 * us;
    r.thread_id = 1;
    host.ranges.push_back(r);
    ApiRecord a;
    a.name_id = launch;
    a.start_ns = r.start_ns + 10 * us;
    a.end_ns = a.start_ns + 1 * us;
    a.thread_id = 1;
    a.correlation_id = i + 1;
    host.api_calls.push_back(a);
    KernelRecord k;
    k.name_id = strings.Intern("k");
    k.start_ns = r.start_ns + 20 * us;
    k.end_ns = r.start_ns + 70 * us;
    k.correlation_id = i + 1;
    gpu.kernels.push_back(k);
  }
  return TraceFileBytes(strings, {&host, &gpu});
}

void ExpectSameWindow(const Window& a, const Window& b) {
  EXPECT_EQ(a.active, b.active);
  EXPECT_EQ(a.trace_start_ns, b.trace_start_ns);
  EXPECT_EQ(a.instances, b.instances);
  EXPECT_EQ(a.chosen, b.chosen);
  ASSERT_EQ(a.parts.size(), b.parts.size());
  for (size_t i = 0; i < a.parts.size(); ++i) {
    EXPECT_EQ(a.parts[i].start, b.parts[i].start) << i;
    EXPECT_EQ(a.parts[i].end, b.parts[i].end) << i;
  }
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t f = 0; f < a.files.size(); ++f) {
    EXPECT_EQ(a.files[f].cpu.size(), b.files[f].cpu.size());
    ASSERT_EQ(a.files[f].launches.size(), b.files[f].launches.size());
    for (size_t i = 0; i < a.files[f].launches.size(); ++i) {
      EXPECT_EQ(a.files[f].launches[i].first, b.files[f].launches[i].first);
      EXPECT_EQ(a.files[f].launches[i].last, b.files[f].launches[i].last);
    }
  }
  ASSERT_EQ(a.steady.has_value(), b.steady.has_value());
  if (a.steady) {
    EXPECT_EQ(a.steady->pattern, b.steady->pattern);
  }
}

// The steady state's window resolved with the first pass (its ranges kept,
// not read again) is the window of SteadySpec() resolved on its own.
TEST(SteadyState, WindowFromTheFirstPassIsTheOneReadAgain) {
  const std::string bytes = SteadyTrace();
  auto streamed = StreamedTrace::FromBytes(bytes, "s.trace").value();
  StreamedTrace* streams[] = {streamed.get()};
  StatusOr<Window> steady = Status::Error("not set");
  Window w = ResolveStreamedWindow(streams, {}, &steady).value();
  ASSERT_TRUE(w.steady.has_value());
  EXPECT_EQ(w.steady->pattern, "s*p");
  EXPECT_EQ(w.steady->instances, 15u);
  ASSERT_TRUE(steady.ok()) << steady.status().message();
  // "s*p" matches both names: 27 instances, the first skipped; each reaches
  // its kernel's end (70 us past its start) and the next starts 100 us on.
  EXPECT_EQ(steady->instances, 27u);
  EXPECT_EQ(steady->chosen, 26u);
  EXPECT_EQ(steady->parts.size(), 26u);
  EXPECT_EQ(steady->length_ns(), 26 * 70 * us);
  Window again = ResolveStreamedWindow(streams, SteadySpec(*w.steady)).value();
  ExpectSameWindow(*steady, again);
  // Over the kept limit nothing is kept, and a replay says so.
  TraceData t = LoadTraceFromBytes(bytes, "s.trace").value();
  for (size_t limit : {size_t{26}, size_t{27}}) {
    WindowResolver first({}, 1);
    first.KeepRanges(limit);
    for (const RangeRecord& r : t.records.ranges) first.Range(0, t, r);
    ASSERT_TRUE(first.EndRanges().ok());
    WindowResolver second(SteadySpec(*w.steady), 1);
    EXPECT_EQ(second.ReplayRanges(first), limit == 27) << limit;
  }
}

}  // namespace
}  // namespace cutrace::analysis
