// Maps Chrome/Kineto events, as ReadChromeTrace streams them, onto cutrace
// records (see chrome_import.h for the mapping and the error policy), then
// computes NVTX-style nesting depths and sorts each kind by start time.
#include "interop/kineto/chrome_import.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "interop/kineto/chrome_json_reader.h"
#include "interop/kineto/kineto_names.h"

namespace cutrace::interop {
namespace {

constexpr int64_t kMaxDeviceId = int64_t{1} << 20;
constexpr size_t kMaxNamedSkippedCategories = 32;
constexpr size_t kMaxBareDevices = 256;
constexpr size_t kMaxProcessNames = 4096;
// String pids/tids become ids from here on (ChromeId::string 1, 2, ...): far
// above Kineto's tids (positive int32) and, as 32-bit streams, above 2^31.
constexpr uint64_t kStringIdBase = uint64_t{3} << 31;

using Cat = KinetoCategory;

// For messages: control characters replaced, cut on a UTF-8 boundary.
std::string Printable(std::string_view s, size_t limit) {
  bool cut = s.size() > limit;
  if (cut) {
    while (limit > 0 && (static_cast<unsigned char>(s[limit]) & 0xC0) == 0x80) --limit;
    s = s.substr(0, limit);
  }
  std::string out;
  for (char c : s) out.push_back(static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  if (cut) out += "...";
  return out;
}

uint64_t IdBits(const ChromeId& id) {
  if (!id.present) return 0;
  if (id.numeric) return static_cast<uint64_t>(id.value);
  return id.string ? kStringIdBase + id.string : 0;
}

uint64_t NonNegative(int64_t v) { return v < 0 ? 0 : static_cast<uint64_t>(v); }
uint32_t Clamp32(int64_t v) {
  return v < 0 ? 0 : v > int64_t{UINT32_MAX} ? UINT32_MAX : static_cast<uint32_t>(v);
}

class Importer {
 public:
  Importer(const ChromeImportOptions& options, ImportedTrace* out) : options_(options), out_(out) {}
  Status OnEvent(ChromeEvent& e);
  void Finish(const ChromeTraceMetadata& meta);
  Status AddBase(int64_t base_ns);
  // The realtime anchor (chrome_import.h; chrome_time.h says how it is chosen).
  void SetAnchor(const RealtimeAnchor& a) {
    out_->anchor = {a.trace_ns, a.realtime_ns};
    out_->anchor_source = a.source;
  }

 private:
  Status Error(const ChromeEvent& e, const std::string& what) const {
    return Status::Error("event #" + std::to_string(e.index) + " (" + Printable(e.cat, 40) +
                         " \"" + Printable(e.name, 48) + "\"): " + what);
  }
  static void CheckTime(const ChromeTime& t, const char* field, bool required,
                        std::string* problem);
  Status Device(const ChromeEvent& e, uint32_t* device);
  Status Stream(const ChromeEvent& e, uint32_t* stream);
  uint32_t Intern(const std::string& s) { return out_->strings->Intern(s); }
  void ComputeDepths();

  ChromeImportOptions options_;
  ImportedTrace* out_;
  ChromeImportCounts& counts() { return out_->counts; }
  std::unordered_map<std::string, uint64_t> skipped_;
  std::set<uint32_t> devices_seen_;
  std::vector<uint64_t> range_group_;  // per range: pid (CPU) or device (GPU), for depths
  std::map<int64_t, std::string> process_names_;  // "process_name" metadata, by pid
  bool host_pid_known_ = false;
  // ProfilerStep#N written as operators (older PyTorch): their ranges'
  // indices; dropped when annotations of the steps came too.
  std::vector<size_t> operator_steps_;
  bool annotated_steps_ = false;
};

void Importer::CheckTime(const ChromeTime& t, const char* field, bool required,
                         std::string* problem) {
  switch (t.state) {
    case ChromeTime::State::kAbsent:
      if (required) *problem = std::string("no \"") + field + "\"";
      break;
    case ChromeTime::State::kNotNumber:
      *problem = "\"" + std::string(field) + "\" is not a number: " + t.text;
      break;
    case ChromeTime::State::kOutOfRange:
      *problem = "\"" + std::string(field) + "\" out of range: " + t.text;
      break;
    case ChromeTime::State::kOk:
      if (t.ns < 0)
        *problem = "negative " + std::string(field) + " " + NanosToMicrosText(t.ns) + " us";
      break;
  }
}

Status Importer::Device(const ChromeEvent& e, uint32_t* device) {
  int64_t v = 0;
  if (e.args.Has(ChromeArgs::kDevice)) {
    v = e.args.device;
    if (v < 0 || v >= kMaxDeviceId) return Error(e, "absurd device id " + std::to_string(v));
  } else if (e.args.Has(ChromeArgs::kInDevice) && e.args.in_device >= 0 &&
             e.args.in_device < kMaxDeviceId) {
    v = e.args.in_device;
  } else if (e.pid.present && e.pid.numeric && e.pid.value >= 0 && e.pid.value < kMaxDeviceId) {
    v = e.pid.value;
    ++counts().device_from_pid;
  } else {
    ++counts().device_unknown;
  }
  *device = static_cast<uint32_t>(v);
  if (devices_seen_.size() < kMaxBareDevices) devices_seen_.insert(*device);
  return Status::Ok();
}

Status Importer::Stream(const ChromeEvent& e, uint32_t* stream) {
  if (e.args.Has(ChromeArgs::kStream)) {
    int64_t v = e.args.stream;
    // CUPTI marks "no stream" (context syncs) as -1; Kineto prints it signed.
    if (v < -1 || v > int64_t{UINT32_MAX}) return Error(e, "absurd stream id " + std::to_string(v));
    *stream = static_cast<uint32_t>(v);
  } else {
    *stream = static_cast<uint32_t>(IdBits(e.tid));
  }
  return Status::Ok();
}

Status Importer::OnEvent(ChromeEvent& e) {
  ++counts().trace_events;
  if (e.ph != "X") {
    if (e.ph == "M" && e.name == "process_name" && e.pid.numeric &&
        process_names_.size() < kMaxProcessNames)
      process_names_[e.pid.value] = e.args.name;
    ++counts().skipped_phase;
    return Status::Ok();
  }
  Cat cat = ClassifyCategory(e.cat);
  // The steps: user annotations since PyTorch 1.9 or so; before, the
  // profiler wrote ProfilerStep#N as an operator ("Operator"/"cpu_op").
  // Taken as ranges, unless the file has the annotations too (Finish()).
  const bool step = e.name.rfind("ProfilerStep#", 0) == 0;
  if (step && cat == Cat::kCpuRange) annotated_steps_ = true;
  if (cat == Cat::kCpuOp && !options_.cpu_ops_as_ranges) {
    if (step) {
      cat = Cat::kCpuRange;
      operator_steps_.push_back(out_->records.ranges.size());
    } else {
      cat = Cat::kOther;
    }
  }
  bool imported = cat != Cat::kOther;
  std::string problem;
  // Every complete event's dur is checked (a negative one means the file is
  // corrupt: Kineto clamps its own to 0); ts only where the event is used.
  CheckTime(e.dur, "dur", imported, &problem);
  if (problem.empty() && imported) CheckTime(e.ts, "ts", true, &problem);
  if (!problem.empty()) return Error(e, problem);
  if (!imported) {
    ++counts().skipped_category;
    if (skipped_.size() < 4 * kMaxNamedSkippedCategories || skipped_.count(e.cat))
      ++skipped_[e.cat];
    else
      ++skipped_["(other)"];
    return Status::Ok();
  }
  const bool host_side = cat == Cat::kRuntime || cat == Cat::kDriver ||
                         cat == Cat::kCpuRange || cat == Cat::kCpuOp;
  if (host_side && !host_pid_known_ && e.pid.numeric && e.pid.value > 0) {
    out_->pid = e.pid.value;
    host_pid_known_ = true;
  }
  const uint64_t start = static_cast<uint64_t>(e.ts.ns);
  const uint64_t end = start + static_cast<uint64_t>(e.dur.ns);
  const ChromeArgs& a = e.args;
  const uint64_t correlation = a.Has(ChromeArgs::kCorrelation) ? NonNegative(a.correlation) : 0;
  RecordBatch& rec = out_->records;
  // What every device operation (kernel, copy, memset, sync) takes alike:
  // times, correlation, context, device and stream.
  auto device_op = [&](auto* r) -> Status {
    r->start_ns = start;
    r->end_ns = end;
    r->correlation_id = correlation;
    r->context_id = Clamp32(a.context);
    if (Status s = Device(e, &r->device_id); !s.ok()) return s;
    return Stream(e, &r->stream_id);
  };
  switch (cat) {
    case Cat::kKernel: {
      KernelRecord k;
      k.name_id = Intern(e.name);
      if (Status s = device_op(&k); !s.ok()) return s;
      for (int i = 0; i < 3; ++i) {
        k.grid[i] = Clamp32(a.grid[i]);
        k.block[i] = Clamp32(a.block[i]);
      }
      k.registers_per_thread = Clamp32(a.registers);
      // Kineto prints static + dynamic shared memory as one number.
      k.static_shared_bytes = Clamp32(a.shared_memory);
      rec.kernels.push_back(k);
      ++counts().kernels;
      break;
    }
    case Cat::kMemcpy: {
      MemcpyRecord m;
      m.bytes = NonNegative(a.bytes);
      if (!ParseMemcpyName(e.name, &m)) ++counts().unknown_copy_kind;
      if (Status s = device_op(&m); !s.ok()) return s;
      if (a.Has(ChromeArgs::kFromDevice)) m.src_device_id = Clamp32(a.from_device);
      if (a.Has(ChromeArgs::kToDevice)) m.dst_device_id = Clamp32(a.to_device);
      rec.memcpys.push_back(m);
      ++counts().memcpys;
      break;
    }
    case Cat::kMemset: {
      MemsetRecord m;
      m.bytes = NonNegative(a.bytes);
      m.memory_kind = ParseMemsetName(e.name);
      if (Status s = device_op(&m); !s.ok()) return s;
      rec.memsets.push_back(m);
      ++counts().memsets;
      break;
    }
    case Cat::kRuntime:
    case Cat::kDriver: {
      ApiRecord api;
      api.start_ns = start;
      api.end_ns = end;
      api.correlation_id = correlation;
      api.thread_id = IdBits(e.tid);
      api.name_id = Intern(e.name);
      api.callback_id = Clamp32(a.cbid);
      api.domain = cat == Cat::kRuntime ? ApiDomain::kRuntime : ApiDomain::kDriver;
      rec.api_calls.push_back(api);
      ++counts().api_calls;
      break;
    }
    case Cat::kSync: {
      SyncRecord s;
      s.kind = ParseSyncName(e.name);
      if (Status st = device_op(&s); !st.ok()) return st;
      s.event_id = Clamp32(a.wait_event_id);
      rec.syncs.push_back(s);
      ++counts().syncs;
      break;
    }
    case Cat::kCpuRange:
    case Cat::kCpuOp:
    case Cat::kGpuRange: {
      RangeRecord r;
      r.start_ns = start;
      r.end_ns = end;
      r.name_id = Intern(e.name);
      if (cat == Cat::kGpuRange) {
        r.kind = RangeKind::kGpu;
        if (Status s = Device(e, &r.device_id); !s.ok()) return s;
        uint32_t stream = 0;
        if (Status s = Stream(e, &stream); !s.ok()) return s;
        r.thread_id = stream;
        range_group_.push_back(r.device_id);
        ++counts().gpu_ranges;
      } else {
        r.kind = RangeKind::kPushPop;
        r.thread_id = IdBits(e.tid);
        if (cat == Cat::kCpuOp) r.domain_id = Intern("cpu_op");
        range_group_.push_back(IdBits(e.pid));
        ++counts().cpu_ranges;
      }
      rec.ranges.push_back(r);
      break;
    }
    case Cat::kOther: break;
  }
  return Status::Ok();
}

// Depth of each range among the ranges of its (group, kind, domain, thread):
// the number of earlier ranges still open when it starts. A range that starts
// exactly when another ends is its sibling, not its child.
void Importer::ComputeDepths() {
  std::vector<RangeRecord>& ranges = out_->records.ranges;
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto key = [&](size_t i) {
    const RangeRecord& r = ranges[i];
    return std::make_tuple(range_group_[i], static_cast<int>(r.kind), r.domain_id, r.thread_id);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    auto kx = key(x), ky = key(y);
    if (kx != ky) return kx < ky;
    if (ranges[x].start_ns != ranges[y].start_ns) return ranges[x].start_ns < ranges[y].start_ns;
    return ranges[x].end_ns > ranges[y].end_ns;  // the enclosing range first
  });
  std::vector<uint64_t> open_ends;
  for (size_t n = 0; n < order.size(); ++n) {
    size_t i = order[n];
    if (n == 0 || key(order[n - 1]) != key(i)) open_ends.clear();
    while (!open_ends.empty() && open_ends.back() <= ranges[i].start_ns) open_ends.pop_back();
    ranges[i].depth = static_cast<uint32_t>(open_ends.size());
    open_ends.push_back(ranges[i].end_ns);
  }
}

void Importer::Finish(const ChromeTraceMetadata& meta) {
  if (annotated_steps_ && !operator_steps_.empty()) {
    // The steps twice: keep the annotations, as without --cpu-ops.
    std::vector<RangeRecord>& ranges = out_->records.ranges;
    std::vector<bool> drop(ranges.size(), false);
    for (size_t i : operator_steps_) drop[i] = true;
    size_t w = 0;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (drop[i]) continue;
      ranges[w] = ranges[i];
      range_group_[w] = range_group_[i];
      ++w;
    }
    ranges.resize(w);
    range_group_.resize(w);
    counts().cpu_ranges -= operator_steps_.size();
    counts().skipped_category += operator_steps_.size();
  }
  ComputeDepths();
  auto by_start = [](const auto& x, const auto& y) { return x.start_ns < y.start_ns; };
  RecordBatch& rec = out_->records;
  std::stable_sort(rec.kernels.begin(), rec.kernels.end(), by_start);
  std::stable_sort(rec.memcpys.begin(), rec.memcpys.end(), by_start);
  std::stable_sort(rec.memsets.begin(), rec.memsets.end(), by_start);
  std::stable_sort(rec.ranges.begin(), rec.ranges.end(), by_start);
  std::stable_sort(rec.api_calls.begin(), rec.api_calls.end(), by_start);
  std::stable_sort(rec.syncs.begin(), rec.syncs.end(), by_start);

