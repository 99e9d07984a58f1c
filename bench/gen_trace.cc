// gen_trace: writes a synthetic cutrace trace of about N events through the
// collector's TraceWriter, for measuring the CLI (bench/analysis_speed.sh)
// and trace size, and optionally the equivalent Kineto-style Chrome JSON
// (what torch.profiler writes) for comparing with `cutrace import` and with
// Python's json module.
//
//   gen_trace --events N --out FILE [--chrome OUT.json] [--seed S]
//             [--names 50] [--devices 2] [--streams 4] [--summary-batches K]
//
// --summary-batches K writes a summary-mode trace instead (mode "summary"):
// the same records through the collector's SummaryAggregator, one
// SummaryPacket every K buffers, as the injected library's summary mode does.
//
// The mix is what a training loop under cutrace looks like: one host thread
// per device launches through cudaLaunchKernel / cudaMemcpyAsync /
// cudaMemsetAsync on several streams, inside NVTX ranges ("step" holding
// "forward", "backward", "optimizer"), and synchronizes most steps
// (cudaStreamSynchronize and its SyncRecord), which leaves idle gaps. About
// 85% of GPU operations are kernels of `--names` distinct names whose
// durations are log-normal around a per-name scale (2 us .. 500 us).
//
// Records reach the file as CUPTI delivers them: each host thread's API calls
// and ranges (ranges at their end, so outer after inner) in one buffer, each
// device's GPU records in another, in completion order; a full buffer becomes
// one packet. Packets therefore overlap in time and are only near-sorted,
// like real traces. Prints one JSON line of counts to stdout.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collector/string_interner.h"
#include "collector/summary_aggregator.h"
#include "collector/trace_writer.h"

namespace cutrace {
namespace {

struct Options {
  uint64_t events = 1'000'000;
  std::string out;
  std::string chrome;
  uint64_t seed = 1;
  uint32_t names = 50;
  uint32_t devices = 2;
  uint32_t streams = 4;
  uint32_t summary_batches = 0;  // 0: events; else a SummaryPacket every this many buffers
};

class Rng {
 public:
  explicit Rng(uint64_t seed) : x_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return x_;
  }
  double Unit() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  uint64_t Below(uint64_t n) { return Next() % n; }
  // Roughly normal (sum of uniforms), mean 0, sd 1.
  double Normal() {
    double s = 0;
    for (int i = 0; i < 12; ++i) s += Unit();
    return s - 6.0;
  }

 private:
  uint64_t x_;
};

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;
constexpr size_t kHostBuffer = 8192;  // records per host-thread packet
constexpr size_t kGpuBuffer = 4096;   // records per device packet

// Writes the Chrome JSON form of the same records, one event per line.
class ChromeOut {
 public:
  bool Open(const std::string& path) {
    f_ = std::fopen(path.c_str(), "w");
    if (!f_) return false;
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    std::fputs("{\"schemaVersion\":1,\"deviceProperties\":[", f_);
    return true;
  }
  bool on() const { return f_ != nullptr; }
  void Devices(uint32_t n) {
    for (uint32_t d = 0; d < n; ++d)
      std::fprintf(f_, "%s{\"id\":%u,\"name\":\"NVIDIA H200\",\"numSms\":132}", d ? "," : "", d);
    std::fputs("],\"traceEvents\":[\n", f_);
  }
  // ts/dur as microseconds with exactly three decimals: exact in ns.
  void Event(const char* cat, const std::string& name, uint64_t pid, uint64_t tid, uint64_t start,
             uint64_t end, const char* args) {
    uint64_t dur = end - start;
    std::fprintf(f_,
                 "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%" PRIu64
                 ",\"tid\":%" PRIu64 ",\"ts\":%" PRIu64 ".%03" PRIu64 ",\"dur\":%" PRIu64
                 ".%03" PRIu64 ",\"args\":{%s}}",
                 first_ ? "" : ",\n", cat, name.c_str(), pid, tid, start / 1000, start % 1000,
                 dur / 1000, dur % 1000, args);
    first_ = false;
  }
  bool Close() {
    if (!f_) return true;
    std::fputs("\n]}\n", f_);
    return std::fclose(f_) == 0;
  }

