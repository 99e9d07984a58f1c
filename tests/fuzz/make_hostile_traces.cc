// Writes the hostile traces of issue 26 into the directory given: traces
// that `cutrace info` accepts but whose numbers, names or anchors once
// crashed, hung, wrapped or reached the terminal raw. They are the seed
// corpus of fuzz_reports (tests/fuzz/corpus/reports, regenerated with
//   build/bin/make_hostile_traces tests/fuzz/corpus/reports
// and committed) and the inputs of tests/cli/hostile_test.py, which asserts
// what each report must print for them. Each case is named after what it
// holds; hostile_test.py relies on these names and numbers.
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "collector/info_fields.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "collector/trace_writer.h"
#include "tests/fuzz/corpus_files.h"

namespace {

using namespace cutrace;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// Control characters of every kind a terminal acts on: CSI colour, clear
// screen, OSC window title ended by BEL, a C1 CSI (U+009B), a newline.
const std::string kEsc = "\x1b[31mRED\x1b[2J\x1b]0;owned\x07\xc2\x9b" "1m\nNEXT\r";

class Trace {
 public:
  explicit Trace(HeaderInfo header = Header()) { enc_.EncodeHeader(header, &bytes_); }

  static HeaderInfo Header() {
    HeaderInfo h;
    h.producer = "make_hostile_traces";
    h.host = "host";
    h.pid = 42;
    h.command_line = {"./app"};
    h.clock = ClockDomain::kMonotonic;
    h.start_anchor = {1000, 1700000000000000000, 1000};
    h.mode = "trace";
    return h;
  }

  void Device(uint32_t id, const std::string& name) {
    DeviceInfo d;
    d.id = id;
    d.name = name;
    d.sm_count = 132;
    Device(d);
  }
  void Device(const DeviceInfo& d) { enc_.EncodeDevice(d, &bytes_); }
  uint32_t Name(const std::string& s) { return interner_.Intern(s); }
  void Kernel(const std::string& name, uint64_t start, uint64_t end, uint64_t correlation = 0) {
    KernelRecord k;
    k.name_id = Name(name);
    k.start_ns = start;
    k.end_ns = end;
    k.correlation_id = correlation;
    k.grid[0] = k.block[0] = 1;
    batch_.kernels.push_back(k);
  }
  RecordBatch& batch() { return batch_; }
  void Flush() {
    enc_.EncodeBatch(batch_, interner_, &bytes_);
    batch_ = RecordBatch();
  }
  void Counters(const CounterBatchInfo& c) { enc_.EncodeCounters(c, interner_, &bytes_); }
  void Statistics(const StatsInfo& s) { enc_.EncodeStatistics(s, &bytes_); }
  void End(const std::string& reason) {
    Flush();
    enc_.EncodeEnd(EndInfo{{2000, 1700000000000001000, 2000}, reason}, &bytes_);
  }
  bool Write(const std::string& dir, const std::string& name) {
    return testing::WriteCorpusFile("make_hostile_traces", dir, name, bytes_);
  }

 private:
  TraceEncoder enc_;
  StringInterner interner_;
  RecordBatch batch_;
  std::string bytes_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = cutrace::testing::CorpusDir(argc, argv, "make_hostile_traces");
  if (dir.empty()) return 2;
  bool ok = true;

