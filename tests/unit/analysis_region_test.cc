// Regions (analysis/region.h) on a trace whose answers were worked out by
// hand, through both ways of reading: the loaded trace (EngineOver) and the
// streamed one (StreamTraces, with the window from its three passes).
//
// One thread, times in us (x1000 ns); each launch call lasts 1 us:
//   step 1 [0, 100]    launch A (corr 1) at 10;  A runs 20-60
//   step 2 [100, 200]  launch B (corr 2) at 110; B runs 150-180
//                      launch C (corr 3) at 190; C runs 210-260 (past the step)
//   outside a step     launch D (corr 4) at 250; D runs 270-290
//   step 3 [300, 400]  launch E (corr 5) at 310; E runs 320-350
//                      cudaMemcpyAsync (corr 6) at 320; the copy runs 340-360
//
// --range step --skip-first 1: steps 2 and 3. Step 2 reaches to 260 (C was
// launched inside it), step 3 to 400 (its CPU end): window [100, 260] and
// [300, 400], 260 us.
//   busy = B 30 + C 50 + (E u copy = 320-360) 40 = 120 us (46.15%); compute
//   110 (B, C, E), copy 20, overlap 10 (340-350); D (270-290) lies outside.
//   gaps: [100,150) before B: its call at 110, so host_busy 10 (no call of
//   the thread in 100-110) + launch_latency 40; [180,210) before C (call at
//   190): host_busy 10 + launch_latency 20; [300,320), the part of [290,320)
//   inside the window, before E (call at 310): host_busy 10 + launch_latency
//   10; [360,400] after the last operation: unknown 40. Idle 140 = 260 - 120.
//   Kernels launched inside steps 2 and 3: B, C, E (D's call lies outside a
//   step, A's in the skipped one); the copy: 1. API calls starting inside
//   the window: 110, 190, 250, 310, 320 (5). NVTX ranges: steps 2 and 3.
//
// --from 150us --to 330us (the trace starts at 0): window [150, 330], 180 us.
//   busy = B 30 + C 50 + D 20 + E (320-330) 10 = 110; gaps [180,210),
//   [260,270), [290,320) = 70. Kernels launched in [150, 330]: C, D, E.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "analysis/program_verdict.h"
#include "analysis/region.h"
#include "analysis/report_engine.h"
#include "analysis/stream_summary.h"
#include "collector/trace_loader.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace::analysis {
namespace {

using testing::TraceFileBytes;

constexpr uint64_t us = 1000;

// An NVTX range of thread 1 over [s, e] us.
RangeRecord RangeOn1(uint32_t name, uint64_t s, uint64_t e) {
  RangeRecord r;
  r.name_id = name;
  r.start_ns = s * us;
  r.end_ns = e * us;
  r.thread_id = 1;
  return r;
}

std::string StepTrace() {
  StringInterner strings;
  const uint32_t launch = strings.Intern("cudaLaunchKernel");
  const uint32_t copy = strings.Intern("cudaMemcpyAsync");
  const uint32_t step = strings.Intern("step");
  RecordBatch host, gpu;
  auto call = [&](uint32_t name, uint64_t at, uint64_t corr) {
    ApiRecord a;
    a.name_id = name;
    a.start_ns = at * us;
    a.end_ns = (at + 1) * us;
    a.thread_id = 1;
    a.correlation_id = corr;
    host.api_calls.push_back(a);
  };
  auto kernel = [&](const char* name, uint64_t s, uint64_t e, uint64_t corr) {
    KernelRecord k;
    k.name_id = strings.Intern(name);
    k.start_ns = s * us;
    k.end_ns = e * us;
    k.correlation_id = corr;
    gpu.kernels.push_back(k);
  };
  auto range = [&](uint64_t s, uint64_t e) { host.ranges.push_back(RangeOn1(step, s, e)); };
  range(0, 100);
  range(100, 200);
  range(300, 400);
  call(launch, 10, 1);
  call(launch, 110, 2);
  call(launch, 190, 3);
  call(launch, 250, 4);
  call(launch, 310, 5);
  call(copy, 320, 6);
  kernel("A", 20, 60, 1);
  kernel("B", 150, 180, 2);
  kernel("C", 210, 260, 3);
  kernel("D", 270, 290, 4);
  kernel("E", 320, 350, 5);
  MemcpyRecord m;
  m.copy_kind = CopyKind::kHtoD;
  m.start_ns = 340 * us;
  m.end_ns = 360 * us;
  m.bytes = 4096;
  m.correlation_id = 6;
  gpu.memcpys.push_back(m);
  return TraceFileBytes(strings, {&host, &gpu});
}

uint64_t Cause(const DeviceGaps& d, GapCause c) { return d.idle_by_cause[static_cast<size_t>(c)]; }

// Both readings of the same bytes: the window, then a finished engine.
struct Both {
  std::string bytes = StepTrace();
  TraceData loaded;
  std::unique_ptr<StreamedTrace> streamed;
  Both() {
    loaded = LoadTraceFromBytes(bytes, "steps.trace").value();
    streamed = StreamedTrace::FromBytes(bytes, "steps.trace").value();
  }
  std::vector<std::pair<Window, std::unique_ptr<ReportEngine>>> Run(const RegionSpec& spec) {
    std::vector<std::pair<Window, std::unique_ptr<ReportEngine>>> out;
    const ReportParts parts{.kernels = true, .copies = true, .api = true, .nvtx = true,
                            .timeline = true};
    const TraceData* set[] = {&loaded};
    StatusOr<Window> w1 = ResolveWindow(set, spec);
    EXPECT_TRUE(w1.ok()) << w1.status().message();
    auto shared1 = std::make_shared<const Window>(*w1);
    out.emplace_back(*w1, EngineOver(set, parts, {}, shared1));
    StreamedTrace* streams[] = {streamed.get()};
    StatusOr<Window> w2 = ResolveStreamedWindow(streams, spec);
    EXPECT_TRUE(w2.ok()) << w2.status().message();
    auto shared2 = std::make_shared<const Window>(*w2);
    out.emplace_back(*w2, std::move(StreamTraces(streams, parts, {}, nullptr, shared2)).value());
    return out;
  }
};

// `--range step --skip-first 1`: the region most tests here look at.
RegionSpec StepsAfterTheFirstSpec() {
  RegionSpec spec;
  SetRange("step", &spec);
  spec.skip_first = 1;
  return spec;
}

TEST(Region, StepsAfterTheFirst) {
  Both both;
  for (auto& [window, engine] : both.Run(StepsAfterTheFirstSpec())) {
    ASSERT_EQ(window.parts.size(), 2u);
    EXPECT_EQ(window.parts[0].start, 100 * us);
    EXPECT_EQ(window.parts[0].end, 260 * us);
    EXPECT_EQ(window.parts[1].start, 300 * us);
    EXPECT_EQ(window.parts[1].end, 400 * us);
    EXPECT_EQ(window.length_ns(), 260 * us);
    EXPECT_EQ(window.instances, 3u);
    EXPECT_EQ(window.chosen, 2u);
    TimelineReport t = engine->Timeline();
    ASSERT_EQ(t.devices.size(), 1u);
    const DeviceOverlap& o = t.devices[0];
    EXPECT_EQ(o.span_ns, 260 * us);
    EXPECT_EQ(o.busy_ns, 120 * us);
    EXPECT_EQ(o.idle_ns, 140 * us);
    EXPECT_EQ(o.compute_ns, 110 * us);
    EXPECT_EQ(o.copy_ns, 20 * us);
    EXPECT_EQ(o.overlap_ns, 10 * us);
    const DeviceGaps& g = t.gaps[0];
    EXPECT_EQ(g.gap_count, 4u);
    EXPECT_EQ(g.idle_ns, 140 * us);
    ASSERT_EQ(g.gaps.size(), 4u);
    EXPECT_EQ(g.gaps[0].start_ns, 100 * us);
    EXPECT_EQ(g.gaps[0].end_ns, 150 * us);
    EXPECT_EQ(t.Label(g.gaps[0].before_label), "kernel:A");
    EXPECT_EQ(t.Label(g.gaps[0].after_label), "kernel:B");
    EXPECT_EQ(g.gaps[2].start_ns, 300 * us);
    EXPECT_EQ(g.gaps[2].end_ns, 320 * us);
    EXPECT_EQ(g.gaps[3].start_ns, 360 * us);
    EXPECT_EQ(g.gaps[3].end_ns, 400 * us);
    EXPECT_FALSE(g.gaps[3].has_after);
    EXPECT_EQ(t.Label(g.gaps[3].after_label), "(none)");
    EXPECT_EQ(Cause(g, GapCause::kHostBusy), 30 * us);
    EXPECT_EQ(Cause(g, GapCause::kLaunchLatency), 70 * us);
    EXPECT_EQ(Cause(g, GapCause::kUnknown), 40 * us);
    KernelReport k = engine->Kernels({KernelSort::kTotal, 0});
    EXPECT_EQ(k.kernel_count, 3u);
    EXPECT_EQ(k.total_ns, 110 * us);  // B 30 + C 50 + E 30, whole durations
    CopyReport c = engine->Copies();
    ASSERT_EQ(c.copies.size(), 1u);
    EXPECT_EQ(c.copies[0].count, 1u);
    EXPECT_EQ(engine->Api(0).call_count, 5u);
    NvtxReport n = engine->Nvtx(0);
    ASSERT_EQ(n.ranges.size(), 1u);
    EXPECT_EQ(n.ranges[0].count, 2u);
  }
}

// The verdict over the steps' window: idle 140 of 260 us (53.8% >= 20%):
// host-bound, the largest cause launch_latency (70 us), whose fix is to
// launch less often.
TEST(Region, VerdictOverTheWindow) {
  Both both;
  for (auto& [window, engine] : both.Run(StepsAfterTheFirstSpec())) {
    ProgramVerdict v = JudgeProgram(engine->Timeline());
    EXPECT_TRUE(v.known);
    EXPECT_EQ(v.span_ns, 260 * us);
    EXPECT_EQ(v.busy_ns, 120 * us);
    EXPECT_NEAR(v.busy_pct, 100.0 * 120 / 260, 1e-9);
    EXPECT_TRUE(v.host_bound);
    EXPECT_EQ(v.bound, "host-bound");
    EXPECT_EQ(v.largest, GapCause::kLaunchLatency);
    EXPECT_NE(v.advice.find("CUDA Graph"), std::string::npos) << v.advice;
  }
}

// A timeline of `n` devices, each busy `busy` of a 1000 ns span.
TimelineReport Devices(size_t n, uint64_t busy) {
  TimelineReport t;
  t.devices.resize(n);
  t.gaps.resize(n);
  for (DeviceOverlap& d : t.devices) {
    d.span_ns = 1000;
    d.busy_ns = busy;
    d.idle_ns = 1000 - busy;
  }
  return t;
}

// The 20% line: idle 19.9% is gpu-bound, 20% host-bound; two devices add up.
TEST(Region, VerdictThreshold) {
  TimelineReport t = Devices(2, 801);
  for (DeviceGaps& g : t.gaps) g.idle_by_cause[static_cast<size_t>(GapCause::kHostSync)] = 199;
  ProgramVerdict v = JudgeProgram(t);
  EXPECT_EQ(v.span_ns, 2000u);
  EXPECT_EQ(v.idle_by_cause_ns[static_cast<size_t>(GapCause::kHostSync)], 398u);
  EXPECT_EQ(v.bound, "gpu-bound");
  t.devices[1].busy_ns = 799;
  t.devices[1].idle_ns = 201;  // 400 of 2000: 20%
  v = JudgeProgram(t);
  EXPECT_EQ(v.bound, "host-bound");
  EXPECT_EQ(v.largest, GapCause::kHostSync);
  EXPECT_NE(v.advice.find("synchronizations"), std::string::npos) << v.advice;
  EXPECT_EQ(JudgeProgram(TimelineReport{}).bound, "unknown");
}

// Busy with copies alone (a known_work run whose kernels were all counted:
// 1 GiB of memsets) is gpu-bound, but faster kernels would not help: the
// advice is about the data. Half the busy time is the line.
TEST(Region, VerdictOfACopyBoundGpu) {
  TimelineReport t = Devices(1, 900);
  t.devices[0].copy_only_ns = 450;
  ProgramVerdict v = JudgeProgram(t);
  EXPECT_EQ(v.bound, "gpu-bound");
  EXPECT_NE(v.advice.find("copies and memsets"), std::string::npos) << v.advice;
  t.devices[0].copy_only_ns = 449;
  v = JudgeProgram(t);
  EXPECT_NE(v.advice.find("speed up the kernels"), std::string::npos) << v.advice;
}

// `--from FROM --to TO`, in us.
RegionSpec FromToSpec(uint64_t from, uint64_t to) {
  RegionSpec spec;
  spec.has_from = spec.has_to = true;
  spec.from_ns = from * us;
  spec.to_ns = to * us;
  return spec;
}

TEST(Region, FromTo) {
  Both both;
  for (auto& [window, engine] : both.Run(FromToSpec(150, 330))) {
    ASSERT_EQ(window.parts.size(), 1u);
    EXPECT_EQ(window.trace_start_ns, 0u);
    EXPECT_EQ(window.parts[0].start, 150 * us);
    EXPECT_EQ(window.parts[0].end, 330 * us);
    TimelineReport t = engine->Timeline();
    ASSERT_EQ(t.devices.size(), 1u);
    EXPECT_EQ(t.devices[0].span_ns, 180 * us);
    EXPECT_EQ(t.devices[0].busy_ns, 110 * us);
    EXPECT_EQ(t.gaps[0].idle_ns, 70 * us);
    EXPECT_EQ(t.gaps[0].gap_count, 3u);
    KernelReport k = engine->Kernels({KernelSort::kTotal, 0});
    EXPECT_EQ(k.kernel_count, 3u);
    EXPECT_EQ(k.total_ns, 100 * us);  // C 50 + D 20 + E 30
  }
}

// --from 70us --to 140us lies wholly inside the gap between A (ends 60) and
// B (starts 150, its call at 110): the device ran nothing in it but is no
// less there: idle 70 us of 70, one gap [70, 140] before B, host_busy 40
// (70-110, before B's call) and launch_latency 30 (110-140). One kernel was
// launched inside (B); the names with no launch in it (A, C, D, E) are no
// rows of zeros.
TEST(Region, AWindowInsideAGap) {
  Both both;
  for (auto& [window, engine] : both.Run(FromToSpec(70, 140))) {
    TimelineReport t = engine->Timeline();
    ASSERT_EQ(t.devices.size(), 1u);
    EXPECT_EQ(t.devices[0].span_ns, 70 * us);
    EXPECT_EQ(t.devices[0].busy_ns, 0u);
    EXPECT_EQ(t.devices[0].idle_ns, 70 * us);
    EXPECT_EQ(t.devices[0].ops, 0u);
    const DeviceGaps& g = t.gaps[0];
    EXPECT_EQ(g.gap_count, 1u);
    EXPECT_EQ(g.idle_ns, 70 * us);
    ASSERT_EQ(g.gaps.size(), 1u);
    EXPECT_EQ(g.gaps[0].start_ns, 70 * us);
    EXPECT_EQ(g.gaps[0].end_ns, 140 * us);
    EXPECT_EQ(t.Label(g.gaps[0].after_label), "kernel:B");
    EXPECT_EQ(Cause(g, GapCause::kHostBusy), 40 * us);
    EXPECT_EQ(Cause(g, GapCause::kLaunchLatency), 30 * us);
    KernelReport k = engine->Kernels({KernelSort::kTotal, 0});
    EXPECT_EQ(k.kernel_count, 1u);
    EXPECT_EQ(k.distinct, 1u);
    ASSERT_EQ(k.kernels.size(), 1u);
    EXPECT_EQ(k.kernels[0].name, "B");
    ApiReport a = engine->Api(0);
    EXPECT_EQ(a.call_count, 1u);
    ASSERT_EQ(a.api_calls.size(), 1u);  // cudaMemcpyAsync was not called in it
    EXPECT_EQ(a.api_calls[0].name, "cudaLaunchKernel");
  }
}

TEST(Region, ErrorsSayWhy) {
  Both both;
  const TraceData* set[] = {&both.loaded};
  RegionSpec none;
  SetRange("nope*", &none);
  StatusOr<Window> w = ResolveWindow(set, none);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("no NVTX range matches 'nope*'"), std::string::npos);
  RegionSpec all;
  SetRange("step@default", &all);
  all.skip_first = 3;
  w = ResolveWindow(set, all);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("has 3 instances, none left"), std::string::npos);
  RegionSpec wrong_domain;
  SetRange("step@other", &wrong_domain);
  EXPECT_FALSE(ResolveWindow(set, wrong_domain).ok());
}