 private:
  std::FILE* f_ = nullptr;
  bool first_ = true;
};

class Generator {
 public:
  Generator(const Options& o, TraceWriter* writer, ChromeOut* chrome)
      : o_(o), rng_(o.seed), writer_(writer), chrome_(chrome) {}

  bool Run();
  uint64_t emitted(int kind) const { return counts_[kind]; }

 private:
  struct Kernel {
    uint32_t id;
    std::string demangled;
    double scale_ns;
  };
  struct Host {
    uint64_t tid;
    uint64_t now;
    RecordBatch buffer;
    uint32_t depth = 0;
  };
  struct Device {
    std::vector<uint64_t> stream_free;
    RecordBatch buffer;
  };

  void Setup();
  void Step(uint32_t d);
  void Op(uint32_t d, Host& h, uint32_t stream);
  ApiRecord& Call(Host& h, uint32_t name, uint64_t dur, uint64_t corr);
  void Range(Host& h, uint32_t name, uint64_t start, uint64_t end, uint32_t depth);
  void FlushHost(Host& h, bool force);
  void FlushDevice(Device& dev, bool force);
  void ChromeBatch(const RecordBatch& b, uint64_t host_tid);
  bool Done() const { return total() >= o_.events; }
  uint64_t total() const {
    uint64_t n = 0;
    for (uint64_t c : counts_) n += c;
    return n;
  }