  {  // One kernel ending 1 ns before 2^64: the timeline's last bin wrapped.
    Trace t;
    t.Device(0, "GPU");
    t.Kernel("_Z4latev", kMax - 1001, kMax - 1);
    t.End("exit");
    ok &= t.Write(dir, "kernel_near_2e64.trace");
  }
  {  // One kernel over the whole clock: span 2^64 - 1 (length_error).
    Trace t;
    t.Device(0, "GPU");
    t.Kernel("_Z5wholev", 0, kMax);
    t.End("exit");
    ok &= t.Write(dir, "kernel_whole_clock.trace");
  }
  {  // Three launches of 2^63 ns each: the sum passes 2^64 (it wrapped to a
     // small number). Total and Avg must show as overflowed.
    Trace t;
    t.Device(0, "GPU");
    const uint64_t half = uint64_t{1} << 63;
    t.Kernel("huge", 0, half);
    t.Kernel("huge", 1, half + 1);
    t.Kernel("huge", 2, half + 2);
    t.Kernel("small", 10, 20);
    t.End("exit");
    ok &= t.Write(dir, "durations_sum_past_2e64.trace");
  }
  {  // Escape sequences in every string a report shows.
    HeaderInfo h = Trace::Header();
    h.host = "host" + kEsc;
    h.command_line = {"./app" + kEsc, "--flag=" + kEsc};
    h.rank = "0" + kEsc;
    Trace t(h);
    t.Device(0, "GPU" + kEsc);
    t.Kernel("kernel" + kEsc, 100, 200, 7);
    RangeRecord r;
    r.name_id = t.Name("range" + kEsc);
    r.start_ns = 50;
    r.end_ns = 300;
    r.thread_id = 1;
    t.batch().ranges.push_back(r);
    ApiRecord a;
    a.name_id = t.Name("cudaLaunchKernel" + kEsc);
    a.start_ns = 60;
    a.end_ns = 90;
    a.thread_id = 1;
    a.correlation_id = 7;
    t.batch().api_calls.push_back(a);
    t.End("exit" + kEsc);
    ok &= t.Write(dir, "control_characters.trace");
  }
  {  // Names a spreadsheet would run as formulas.
    Trace t;
    t.Device(0, "GPU");
    uint64_t at = 100;
    for (const char* name : {"=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTAB",
                             "plain"}) {
      t.Kernel(name, at, at + 10);
      at += 100;
    }
    t.End("exit");
    ok &= t.Write(dir, "csv_formula_names.trace");
  }
  {  // Counter-only kernels whose gpu__time_duration is absurd: 1e30 ns
     // (past 2^64), negative, and NaN. Converting them to integers was UB.
    Trace t;
    t.Device(0, "GPU");
    t.Flush();
    CounterBatchInfo c;
    c.scope = "kernel";
    c.metric_name_ids = {t.Name("gpu__time_duration.sum")};
    c.samples.push_back({0, 0, 0, {1e30}, 1, t.Name("counted_huge"), 0, 0, 0});
    c.samples.push_back({0, 0, 0, {1e30}, 1, t.Name("counted_huge"), 0, 0, 0});
    c.samples.push_back({0, 0, 0, {-5.0}, 1, t.Name("counted_negative"), 0, 0, 0});
    c.samples.push_back(
        {0, 0, 0, {std::numeric_limits<double>::quiet_NaN()}, 1, t.Name("counted_nan"), 0, 0, 0});
    t.Counters(c);
    t.End("exit");
    ok &= t.Write(dir, "counter_time_1e30.trace");
  }
  {  // A start anchor whose realtime - trace offset overflows int64 (merge).
    HeaderInfo h = Trace::Header();
    h.start_anchor = {-5, std::numeric_limits<int64_t>::max(), 0};
    Trace t(h);
    t.Device(0, "GPU");
    t.Kernel("_Z1kv", 100, 200);
    t.End("exit");
    ok &= t.Write(dir, "anchor_offset_overflow.trace");
  }
  {  // Timestamps past 2^63 with an ordinary anchor: placing them on the
     // realtime clock leaves int64 (merge, and export of several files).
    Trace t;
    t.Device(0, "GPU");
    t.Kernel("_Z4latev", (uint64_t{1} << 63) + 5, (uint64_t{1} << 63) + 10);
    t.End("exit");
    ok &= t.Write(dir, "timestamps_past_2e63.trace");
  }
  {  // A Statistics packet with every count at 2^64 - 1 (records_handled 0,
     // so readers fall back to the sum of the kinds) and control bytes in
     // its invalid entries: sums saturate, never wrap; names are escaped.
    Trace t;
    t.Device(0, "GPU");
    t.Kernel("_Z1kv", 100, 200);
    StatsInfo s;
    for (const StatsCounter& c : kStatsCounters) s.*c.member = kMax;
    s.records_handled = 0;
    s.invalid = {{"kernel" + kEsc, "inverted", kMax}, {"memcpy", "reason" + kEsc, kMax}};
    t.Statistics(s);
    t.End("exit");
    ok &= t.Write(dir, "statistics_absurd.trace");
  }
  {  // Devices no GPU has: NaN and infinite bandwidth, every count at its
     // type's top, SM limits that make one warp a block; a kernel on each
     // that asks for all of them. Reports stay whole, info says what is there.
    Trace t;
    const double kNan = std::numeric_limits<double>::quiet_NaN();
    const double kInf = std::numeric_limits<double>::infinity();
    const uint32_t kMax32 = std::numeric_limits<uint32_t>::max();
    uint32_t id = 0;
    for (double bandwidth : {kNan, kInf, -kInf}) {
      DeviceInfo d;
      d.id = id == 2 ? kMax32 : id;
      d.name = "GPU" + kEsc;
      d.uuid = std::string("\x00\xff\x1b", 3) + static_cast<char>('a' + id);  // AP8bYQ==, ...
      d.sm_count = kMax32;
      d.global_memory_bytes = kMax;
      d.compute_capability_major = d.compute_capability_minor = kMax32;
      d.peak_sm_clock_khz = d.memory_clock_khz = kMax;
      d.memory_bus_width_bits = kMax32;
      d.peak_memory_bandwidth_gbps = bandwidth;
      d.max_warps_per_sm = d.max_blocks_per_sm = d.max_registers_per_sm = kMax32;
      d.max_shared_memory_per_sm_bytes = d.max_threads_per_block = d.warp_size = kMax32;
      d.pci_bus_id = kEsc;
      t.Device(d);
      t.Kernel("_Z1kv", 100 + id, 200 + id);
      KernelRecord& k = t.batch().kernels.back();
      k.device_id = d.id;
      k.block[0] = k.block[1] = k.block[2] = kMax32;
      k.registers_per_thread = k.static_shared_bytes = k.dynamic_shared_bytes = kMax32;
      k.shared_memory_config_bytes = kMax32;
      ++id;
    }
    t.End("exit");
    ok &= t.Write(dir, "device_absurd.trace");
  }
  return ok ? 0 : 1;
}
