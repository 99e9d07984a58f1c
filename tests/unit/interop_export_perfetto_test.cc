// The Perfetto export (interop/export/perfetto_export.h), decoded with a small
// protobuf wire reader written here against the field numbers of Perfetto's
// own protos (the numbers are repeated below from Perfetto's sources, not
// taken from interop/export/perfetto_fields.h, so a wrong constant there fails):
// Trace.packet = 1; TracePacket: timestamp 8, trusted_packet_sequence_id 10,
// track_event 11, interned_data 12, sequence_flags 13, track_descriptor 60;
// TrackDescriptor: uuid 1, name 2, process 3, thread 4, parent_uuid 5,
// counter 8; ProcessDescriptor: pid 1, process_name 6; ThreadDescriptor: pid
// 1, tid 2; TrackEvent: category_iids 3, debug_annotations 4, type 9,
// name_iid 10, track_uuid 11, double_counter_value 44, flow_ids 47,
// terminating_flow_ids 48; InternedData: event_categories 1, event_names 2,
// debug_annotation_names 3 (each {iid 1, name 2}); DebugAnnotation: name_iid
// 1, uint_value 3, int_value 4, string_value 6.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collector/proto_reader.h"
#include "collector/trace_loader.h"
#include "interop/export/chrome_export.h"
#include "interop/export/perfetto_export.h"
#include "interop/merge/trace_merge.h"
#include "interop/merge/trace_placement.h"
#include "tests/unit/analysis_trace_builder.h"

namespace cutrace::interop {
namespace {

using cutrace::testing::TraceBuilder;

// One field of a message: number, wire type, and its varint/fixed value or bytes.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;
  std::string bytes;
};

bool ReadVarint(const std::string& s, size_t* pos, uint64_t* v) {
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* p = begin + *pos;
  const bool ok = wire::ReadVarint(p, begin + s.size(), v);
  *pos = static_cast<size_t>(p - begin);
  return ok;
}

// Every field of a message, in order; fails the test on malformed input.
std::vector<Field> Fields(const std::string& s) {
  std::vector<Field> out;
  size_t pos = 0;
  while (pos < s.size()) {
    uint64_t tag = 0;
    if (!ReadVarint(s, &pos, &tag)) {
      ADD_FAILURE() << "bad tag";
      return out;
    }
    Field f;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7);
    if (f.wire == 0) {
      ReadVarint(s, &pos, &f.value);
    } else if (f.wire == 1) {
      if (pos + 8 > s.size()) break;
      for (int i = 0; i < 8; ++i) f.value |= uint64_t{static_cast<uint8_t>(s[pos + i])} << (8 * i);
      pos += 8;
    } else if (f.wire == 2) {
      uint64_t n = 0;
      if (!ReadVarint(s, &pos, &n) || pos + n > s.size()) {
        ADD_FAILURE() << "bad length";
        return out;
      }
      f.bytes = s.substr(pos, n);
      pos += n;
    } else {
      ADD_FAILURE() << "unexpected wire type " << f.wire;
      return out;
    }
    out.push_back(std::move(f));
  }
  return out;
}

struct Track {
  uint64_t parent = 0;
  std::string name;
  bool process = false, thread = false, counter = false;
  int64_t pid = 0, tid = 0;
};

struct Slice {
  std::string name, category;
  uint64_t start = 0, end = 0;
  std::map<std::string, std::string> args;
  uint64_t flow_start = 0, flow_end = 0;
};

struct Decoded {
  std::map<uint64_t, Track> tracks;
  std::map<uint64_t, std::vector<Slice>> slices;  // by track, in end order
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters;
  std::vector<uint32_t> first_flags;  // sequence_flags of the first packet
  size_t packets = 0;
};