  Options o_;
  Rng rng_;
  TraceWriter* writer_;
  // Summary mode: the aggregator, buffers since the last interval closed,
  // and the latest end seen (where the next interval closes).
  SummaryAggregator aggregator_;
  uint32_t batches_in_interval_ = 0;
  uint64_t latest_end_ = 0;
  void Emit(const RecordBatch& b, bool last);
  ChromeOut* chrome_;
  StringInterner strings_;
  std::vector<Kernel> kernels_;
  std::vector<uint32_t> kernel_index_;  // name id -> index into kernels_
  std::vector<Host> hosts_;
  std::vector<Device> devices_;
  uint32_t api_launch_ = 0, api_memcpy_ = 0, api_memset_ = 0, api_sync_ = 0;
  uint32_t r_step_ = 0, r_phase_[3] = {0, 0, 0};
  uint64_t next_corr_ = 1;
  uint64_t counts_[6] = {0, 0, 0, 0, 0, 0};  // kernels memcpys memsets ranges api syncs
  bool ok_ = true;
};

void Generator::Setup() {
  static const char* kStems[] = {"gemm", "softmax", "layernorm", "gelu", "reduce", "copy",
                                 "attention", "elementwise", "dropout", "adam"};
  for (uint32_t i = 0; i < o_.names; ++i) {
    // A real mangled name, so the trace carries mangled + demangled forms.
    std::string stem = std::string(kStems[i % 10]) + "_k" + std::to_string(i);
    std::string mangled = "_Z" + std::to_string(stem.size()) + stem + "PfPKfi";
    double scale = 2000.0 * std::pow(250.0, rng_.Unit());  // 2 us .. 500 us
    kernels_.push_back({strings_.Intern(mangled), Demangle(mangled), scale});
    kernel_index_.resize(kernels_.back().id + 1, 0);
    kernel_index_[kernels_.back().id] = i;
  }
  api_launch_ = strings_.Intern("cudaLaunchKernel");
  api_memcpy_ = strings_.Intern("cudaMemcpyAsync");
  api_memset_ = strings_.Intern("cudaMemsetAsync");
  api_sync_ = strings_.Intern("cudaStreamSynchronize");
  r_step_ = strings_.Intern("step");
  r_phase_[0] = strings_.Intern("forward");
  r_phase_[1] = strings_.Intern("backward");
  r_phase_[2] = strings_.Intern("optimizer");
  for (uint32_t d = 0; d < o_.devices; ++d) {
    hosts_.push_back({1000 + d, kT0 + 1000 * d, {}, 0});
    devices_.push_back({std::vector<uint64_t>(o_.streams, kT0), {}});
  }
}

ApiRecord& Generator::Call(Host& h, uint32_t name, uint64_t dur, uint64_t corr) {
  ApiRecord a;
  a.start_ns = h.now;
  a.end_ns = h.now + dur;
  a.thread_id = h.tid;
  a.correlation_id = corr;
  a.name_id = name;
  a.callback_id = name == api_launch_ ? 211 : name == api_sync_ ? 131 : 51;
  h.now = a.end_ns + 200 + rng_.Below(800);  // host work between calls
  h.buffer.api_calls.push_back(a);
  ++counts_[4];
  return h.buffer.api_calls.back();
}

void Generator::Range(Host& h, uint32_t name, uint64_t start, uint64_t end, uint32_t depth) {
  RangeRecord r;
  r.start_ns = start;
  r.end_ns = end;
  r.thread_id = h.tid;
  r.name_id = name;
  r.depth = depth;
  r.kind = RangeKind::kPushPop;
  h.buffer.ranges.push_back(r);
  ++counts_[3];
}

void Generator::Op(uint32_t d, Host& h, uint32_t stream) {
  Device& dev = devices_[d];
  uint64_t corr = next_corr_++;
  uint64_t roll = rng_.Below(100);
  uint64_t call_start = h.now;
  uint64_t ready = call_start + 3000 + rng_.Below(4000);  // launch latency
  uint64_t& free = dev.stream_free[stream];
  uint64_t start = std::max(ready, free);
  if (roll < 85) {
    const Kernel& k = kernels_[std::min<uint64_t>(rng_.Below(o_.names), rng_.Below(o_.names))];
    double dur = k.scale_ns * std::exp(0.25 * rng_.Normal());
    Call(h, api_launch_, 2500 + rng_.Below(2500), corr);
    KernelRecord r;
    r.start_ns = start;
    r.end_ns = start + static_cast<uint64_t>(std::max(500.0, dur));
    r.correlation_id = corr;
    r.queued_ns = start - call_start;
    r.name_id = k.id;
    r.device_id = d;
    r.context_id = 1;
    r.stream_id = 7 + stream;
    r.grid[0] = 108 * (1 + k.id % 4);
    r.grid[1] = r.grid[2] = 1;
    r.block[0] = 128 << (k.id % 3);
    r.block[1] = r.block[2] = 1;
    r.registers_per_thread = 32 + 8 * (k.id % 5);
    r.static_shared_bytes = 1024 * (k.id % 8);
    free = r.end_ns;
    dev.buffer.kernels.push_back(r);
    ++counts_[0];
  } else if (roll < 96) {
    Call(h, api_memcpy_, 3000 + rng_.Below(3000), corr);
    MemcpyRecord m;
    static const CopyKind kKinds[] = {CopyKind::kHtoD, CopyKind::kDtoH, CopyKind::kDtoD};
    m.copy_kind = kKinds[rng_.Below(3)];
    m.bytes = uint64_t{4096} << rng_.Below(12);
    bool pageable = m.copy_kind != CopyKind::kDtoD && rng_.Below(10) == 0;
    m.src_kind = m.copy_kind == CopyKind::kHtoD ? (pageable ? MemoryKind::kPageable
                                                            : MemoryKind::kPinned)
                                                : MemoryKind::kDevice;
    m.dst_kind = m.copy_kind == CopyKind::kDtoH ? (pageable ? MemoryKind::kPageable
                                                            : MemoryKind::kPinned)
                                                : MemoryKind::kDevice;
    m.start_ns = start;
    m.end_ns = start + 1500 + m.bytes / 20;  // ~20 GB/s plus setup
    m.correlation_id = corr;
    m.device_id = d;
    m.context_id = 1;
    m.stream_id = 7 + stream;
    m.flags = 1;
    free = m.end_ns;
    dev.buffer.memcpys.push_back(m);
    ++counts_[1];
  } else {
    Call(h, api_memset_, 2000 + rng_.Below(2000), corr);
    MemsetRecord m;
    m.start_ns = start;
    m.bytes = uint64_t{4096} << rng_.Below(8);
    m.end_ns = start + 1000 + m.bytes / 200;
    m.correlation_id = corr;
    m.device_id = d;
    m.context_id = 1;
    m.stream_id = 7 + stream;
    m.memory_kind = MemoryKind::kDevice;
    free = m.end_ns;
    dev.buffer.memsets.push_back(m);
    ++counts_[2];
  }
  FlushDevice(dev, false);
}

// One training step on device d: three phases of launches in NVTX ranges,
// then a stream synchronize that waits for the device to drain.
void Generator::Step(uint32_t d) {
  Host& h = hosts_[d];
  Device& dev = devices_[d];
  uint64_t step_start = h.now;
  h.now += 500;
  for (int phase = 0; phase < 3; ++phase) {
    uint64_t phase_start = h.now;
    h.now += 300;
    uint64_t ops = 8 + rng_.Below(40);
    for (uint64_t i = 0; i < ops; ++i) Op(d, h, static_cast<uint32_t>(rng_.Below(o_.streams)));
    Range(h, r_phase_[phase], phase_start, h.now, 1);
    h.now += 300;
  }
  // Most steps end in a stream synchronize that waits for the device to
  // drain (gaps caused by host_sync); every fourth does not (the next
  // step's launches come late: host_busy).
  if (rng_.Below(4) != 0) {
    uint64_t corr = next_corr_++;
    uint64_t drained = *std::max_element(dev.stream_free.begin(), dev.stream_free.end());
    uint64_t sync_start = h.now;
    uint64_t sync_end = std::max(sync_start + 1500, drained + 2000);
    Call(h, api_sync_, sync_end - sync_start, corr);
    SyncRecord s;
    s.start_ns = sync_start + 500;
    s.end_ns = sync_end - 500;
    s.correlation_id = corr;
    s.context_id = 1;
    s.stream_id = 7;
    s.device_id = d;
    s.kind = SyncKind::kStreamSynchronize;
    h.buffer.syncs.push_back(s);
    ++counts_[5];
  }
  Range(h, r_step_, step_start, h.now, 0);
  // Host-side work between steps (data loading): the GPU idles meanwhile.
  h.now += 20000 + rng_.Below(200000);
  FlushHost(h, false);
}

void Generator::ChromeBatch(const RecordBatch& b, uint64_t host_tid) {
  if (!chrome_->on()) return;
  char args[256];
  const uint64_t pid = 4242;
  for (const KernelRecord& k : b.kernels) {
    std::snprintf(args, sizeof args,
                  "\"device\":%u,\"context\":1,\"stream\":%u,\"correlation\":%" PRIu64
                  ",\"registers per thread\":%u,\"shared memory\":%u,\"grid\":[%u,1,1],"
                  "\"block\":[%u,1,1]",
                  k.device_id, k.stream_id, k.correlation_id, k.registers_per_thread,
                  k.static_shared_bytes, k.grid[0], k.block[0]);
    chrome_->Event("kernel", kernels_[kernel_index_[k.name_id]].demangled, k.device_id,
                   k.stream_id, k.start_ns, k.end_ns, args);
  }
  for (const MemcpyRecord& m : b.memcpys) {
    static const char* kMem[] = {"Unknown", "Pageable", "Pinned", "Device"};
    std::string name = std::string("Memcpy ") +
                       (m.copy_kind == CopyKind::kHtoD   ? "HtoD"
                        : m.copy_kind == CopyKind::kDtoH ? "DtoH"
                                                         : "DtoD") +
                       " (" + kMem[static_cast<int>(m.src_kind)] + " -> " +
                       kMem[static_cast<int>(m.dst_kind)] + ")";
    std::snprintf(args, sizeof args,
                  "\"device\":%u,\"context\":1,\"stream\":%u,\"correlation\":%" PRIu64
                  ",\"bytes\":%" PRIu64,
                  m.device_id, m.stream_id, m.correlation_id, m.bytes);
    chrome_->Event("gpu_memcpy", name, m.device_id, m.stream_id, m.start_ns, m.end_ns, args);
  }
  for (const MemsetRecord& m : b.memsets) {
    std::snprintf(args, sizeof args,
                  "\"device\":%u,\"context\":1,\"stream\":%u,\"correlation\":%" PRIu64
                  ",\"bytes\":%" PRIu64,
                  m.device_id, m.stream_id, m.correlation_id, m.bytes);
    chrome_->Event("gpu_memset", "Memset (Device)", m.device_id, m.stream_id, m.start_ns,
                   m.end_ns, args);
  }
  for (const RangeRecord& r : b.ranges)
    chrome_->Event("user_annotation", strings_.Lookup(r.name_id), pid, host_tid, r.start_ns,
                   r.end_ns, "");
  for (const ApiRecord& a : b.api_calls) {
    std::snprintf(args, sizeof args, "\"cbid\":%u,\"correlation\":%" PRIu64, a.callback_id,
                  a.correlation_id);
    chrome_->Event("cuda_runtime", strings_.Lookup(a.name_id), pid, host_tid, a.start_ns,
                   a.end_ns, args);
  }
  for (const SyncRecord& s : b.syncs) {
    std::snprintf(args, sizeof args,
                  "\"cuda_sync_kind\":\"Stream Sync\",\"stream\":%u,\"correlation\":%" PRIu64
                  ",\"device\":%u,\"context\":1",
                  s.stream_id, s.correlation_id, s.device_id);
    chrome_->Event("cuda_sync", "Stream Sync", pid, host_tid, s.start_ns, s.end_ns, args);
  }
}

void Generator::FlushHost(Host& h, bool force) {
  RecordBatch& b = h.buffer;
  if (b.empty() || (!force && b.size() < kHostBuffer)) return;
  Emit(b, false);
  ChromeBatch(b, h.tid);
  b.clear();
}

void Generator::FlushDevice(Device& dev, bool force) {
  RecordBatch& b = dev.buffer;
  if (b.empty() || (!force && b.size() < kGpuBuffer)) return;
  // CUPTI writes GPU records as they complete: in end order across streams.
  auto by_end = [](const auto& a, const auto& b) { return a.end_ns < b.end_ns; };
  std::stable_sort(b.kernels.begin(), b.kernels.end(), by_end);
  std::stable_sort(b.memcpys.begin(), b.memcpys.end(), by_end);
  std::stable_sort(b.memsets.begin(), b.memsets.end(), by_end);
  Emit(b, false);
  ChromeBatch(b, 0);
  b.clear();
}

void Generator::Emit(const RecordBatch& b, bool last) {
  if (o_.summary_batches == 0) {
    if (!b.empty() && !writer_->WriteBatch(b, strings_).ok()) ok_ = false;
    return;
  }
  if (latest_end_ == 0) aggregator_.Begin(static_cast<int64_t>(kT0));
  aggregator_.Add(b);
  for (const KernelRecord& k : b.kernels) latest_end_ = std::max(latest_end_, k.end_ns);
  for (const ApiRecord& a : b.api_calls) latest_end_ = std::max(latest_end_, a.end_ns);
  if (++batches_in_interval_ < o_.summary_batches && !last) return;
  batches_in_interval_ = 0;
  SummaryInfo info = aggregator_.Close(static_cast<int64_t>(latest_end_ + 1));
  if (!writer_->WriteSummary(info, strings_).ok()) ok_ = false;
}

bool Generator::Run() {
  Setup();
  HeaderInfo header;
  header.producer = "cutrace-gen_trace 0.1.0";
  header.host = "synthetic";
  header.pid = 4242;
  header.command_line = {"gen_trace", "--events", std::to_string(o_.events)};
  header.clock = ClockDomain::kCupti;
  header.source_format = "cupti";
  header.mode = o_.summary_batches ? "summary" : "trace";
  header.enabled_kinds = {"kernel", "memcpy", "memset", "nvtx", "runtime", "sync"};
  ok_ = writer_->WriteHeader(header).ok();
  if (chrome_->on()) chrome_->Devices(o_.devices);
  for (uint32_t d = 0; d < o_.devices; ++d) {
    DeviceInfo dev;
    dev.id = d;
    dev.name = "NVIDIA H200";
    dev.sm_count = 132;
    dev.global_memory_bytes = 150'000'000'000ull;
    dev.compute_capability_major = 9;
    dev.max_warps_per_sm = 64;
    // The SM's limits, so that reports compute theoretical occupancy as on a
    // trace the library writes.
    dev.max_blocks_per_sm = 32;
    dev.max_registers_per_sm = 65536;
    dev.max_shared_memory_per_sm_bytes = 233472;
    dev.max_threads_per_block = 1024;
    dev.warp_size = 32;
    ok_ = ok_ && writer_->WriteDevice(dev).ok();
  }
  // Devices take turns a step at a time, so their threads' packets interleave.
  while (ok_ && !Done()) {
    for (uint32_t d = 0; d < o_.devices && !Done(); ++d) Step(d);
  }
  for (Host& h : hosts_) FlushHost(h, true);
  for (Device& dev : devices_) FlushDevice(dev, true);
  if (o_.summary_batches) Emit(RecordBatch{}, true);
  StatsInfo stats;
  stats.kernels = counts_[0];
  stats.memcpys = counts_[1];
  stats.memsets = counts_[2];
  stats.ranges = counts_[3];
  stats.api_calls = counts_[4];
  stats.syncs = counts_[5];
  ok_ = ok_ && writer_->WriteStatistics(stats).ok();
  EndInfo end;
  end.reason = "exit";
  ok_ = ok_ && writer_->WriteEnd(end).ok();
  return ok_ && writer_->Close().ok();
}

int Usage() {
  std::fprintf(stderr,
               "usage: gen_trace --events N --out FILE [--chrome OUT.json] [--seed S]\n"
               "                 [--names 50] [--devices 2] [--streams 4] [--summary-batches K]\n");
  return 2;
}

}  // namespace
}  // namespace cutrace

