// See openmetrics.h.
#include "collector/openmetrics.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "collector/proto_writer.h"
#include "collector/sat_math.h"
#include "collector/short_name.h"

namespace cutrace {
namespace {

// A number in the exposition format: integers exactly, others in the
// fewest digits that read back as the same double (0.00054016, not
// %.17g's 0.00054016000000000003).
std::string Number(double v) {
  char buf[64];
  if (v == static_cast<double>(static_cast<int64_t>(v)) && v < 9.0e15 && v > -9.0e15) {
    std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<int64_t>(v));
    return buf;
  }
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  return std::string(buf, r.ptr);
}

std::string Integer(uint64_t v) { return std::to_string(v); }

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

class Out {
 public:
  // `name` is the samples' name; a counter's family is named without its
  // "_total" suffix, as OpenMetrics requires.
  void Family(const char* name, const char* type, const char* help) {
    std::string family = name;
    const std::string total = "_total";
    if (std::strcmp(type, "counter") == 0 && family.size() > total.size() &&
        family.compare(family.size() - total.size(), total.size(), total) == 0)
      family.resize(family.size() - total.size());
    text_ += "# HELP ";
    text_ += family;
    text_ += ' ';
    text_ += help;
    text_ += "\n# TYPE ";
    text_ += family;
    text_ += ' ';
    text_ += type;
    text_ += '\n';
  }
  void Sample(const char* name, const MetricLabels& common, const MetricLabels& labels,
              const std::string& value) {
    text_ += name;
    std::string l;
    for (const auto& [k, v] : common) l += k + "=" + EscapeLabelValue(v) + ",";
    for (const auto& [k, v] : labels) l += k + "=" + EscapeLabelValue(v) + ",";
    if (!l.empty()) {
      l.pop_back();
      text_ += "{" + l + "}";
    }
    text_ += ' ';
    text_ += value;
    text_ += '\n';
  }
  std::string Take() {
    text_ += "# EOF\n";
    return std::move(text_);
  }