  counts().skipped_not_object = meta.non_object_events;
  counts().trace_events += meta.non_object_events;
  std::vector<std::pair<std::string, uint64_t>> skipped(skipped_.begin(), skipped_.end());
  std::sort(skipped.begin(), skipped.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  uint64_t rest = 0;
  for (size_t i = kMaxNamedSkippedCategories; i < skipped.size(); ++i) rest += skipped[i].second;
  if (skipped.size() > kMaxNamedSkippedCategories) {
    skipped.resize(kMaxNamedSkippedCategories);
    skipped.emplace_back("(other)", rest);
  }
  counts().skipped_categories = std::move(skipped);

  // Devices: Kineto's deviceProperties where present, bare ids for the rest.
  std::set<uint32_t> described;
  for (const ChromeDeviceProperties& p : meta.devices) {
    if (p.id < 0 || p.id >= kMaxDeviceId || !described.insert(p.id).second) continue;
    DeviceInfo d;
    d.id = static_cast<uint32_t>(p.id);
    d.name = p.name;
    d.sm_count = Clamp32(p.num_sms);
    d.global_memory_bytes = NonNegative(p.total_global_mem);
    d.compute_capability_major = Clamp32(p.compute_major);
    d.compute_capability_minor = Clamp32(p.compute_minor);
    if (p.warp_size > 0) d.max_warps_per_sm = Clamp32(p.max_threads_per_sm / p.warp_size);
    d.warp_size = Clamp32(p.warp_size);
    out_->devices.push_back(std::move(d));
  }
  for (uint32_t id : devices_seen_) {
    if (described.count(id)) continue;
    DeviceInfo d;
    d.id = id;
    out_->devices.push_back(std::move(d));
  }
  std::sort(out_->devices.begin(), out_->devices.end(),
            [](const DeviceInfo& x, const DeviceInfo& y) { return x.id < y.id; });
  out_->rank = meta.rank;
  out_->bare_array = meta.bare_array;
  if (auto name = process_names_.find(out_->pid); name != process_names_.end())
    out_->process_name = name->second;
  auto version = [](int64_t v) { return v > 0 && v <= INT32_MAX ? static_cast<int32_t>(v) : 0; };
  out_->cuda_runtime_version = version(meta.cuda_runtime_version);
  out_->cuda_driver_version = version(meta.cuda_driver_version);
  out_->cupti_version = static_cast<uint32_t>(version(meta.cupti_version));
}

// The earliest start of any record (0 when none).
uint64_t FirstStart(const RecordBatch& records) {
  uint64_t first = UINT64_MAX;
  auto low = [&](auto, const auto& r) {
    if (!r.empty()) first = std::min<uint64_t>(first, r.front().start_ns);
  };
  ForEachKind(low, records);
  return first == UINT64_MAX ? 0 : first;
}

// Moves every record by the exporter's base time (see chrome_import.h).
Status Importer::AddBase(int64_t base_ns) {
  const uint64_t base = static_cast<uint64_t>(base_ns);
  const uint64_t limit = static_cast<uint64_t>(kMaxImportNs) - base;
  bool ok = true;
  auto shift = [&](auto& records) {
    for (auto& r : records) {
      if (r.end_ns >= limit) ok = false;
      r.start_ns += base;
      r.end_ns += base;
    }
  };
  RecordBatch& rec = out_->records;
  shift(rec.kernels);
  shift(rec.memcpys);
  shift(rec.memsets);
  shift(rec.ranges);
  shift(rec.api_calls);
  shift(rec.syncs);
  if (!ok)
    return Status::Error("cutraceBaseTimeNanoseconds " + std::to_string(base_ns) +
                         " pushes timestamps past 2^62 ns");
  return Status::Ok();
}

}  // namespace

StatusOr<ImportedTrace> ImportChromeJson(const PaddedJson& json,
                                         const ChromeImportOptions& options) {
  ImportedTrace trace;
  Importer importer(options, &trace);
  ChromeTraceMetadata meta;
  Status s = ReadChromeTrace(
      json, [&](ChromeEvent& e) { return importer.OnEvent(e); }, &meta);
  if (!s.ok()) return s;
  importer.Finish(meta);
  if (meta.cutrace_base_ns > 0) {
    if (Status b = importer.AddBase(meta.cutrace_base_ns); !b.ok()) return b;
    importer.SetAnchor(ExportAnchor(meta.base_time_ns, meta.cutrace_base_ns));
  } else {
    importer.SetAnchor(ChooseRealtimeAnchor(meta.base_time_ns, FirstStart(trace.records)));
  }
  return trace;
}

StatusOr<ImportedTrace> ImportChromeJson(std::string_view text,
                                         const ChromeImportOptions& options) {
  return ImportChromeJson(PaddedJson::Copy(text), options);
}

}  // namespace cutrace::interop