TEST(Region, Glob) {
  EXPECT_TRUE(GlobMatch("ProfilerStep*", "ProfilerStep#12"));
  EXPECT_TRUE(GlobMatch("step", "step"));
  EXPECT_FALSE(GlobMatch("step", "steps"));
  EXPECT_TRUE(GlobMatch("s?e*", "step"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("a*b", "acbd"));
  RegionSpec s;
  SetRange("fwd@my@domain", &s);
  EXPECT_EQ(s.range, "fwd@my");
  EXPECT_EQ(s.domain, "domain");
}

// The stretches between spans, where the launch-call pass skips the search.
TEST(Region, GapAroundIsTheStretchNoSpanHolds) {
  const std::vector<TimeSpan> spans = {{100, 200}, {300, 400}, {401, 500}};
  auto gap = [&](uint64_t t) {
    const TimeSpan g = GapAround(spans, t);
    return std::make_pair(g.start, g.end);
  };
  EXPECT_EQ(gap(0), std::make_pair(uint64_t{0}, uint64_t{99}));
  EXPECT_EQ(gap(99), std::make_pair(uint64_t{0}, uint64_t{99}));
  EXPECT_EQ(gap(201), std::make_pair(uint64_t{201}, uint64_t{299}));
  EXPECT_EQ(gap(299), std::make_pair(uint64_t{201}, uint64_t{299}));
  EXPECT_EQ(gap(501), std::make_pair(uint64_t{501}, UINT64_MAX));
  // Every t of a stretch is in no span, and its edges' neighbours are.
  size_t hint = 0;
  for (uint64_t t : {uint64_t{0}, uint64_t{150}, uint64_t{250}, uint64_t{600}}) {
    if (FindSpan(spans, t, &hint) >= 0) continue;
    const TimeSpan g = GapAround(spans, t);
    for (uint64_t u = g.start; u <= std::min<uint64_t>(g.end, 700); ++u)
      EXPECT_LT(FindSpan(spans, u, &hint), 0) << u;
    if (g.start > 0) {
      EXPECT_GE(FindSpan(spans, g.start - 1, &hint), 0);
    }
    if (g.end < UINT64_MAX) {
      EXPECT_GE(FindSpan(spans, g.end + 1, &hint), 0);
    }
  }
}

// Launches between steps, then one on a step's very start: the call after
// a stretch between spans is looked up again, so the kernel it launched
// still extends its step. Steps [100, 200] and [300, 400] (us); launches
// at 50 (before them), 250 (between) and 300 (the second step's start),
// their kernels at 260-270, 280-290 and 410-500: the window is [100, 200]
// and [300, 500].
TEST(Region, LaunchOnAStepStartAfterLaunchesBetweenSteps) {
  StringInterner strings;
  const uint32_t launch = strings.Intern("cudaLaunchKernel");
  const uint32_t step = strings.Intern("step");
  const uint32_t k = strings.Intern("k");
  RecordBatch host, gpu;
  host.ranges = {RangeOn1(step, 100, 200), RangeOn1(step, 300, 400)};
  const uint64_t calls[3] = {50, 250, 300}, runs[3][2] = {{260, 270}, {280, 290}, {410, 500}};
  for (uint64_t i = 0; i < 3; ++i) {
    ApiRecord a;
    a.name_id = launch;
    a.start_ns = calls[i] * us;
    a.end_ns = a.start_ns + us / 2;
    a.thread_id = 1;
    a.correlation_id = i + 1;
    host.api_calls.push_back(a);
    KernelRecord kr;
    kr.name_id = k;
    kr.start_ns = runs[i][0] * us;
    kr.end_ns = runs[i][1] * us;
    kr.correlation_id = i + 1;
    gpu.kernels.push_back(kr);
  }
  const std::string bytes = TraceFileBytes(strings, {&host, &gpu});
  RegionSpec spec;
  SetRange("step", &spec);
  const TraceData loaded = LoadTraceFromBytes(bytes, "g.trace").value();
  const TraceData* set[] = {&loaded};
  auto streamed = StreamedTrace::FromBytes(bytes, "g.trace").value();
  StreamedTrace* streams[] = {streamed.get()};
  for (const Window& w : {ResolveWindow(set, spec).value(),
                          ResolveStreamedWindow(streams, spec).value()}) {
    ASSERT_EQ(w.parts.size(), 2u);
    EXPECT_EQ(w.parts[0].start, 100 * us);
    EXPECT_EQ(w.parts[0].end, 200 * us);
    EXPECT_EQ(w.parts[1].start, 300 * us);
    EXPECT_EQ(w.parts[1].end, 500 * us);
  }
}

}  // namespace
}  // namespace cutrace::analysis