Decoded Decode(const std::string& trace) {
  Decoded d;
  std::map<uint64_t, std::string> names, categories, keys;
  std::map<uint64_t, std::vector<Slice>> open;  // per track, a stack
  uint64_t last_ts = 0;
  for (const Field& packet_field : Fields(trace)) {
    EXPECT_EQ(packet_field.number, 1u);  // Trace.packet
    ++d.packets;
    uint64_t ts = 0;
    bool has_ts = false;
    std::vector<Field> packet = Fields(packet_field.bytes);
    for (const Field& f : packet) {
      if (f.number == 8) {
        ts = f.value;
        has_ts = true;
      }
      if (f.number == 10) {
        EXPECT_EQ(f.value, 1u);  // one sequence
      }
      if (f.number == 13 && d.packets == 1) d.first_flags.push_back(static_cast<uint32_t>(f.value));
    }
    if (has_ts) {
      EXPECT_GE(ts, last_ts) << "packets out of time order";
      last_ts = ts;
    }
    for (const Field& f : packet) {
      if (f.number == 12) {  // InternedData
        for (const Field& entry : Fields(f.bytes)) {
          uint64_t iid = 0;
          std::string name;
          for (const Field& x : Fields(entry.bytes)) {
            if (x.number == 1) iid = x.value;
            if (x.number == 2) name = x.bytes;
          }
          auto& table = entry.number == 1 ? categories : entry.number == 2 ? names : keys;
          EXPECT_EQ(table.count(iid), 0u) << "iid redefined";
          table[iid] = name;
        }
      } else if (f.number == 60) {  // TrackDescriptor
        uint64_t uuid = 0;
        Track t;
        for (const Field& x : Fields(f.bytes)) {
          if (x.number == 1) uuid = x.value;
          if (x.number == 2) t.name = x.bytes;
          if (x.number == 5) t.parent = x.value;
          if (x.number == 8) t.counter = true;
          if (x.number == 3 || x.number == 4) {
            (x.number == 3 ? t.process : t.thread) = true;
            for (const Field& y : Fields(x.bytes)) {
              if (y.number == 1) t.pid = static_cast<int64_t>(y.value);
              if (y.number == 2) t.tid = static_cast<int64_t>(y.value);
            }
          }
        }
        EXPECT_NE(uuid, 0u);
        EXPECT_EQ(d.tracks.count(uuid), 0u) << "track " << uuid << " described twice";
        d.tracks[uuid] = t;
      } else if (f.number == 11) {  // TrackEvent
        uint64_t type = 0, track = 0, name = 0, category = 0, flow = 0, terminating = 0;
        double counter = 0;
        std::map<std::string, std::string> args;
        for (const Field& x : Fields(f.bytes)) {
          if (x.number == 9) type = x.value;
          if (x.number == 11) track = x.value;
          if (x.number == 10) name = x.value;
          if (x.number == 3) category = x.value;
          if (x.number == 47) {
            EXPECT_EQ(x.wire, 1u);  // fixed64, not packed
            flow = x.value;
          }
          if (x.number == 48) terminating = x.value;
          if (x.number == 44) std::memcpy(&counter, &x.value, sizeof counter);
          if (x.number == 4) {
            std::string key, value;
            for (const Field& y : Fields(x.bytes)) {
              if (y.number == 1) key = keys.at(y.value);
              if (y.number == 3 || y.number == 4) value = std::to_string(static_cast<int64_t>(y.value));
              if (y.number == 6) value = y.bytes;
            }
            args[key] = value;
          }
        }
        EXPECT_TRUE(d.tracks.count(track)) << "event on an undescribed track " << track;
        if (type == 1 || type == 3) {  // SLICE_BEGIN, INSTANT
          Slice s;
          s.name = names.at(name);  // interned before (or in) this packet
          s.category = categories.at(category);
          s.start = s.end = ts;
          s.args = args;
          s.flow_start = flow;
          s.flow_end = terminating;
          if (type == 1)
            open[track].push_back(s);
          else
            d.slices[track].push_back(s);
        } else if (type == 2) {  // SLICE_END
          EXPECT_FALSE(open[track].empty()) << "end without begin on track " << track;
          if (open[track].empty()) continue;
          Slice s = open[track].back();
          open[track].pop_back();
          s.end = ts;
          d.slices[track].push_back(s);
        } else if (type == 4) {
          EXPECT_TRUE(d.tracks[track].counter);
          d.counters[track].push_back({ts, counter});
        } else {
          ADD_FAILURE() << "unknown event type " << type;
        }
      }
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "unclosed slice";
  return d;
}

uint64_t FindTrack(const Decoded& d, const std::string& name, uint64_t parent = 0) {
  for (const auto& [uuid, t] : d.tracks)
    if (t.name == name && (parent == 0 || t.parent == parent)) return uuid;
  ADD_FAILURE() << "no track " << name;
  return 0;
}

TEST(PerfettoExportTest, DecodesAgainstPerfettoFieldNumbers) {
  TraceBuilder t("p.trace");
  TraceData& data = t.data();
  data.header.set_pid(321);
  data.header.set_host("h");
  DeviceInfo dev;
  dev.id = 0;
  dev.name = "NVIDIA H200";
  data.devices.push_back(dev);
  t.Range("step", 1000, 5000, 77, 0);
  t.Api("cudaLaunchKernel", 1100, 1200, 77, /*correlation=*/9);
  t.Kernel("k1", 1300, 1800, 0, 7, 9);
  t.Kernel("k2", 1800, 2500, 0, 7);  // back to back on the same stream
  t.Copy(CopyKind::kDtoH, 2600, 2700, 4096, 0);
  data.records.memcpys[0].stream_id = 7;
  t.Range("mark", 1500, 1500, 77, 1, {}, RangeKind::kMark);
  // A hardware counter sampled over k1 (kernel scope, by correlation id).
  proto::CounterBatch batch;
  batch.add_metric_name_ids(t.Name("sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  proto::CounterSample* sample = batch.add_samples();
  sample->set_correlation_id(9);
  sample->add_values(42.5);
  data.counters.push_back(batch);

  std::string out;
  StringSink sink(&out);
  const TraceData* one[] = {t.get()};
  auto counts = ExportPerfettoTrace(TraceSet(one), &sink);
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(counts->flows, 1u);
  EXPECT_EQ(counts->counter_samples, 1u);
  EXPECT_EQ(counts->bytes, out.size());

  Decoded d = Decode(out);
  ASSERT_EQ(d.first_flags, std::vector<uint32_t>{1});  // SEQ_INCREMENTAL_STATE_CLEARED

  uint64_t process = FindTrack(d, "h pid 321");
  EXPECT_TRUE(d.tracks[process].process);
  EXPECT_EQ(d.tracks[process].pid, 321);
  uint64_t thread = FindTrack(d, "thread 77", process);
  EXPECT_TRUE(d.tracks[thread].thread);
  EXPECT_EQ(d.tracks[thread].pid, 321);
  EXPECT_EQ(d.tracks[thread].tid, 77);
  uint64_t gpu = FindTrack(d, "GPU 0: NVIDIA H200");
  EXPECT_TRUE(d.tracks[gpu].process);
  EXPECT_EQ(d.tracks[gpu].pid, kGpuPidBase);
  uint64_t stream = FindTrack(d, "stream 7", gpu);

  // The stream's slices: both kernels (siblings, though back to back) and the copy.
  const std::vector<Slice>& s = d.slices[stream];
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "k1");
  EXPECT_EQ(s[0].category, "kernel");
  EXPECT_EQ(s[0].start, 1300u);
  EXPECT_EQ(s[0].end, 1800u);
  EXPECT_EQ(s[0].args.at("device"), "0");
  EXPECT_EQ(s[0].args.at("stream"), "7");
  EXPECT_EQ(s[0].args.at("correlation"), "9");
  EXPECT_EQ(s[0].args.at("grid"), "0,0,0");
  EXPECT_EQ(s[1].name, "k2");
  EXPECT_EQ(s[1].start, 1800u);
  EXPECT_EQ(s[1].end, 2500u);
  EXPECT_EQ(s[2].name, "Memcpy DtoH (Pinned -> Device)");
  EXPECT_EQ(s[2].category, "gpu_memcpy");
  EXPECT_EQ(s[2].args.at("bytes"), "4096");

  // The host thread: the launch call and the mark nest inside the NVTX range.
  const std::vector<Slice>& h = d.slices[thread];
  ASSERT_EQ(h.size(), 3u);
  std::map<std::string, Slice> by_name;
  for (const Slice& x : h) by_name[x.name] = x;
  EXPECT_EQ(by_name.at("step").category, "nvtx");
  EXPECT_EQ(by_name.at("step").end, 5000u);
  EXPECT_EQ(by_name.at("mark").start, by_name.at("mark").end);
  EXPECT_EQ(h.back().name, "step");  // closed last: the others were inside it

  // The flow: from the launch call to the kernel it launched.
  const Slice& launch = by_name.at("cudaLaunchKernel");
  EXPECT_EQ(launch.category, "cuda_runtime");
  EXPECT_NE(launch.flow_start, 0u);
  EXPECT_EQ(launch.flow_start, s[0].flow_end);
  EXPECT_EQ(s[1].flow_end, 0u);

  // The counter: 42.5 while k1 runs, 0 after it.
  uint64_t counter = FindTrack(d, "sm__throughput.avg.pct_of_peak_sustained_elapsed", gpu);
  ASSERT_EQ(d.counters[counter].size(), 2u);
  EXPECT_EQ(d.counters[counter][0], (std::pair<uint64_t, double>{1300, 42.5}));
  EXPECT_EQ(d.counters[counter][1], (std::pair<uint64_t, double>{1800, 0.0}));
}

TEST(PerfettoExportTest, EmptyTraceIsStillAValidTrace) {
  TraceBuilder t;
  std::string out;
  StringSink sink(&out);
  const TraceData* one[] = {t.get()};
  ASSERT_TRUE(ExportPerfettoTrace(TraceSet(one), &sink).ok());
  Decoded d = Decode(out);
  EXPECT_EQ(d.tracks.size(), 1u);  // the process
  EXPECT_TRUE(d.slices.empty());
}

// Issue 21, point 2: two ranks merged into one trace stay two processes when
// the merged trace is exported. Both ranks are pid 100 (two machines), each
// with a launch call on thread 7 and a kernel on its device 0; rank 1 starts
// 1 us of realtime after rank 0.
TEST(PerfettoExportTest, MergedRanksStayTwoProcesses) {
  TraceBuilder r0("rank0.trace"), r1("rank1.trace");
  for (TraceBuilder* b : {&r0, &r1}) {
    const bool second = b == &r1;
    TraceData& d = b->data();
    d.header.set_pid(100);
    d.header.set_rank(second ? "1" : "0");
    d.header.add_command_line("train.py");
    d.header.mutable_start_anchor()->set_realtime_ns(1'700'000'000'000'000'000 + (second ? 1000 : 0));
    b->Api("cudaLaunchKernel", 100, 200, 7, 1);
    b->Kernel("k", 300, 900, 0, 7, 1);
  }
  const TraceData* inputs[] = {r0.get(), r1.get()};
  auto placed = PlaceTraces(TraceSet(inputs));
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  std::string bytes;
  StringSink merged_sink(&bytes);
  ASSERT_TRUE(EncodeMergedTrace(MergePlacedTraces(*placed), &merged_sink).ok());
  auto merged = LoadTraceFromBytes(bytes, "all.trace");
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_EQ(merged->header.processes_size(), 2);
  const TraceData* one[] = {&*merged};

  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(ExportPerfettoTrace(TraceSet(one), &sink).ok());
  Decoded d = Decode(out);
  uint64_t p0 = FindTrack(d, "rank 0 pid 100: train.py");
  uint64_t p1 = FindTrack(d, "rank 1 pid 100: train.py");
  ASSERT_NE(p0, p1);
  EXPECT_TRUE(d.tracks[p0].process && d.tracks[p1].process);
  EXPECT_NE(d.tracks[p0].pid, d.tracks[p1].pid);  // the second pid 100 gets another
  // Each process has its own thread 7 with its own launch call, 1 us apart.
  std::vector<uint64_t> launches;
  for (uint64_t process : {p0, p1}) {
    uint64_t thread = 0;
    for (const auto& [uuid, t] : d.tracks)
      if (t.thread && t.parent == process) thread = uuid;
    ASSERT_NE(thread, 0u);
    ASSERT_EQ(d.slices[thread].size(), 1u);
    EXPECT_EQ(d.slices[thread][0].name, "cudaLaunchKernel");
    launches.push_back(d.slices[thread][0].start);
  }
  EXPECT_EQ(launches[1] - launches[0], 1000u);
  // And two GPUs, one per rank, each saying whose.
  EXPECT_NE(FindTrack(d, "rank 0 GPU 0"), FindTrack(d, "rank 1 GPU 1"));

  // The Chrome export: two host processes, process_sort_index = rank.
  std::string chrome;
  StringSink chrome_sink(&chrome);
  ASSERT_TRUE(ExportChromeTrace(TraceSet(one), &chrome_sink).ok());
  nlohmann::json doc = nlohmann::json::parse(chrome);
  std::map<int64_t, std::string> names;
  std::map<int64_t, int64_t> sort;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
    if (e["name"] == "process_sort_index") sort[e["pid"]] = e["args"]["sort_index"];
  }
  std::map<std::string, int64_t> sort_by_name;
  for (const auto& [pid, name] : names) sort_by_name[name] = sort[pid];
  EXPECT_EQ(sort_by_name.at("rank 0 pid 100: train.py"), 0);
  EXPECT_EQ(sort_by_name.at("rank 1 pid 100: train.py"), 1);
  EXPECT_EQ(sort_by_name.count("rank 0 GPU 0"), 1u);
  EXPECT_EQ(sort_by_name.count("rank 1 GPU 1"), 1u);
}

// Two processes of a merged trace on one GPU (one device id), each with its
// stream 7 and overlapping kernels: a track per process's stream, each with
// its own kernel at its own times. On one track, a slice end closed the
// other process's kernel (durations 563,919 and 263,919 for 413,919).
TEST(PerfettoExportTest, ProcessesSharingAGpuKeepTheirStreamsApart) {
  TraceBuilder t("merged.trace");
  for (uint64_t p : {1, 2}) {
    t.Process(static_cast<int64_t>(800 + p), "", p, 0);
    t.Api("cudaLaunchKernel", 100 * p, 100 * p + 5, p, p);
    t.Kernel(p == 1 ? "a" : "b", 300 + 100 * p, 1000 + 100 * p, 0, 7, p);  // overlapping
  }
  const TraceData* one[] = {t.get()};
  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(ExportPerfettoTrace(TraceSet(one), &sink).ok());
  Decoded d = Decode(out);
  const uint64_t a = FindTrack(d, "stream 7 (pid 801)"), b = FindTrack(d, "stream 7 (pid 802)");
  ASSERT_NE(a, b);
  ASSERT_EQ(d.slices[a].size(), 1u);
  ASSERT_EQ(d.slices[b].size(), 1u);
  EXPECT_EQ(d.slices[a][0].name, "a");
  EXPECT_EQ(d.slices[a][0].end - d.slices[a][0].start, 700u);
  EXPECT_EQ(d.slices[b][0].name, "b");
  EXPECT_EQ(d.slices[b][0].end - d.slices[b][0].start, 700u);
}

// Start/end ranges are not a stack: "compute" [100, 700) and "download"
// [400, 900) overlap without nesting, as do two syncs [0, 300) and [100, 400)
// on one device. Each lands on a row of its own (rows.h), so every slice
// keeps its duration; on one track an end closed the latest slice begun
// (compute 774,660 for 564,447 on the reviewed trace).
TEST(PerfettoExportTest, OverlappingStartEndRangesAndSyncsKeepTheirDurations) {
  TraceBuilder t;
  t.Range("compute", 100, 700, 5, 0, {}, RangeKind::kStartEnd);
  t.Range("download", 400, 900, 5, 0, {}, RangeKind::kStartEnd);
  t.Range("later", 950, 990, 5, 0, {}, RangeKind::kStartEnd);
  t.Sync(SyncKind::kStreamSynchronize, 0, 300, 0);
  t.Sync(SyncKind::kEventSynchronize, 100, 400, 0);
  const TraceData* one[] = {t.get()};
  std::string out;
  StringSink sink(&out);
  ASSERT_TRUE(ExportPerfettoTrace(TraceSet(one), &sink).ok());
  Decoded d = Decode(out);
  std::map<std::string, uint64_t> duration;
  std::map<std::string, std::string> track;
  for (const auto& [uuid, slices] : d.slices)
    for (const Slice& s : slices) {
      duration[s.name] = s.end - s.start;
      track[s.name] = d.tracks[uuid].name;
    }
  EXPECT_EQ(duration["compute"], 600u);
  EXPECT_EQ(duration["download"], 500u);
  EXPECT_EQ(duration["Stream Sync"], 300u);
  EXPECT_EQ(duration["Event Sync"], 300u);
  EXPECT_EQ(track["compute"], "NVTX start/end");
  EXPECT_EQ(track["download"], "NVTX start/end 2");
  EXPECT_EQ(track["later"], "NVTX start/end");  // back on the first row once it is free
  EXPECT_EQ(track["Stream Sync"], "synchronization");
  EXPECT_EQ(track["Event Sync"], "synchronization 2");
}

// A 38-hour skew is refused; ranges 10 s apart only warned about.
TEST(PerfettoExportTest, MergeRefusesTracesHoursApart) {
  TraceBuilder a("a.trace"), b("b.trace");
  a.data().header.mutable_start_anchor()->set_realtime_ns(1'700'000'000'000'000'000);
  b.data().header.mutable_start_anchor()->set_realtime_ns(1'700'000'000'000'000'000 +
                                                          38 * 3600 * int64_t{1'000'000'000});
  a.data().header.set_pid(1);
  b.data().header.set_pid(2);
  a.Kernel("k", 0, 1000);
  b.Kernel("k", 0, 1000);
  const TraceData* inputs[] = {a.get(), b.get()};
  auto placed = PlaceTraces(TraceSet(inputs));
  ASSERT_TRUE(placed.ok());
  TimeGap gap = PlacedTimeGap(*placed);
  EXPECT_EQ(gap.gap_ns, 38 * 3600 * int64_t{1'000'000'000} - 1000);
  EXPECT_EQ(gap.ends_first, 0u);
  EXPECT_EQ(gap.starts_last, 1u);
  auto refused = CheckTimeGap(*placed, 3600 * int64_t{1'000'000'000});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("38.0 h"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find('\n'), std::string::npos);
  // Allowed with a larger --max-skew, with a warning.
  auto allowed = CheckTimeGap(*placed, 40 * 3600 * int64_t{1'000'000'000});
  ASSERT_TRUE(allowed.ok());
  EXPECT_NE(allowed->find("do not overlap"), std::string::npos);
  // Overlapping ranges: nothing to say.
  b.data().header.mutable_start_anchor()->set_realtime_ns(1'700'000'000'000'000'500);
  placed = PlaceTraces(TraceSet(inputs));
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(PlacedTimeGap(*placed).gap_ns, 0);
  EXPECT_EQ(CheckTimeGap(*placed, 0).value(), "");
}

}  // namespace
}  // namespace cutrace::interop