 private:
  std::string text_;
};

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string v = IsValidUtf8(value) ? std::string(value) : SanitizeUtf8(value);
  std::string out = "\"";
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string RenderOpenMetrics(const SummaryTotals& totals, const MetricLabels& labels,
                              const StatsInfo* stats) {
  return RenderOpenMetrics({MetricSource{labels, &totals, stats}});
}

std::string RenderOpenMetrics(const std::vector<MetricSource>& sources) {
  Out o;
  auto dev = [](uint32_t d) { return std::to_string(d); };
  auto any = [&](auto pred) {
    for (const MetricSource& src : sources)
      if (src.totals != nullptr && pred(*src.totals)) return true;
    return false;
  };
  // Each family once, with every source's samples (the format wants a
  // family's lines together).
  auto each = [&](auto fn) {
    for (const MetricSource& src : sources)
      if (src.totals != nullptr) fn(*src.totals, src.labels);
  };

  if (any([](const SummaryTotals& t) { return !t.kernels.empty(); })) {
    // The `name` label is the kernel's short name (collector/short_name.h),
    // so a series' labels stay short; the full name is in cutrace_kernel_info.
    std::vector<std::string> names;
    each([&](const SummaryTotals& t, const MetricLabels&) {
      for (const auto& [key, d] : t.kernels) names.push_back(key.first);
    });
    const std::map<std::string, std::string> short_names = UniqueShortNames(names);
    auto kernel = [&](const std::pair<std::string, uint32_t>& key) -> MetricLabels {
      return {{"name", short_names.at(key.first)}, {"device", dev(key.second)}};
    };
    o.Family("cutrace_kernel_info", "gauge",
             "Each kernel's full name (full_name) for its short name label (name); always 1.");
    for (const auto& [full, short_name] : short_names)
      o.Sample("cutrace_kernel_info", {}, {{"name", short_name}, {"full_name", full}}, "1");
    o.Family("cutrace_kernel_calls_total", "counter", "Kernel executions, by kernel name and device.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, d] : t.kernels)
        o.Sample("cutrace_kernel_calls_total", c, kernel(key), Integer(d.count));
    });
    o.Family("cutrace_kernel_seconds_total", "counter", "GPU time of kernel executions, in seconds.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, d] : t.kernels)
        o.Sample("cutrace_kernel_seconds_total", c, kernel(key), Number(Seconds(d.total_ns)));
    });
    o.Family("cutrace_kernel_duration_max_seconds", "gauge", "Longest kernel execution, in seconds.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, d] : t.kernels)
        o.Sample("cutrace_kernel_duration_max_seconds", c, kernel(key), Number(Seconds(d.max_ns)));
    });
    o.Family("cutrace_kernel_duration_seconds", "summary",
             "Kernel execution time, in seconds: quantiles 0.5 and 0.99 from a log-bucket "
             "histogram (within 6.25%), sum and count exact.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, d] : t.kernels) {
        for (int p : {50, 99}) {
          MetricLabels labels = kernel(key);
          labels.push_back({"quantile", p == 50 ? "0.5" : "0.99"});
          o.Sample("cutrace_kernel_duration_seconds", c, labels,
                   Number(Seconds(HistogramPercentile(d, p))));
        }
        o.Sample("cutrace_kernel_duration_seconds_sum", c, kernel(key), Number(Seconds(d.total_ns)));
        o.Sample("cutrace_kernel_duration_seconds_count", c, kernel(key), Integer(d.count));
      }
    });
  }
  if (any([](const SummaryTotals& t) { return !t.copies.empty(); })) {
    o.Family("cutrace_memcpy_calls_total", "counter", "Memory copies and memsets, by kind and device.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, v] : t.copies)
        o.Sample("cutrace_memcpy_calls_total", c, {{"kind", key.first}, {"device", dev(key.second)}},
                 Integer(v.count));
    });
    o.Family("cutrace_memcpy_bytes_total", "counter", "Bytes copied or set, by kind and device.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, v] : t.copies)
        o.Sample("cutrace_memcpy_bytes_total", c, {{"kind", key.first}, {"device", dev(key.second)}},
                 Integer(v.bytes));
    });
    o.Family("cutrace_memcpy_seconds_total", "counter", "GPU time of copies and memsets, in seconds.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, v] : t.copies)
        o.Sample("cutrace_memcpy_seconds_total", c, {{"kind", key.first}, {"device", dev(key.second)}},
                 Number(Seconds(v.total_ns)));
    });
  }
  if (any([](const SummaryTotals& t) { return !t.ranges.empty(); })) {
    // Rows of one (domain, name) at several depths are one series here.
    auto ranges = [](const SummaryTotals& t) {
      std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> out;
      for (const auto& [key, d] : t.ranges) {
        auto& r = out[{std::get<0>(key), std::get<1>(key)}];
        r.first += d.count;
        r.second += d.total_ns;
      }
      return out;
    };
    o.Family("cutrace_nvtx_range_calls_total", "counter", "NVTX ranges, by domain and name.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, r] : ranges(t))
        o.Sample("cutrace_nvtx_range_calls_total", c, {{"domain", key.first}, {"name", key.second}},
                 Integer(r.first));
    });
    o.Family("cutrace_nvtx_range_seconds_total", "counter", "CPU time inside NVTX ranges, in seconds.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [key, r] : ranges(t))
        o.Sample("cutrace_nvtx_range_seconds_total", c, {{"domain", key.first}, {"name", key.second}},
                 Number(Seconds(r.second)));
    });
  }
  if (any([](const SummaryTotals& t) { return !t.devices.empty(); })) {
    o.Family("cutrace_device_busy_ratio", "gauge",
             "Share of the device's span with any kernel, copy or memset running.");
    each([&](const SummaryTotals& t, const MetricLabels& c) {
      for (const auto& [id, d] : t.devices)
        o.Sample("cutrace_device_busy_ratio", c, {{"device", dev(id)}},
                 Number(d.span_ns ? static_cast<double>(d.busy_ns) / static_cast<double>(d.span_ns)
                                  : 0.0));
    });
    struct Part {
      const char* name;
      const char* help;
      uint64_t (*value)(const DeviceTotals&);
    };
    // Communication kernels (DeviceTotals::comm_ns) get families of their
    // own, and compute's help says it leaves them out, only where some
    // device ran one.
    const bool comm = any([](const SummaryTotals& t) {
      for (const auto& [id, d] : t.devices)
        if (d.comm_ns > 0) return true;
      return false;
    });
    const Part parts[] = {
        {"cutrace_device_busy_seconds_total", "Time with any GPU work running.",
         [](const DeviceTotals& d) { return d.busy_ns; }},
        {"cutrace_device_compute_seconds_total",
         comm ? "Time with a compute kernel running (communication kernels apart)."
              : "Time with a kernel running.",
         [](const DeviceTotals& d) { return d.compute_ns; }},
        {"cutrace_device_copy_seconds_total", "Time with a copy or memset running.",
         [](const DeviceTotals& d) { return d.copy_ns; }},
        {"cutrace_device_overlap_seconds_total", "Time with a kernel and a copy running at once.",
         [](const DeviceTotals& d) {
           if (d.comm_ns > 0) return d.compute_copy_ns;
           const uint64_t both = d.compute_ns + d.copy_ns;
           return both > d.busy_ns ? both - d.busy_ns : 0;
         }},
        {"cutrace_device_idle_seconds_total", "Time within the device's span with no GPU work.",
         [](const DeviceTotals& d) { return d.span_ns > d.busy_ns ? d.span_ns - d.busy_ns : 0; }},
        {"cutrace_device_comm_seconds_total",
         "Time with a communication kernel (NCCL, RCCL, NVSHMEM) running.",
         [](const DeviceTotals& d) { return d.comm_ns; }},
        {"cutrace_device_comm_hidden_seconds_total",
         "Time with a communication kernel and a compute kernel running at once.",
         [](const DeviceTotals& d) { return d.comm_hidden_ns; }},
    };
    for (const Part& p : parts) {
      if (!comm && std::string_view(p.name).starts_with("cutrace_device_comm")) continue;
      o.Family(p.name, "counter", p.help);
      each([&](const SummaryTotals& t, const MetricLabels& c) {
        for (const auto& [id, d] : t.devices)
          o.Sample(p.name, c, {{"device", dev(id)}}, Number(Seconds(p.value(d))));
      });
    }
  }
  o.Family("cutrace_intervals_total", "counter", "Summary intervals aggregated.");
  each([&](const SummaryTotals& t, const MetricLabels& c) {
    o.Sample("cutrace_intervals_total", c, {}, Integer(t.intervals));
  });
  bool stats = false;
  for (const MetricSource& src : sources) stats = stats || src.stats != nullptr;
  if (stats) {
    auto each_stats = [&](const char* name, auto value) {
      for (const MetricSource& src : sources)
        if (src.stats != nullptr) o.Sample(name, src.labels, {}, value(*src.stats));
    };
    o.Family("cutrace_tool_cpu_seconds_total", "counter", "CPU time of cutrace's own threads.");
    each_stats("cutrace_tool_cpu_seconds_total",
               [](const StatsInfo& s) { return Number(Seconds(s.tool_cpu_ns)); });
    o.Family("cutrace_tool_memory_bytes", "gauge",
             "Memory of cutrace's buffers, queue, ring and aggregates (peak of the buffer pool).");
    each_stats("cutrace_tool_memory_bytes", [](const StatsInfo& s) {
      return Integer(SatAdd(SatAdd(s.peak_memory_bytes, s.queue_bytes),
                            SatAdd(s.ring_bytes, s.aggregate_bytes)));
    });
    o.Family("cutrace_tool_records_total", "counter", "Activity records cutrace handled.");
    each_stats("cutrace_tool_records_total",
               [](const StatsInfo& s) { return Integer(s.records_handled); });
    o.Family("cutrace_tool_records_dropped_total", "counter",
             "Activity records lost (CUPTI, full queue, memory cap).");
    each_stats("cutrace_tool_records_dropped_total", [](const StatsInfo& s) {
      return Integer(SatAdd(SatAdd(s.records_dropped_by_cupti, s.records_dropped_queue_full),
                            s.records_dropped_memory_cap));
    });
  }
  return o.Take();
}

Status WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  // A dot-prefixed name: node_exporter reads only *.prom files.
  const std::string tmp = dir + "/." + base + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0 && errno == EEXIST) {
    // A leftover of an earlier process with this pid.
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  }
  if (fd < 0) return Status::Error("cannot create " + tmp + ": " + std::strerror(errno));
  static_cast<void>(::fchmod(fd, mode));
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = n < 0 ? std::strerror(errno) : "no progress";
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::Error("cannot write " + tmp + ": " + reason);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::Error("cannot write " + tmp + ": " + reason);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::Error("cannot replace " + path + ": " + reason);
  }
  return Status::Ok();
}

}  // namespace cutrace