int main(int argc, char** argv) {
  using namespace cutrace;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    std::string v = argv[++i];
    char* end = nullptr;
    uint64_t n = std::strtoull(v.c_str(), &end, 10);
    bool number = end && *end == '\0' && !v.empty();
    if (a == "--out") o.out = v;
    else if (a == "--chrome") o.chrome = v;
    else if (a == "--events" && number && n > 0) o.events = n;
    else if (a == "--seed" && number) o.seed = n;
    else if (a == "--names" && number && n > 0 && n < 100000) o.names = static_cast<uint32_t>(n);
    else if (a == "--devices" && number && n > 0 && n <= 64) o.devices = static_cast<uint32_t>(n);
    else if (a == "--streams" && number && n > 0 && n <= 64) o.streams = static_cast<uint32_t>(n);
    else if (a == "--summary-batches" && number && n > 0 && n < 1000000)
      o.summary_batches = static_cast<uint32_t>(n);
    else return Usage();
  }
  if (o.out.empty()) return Usage();
  ::unlink(o.out.c_str());  // TraceWriter never overwrites: a rerun replaces the file
  StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(o.out);
  if (!writer.ok()) {
    std::fprintf(stderr, "gen_trace: %s\n", writer.status().message().c_str());
    return 1;
  }
  ChromeOut chrome;
  if (!o.chrome.empty() && !chrome.Open(o.chrome)) {
    std::fprintf(stderr, "gen_trace: cannot create %s: %s\n", o.chrome.c_str(),
                 std::strerror(errno));
    return 1;
  }
  Generator gen(o, writer->get(), &chrome);
  bool ok = gen.Run();
  ok = chrome.Close() && ok;
  if (!ok) {
    std::fprintf(stderr, "gen_trace: writing failed: %s\n",
                 (*writer)->status().message().c_str());
    return 1;
  }
  uint64_t total = 0;
  for (int k = 0; k < 6; ++k) total += gen.emitted(k);
  std::printf("{\"events\":%" PRIu64 ",\"kernels\":%" PRIu64 ",\"memcpys\":%" PRIu64
              ",\"memsets\":%" PRIu64 ",\"ranges\":%" PRIu64 ",\"api_calls\":%" PRIu64
              ",\"syncs\":%" PRIu64 ",\"bytes\":%" PRIu64 "}\n",
              total, gen.emitted(0), gen.emitted(1), gen.emitted(2), gen.emitted(3),
              gen.emitted(4), gen.emitted(5), (*writer)->bytes_written());
  return 0;
}
