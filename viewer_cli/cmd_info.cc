// `cutrace info FILE...`: what a trace file is and how it was recorded — the
// header (producer, host, pid, command line, rank, versions, clock anchors),
// devices, the producer's statistics (records seen, dropped, invalid; buffers,
// bytes, the tool's own overhead), events per kind and bytes per event,
// whether it was shut down cleanly or cut short, and every problem the reader
// met. JSON: {"files":[...]} as in docs/json-reports.md (header, devices and
// statistics are the proto messages under their proto field names); CSV: one
// key,value row per JSON leaf ("file,key,value" for several files).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "collector/sat_math.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/display.h"
#include "viewer_cli/info_json.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/output.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_info {
namespace {

using nlohmann::json;

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  analysis::RegionSpec region;
};

uint64_t EventCount(const RecordBatch& r) { return r.size(); }

// Per kind, in RecordBatch order: its name, its events, and the bytes of its
// columns in the file (ReadReport::kind_bytes).
struct KindBytes {
  const char* name;
  uint64_t events;
  uint64_t bytes;
  double per_event() const { return events ? static_cast<double>(bytes) / events : 0.0; }
};

std::vector<KindBytes> ByKind(const TraceData& t) {
  std::vector<KindBytes> out;
  ForEachKind(
      [&](auto kind, const auto& records) {
        const size_t k = static_cast<size_t>(decltype(kind)::value);
        out.push_back({kRecordKindNames[k].data(), records.size(), t.read.kind_bytes[k]});
      },
      t.records);
  return out;
}

json InfoJson(const TraceData& t) {
  json devices = json::array();
  for (const DeviceInfo& d : t.devices) devices.push_back(DeviceJson(d));
  const RecordBatch& r = t.records;
  json events = KindCountsJson(r.counts());
  uint64_t n = EventCount(r);
  json by_kind = json::object();
  for (const KindBytes& k : ByKind(t)) by_kind[k.name] = {{"bytes", k.bytes}, {"bytes_per_event", k.per_event()}};
  uint64_t samples = 0;
  for (const proto::CounterBatch& c : t.counters) samples += c.samples_size();
  return {
      {"path", t.path},
      {"header", MessageJson(t.header)},
      {"devices", devices},
      {"statistics", t.statistics ? StatsJson(*t.statistics) : json(nullptr)},
      {"events", events},
      {"events_total", n},
      {"counter_samples", samples},
      {"summaries", t.summaries.size()},
      {"file_bytes", t.read.file_bytes},
      {"packets", t.read.packets},
      {"bytes_per_event", n ? static_cast<double>(t.read.file_bytes) / n : 0.0},
      {"event_bytes_by_kind", by_kind},
      {"clean_shutdown", t.clean_shutdown()},
      {"end_reason", t.end ? t.end->reason() : std::string()},
      {"truncated", t.read.truncated},
      {"lost_bytes", t.read.lost_bytes},
      {"warnings", t.warnings},
      {"problems", t.read.problems},
  };
}

// CSV: one row per leaf of the JSON, keys joined with '.'.
void Flatten(const json& v, const std::string& key,
             std::vector<std::pair<std::string, std::string>>* rows) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      Flatten(it.value(), key.empty() ? it.key() : key + "." + it.key(), rows);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) Flatten(v[i], key + "." + std::to_string(i), rows);
  } else if (v.is_string()) {
    rows->emplace_back(key, v.get<std::string>());
  } else {
    rows->emplace_back(key,
                       v.is_null() ? "" : v.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

std::string Version(int32_t v) {
  if (v <= 0) return "-";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string Anchor(const proto::ClockAnchor& a) {
  if (a.trace_ns() == 0 && a.realtime_ns() == 0 && a.monotonic_ns() == 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(a.realtime_ns() / 1000000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("trace {} ns = realtime {}.{:09} UTC = monotonic {} ns", a.trace_ns(), when,
                     a.realtime_ns() % 1000000000, a.monotonic_ns());
}

std::string Or(const std::string& s, const char* fallback = "-") {
  return s.empty() ? fallback : s;
}

// "  key               value": a value too long for the line wraps under
// itself, not under the key.
void PrintKv(const char* key, const std::string& value) {
  const size_t at = std::max<size_t>(20, std::strlen(key) + 4);
  const size_t width = OutputWidth();
  const std::vector<std::string> lines =
      WrapText(EscapeForTerminal(value), width > at + 20 ? width - at : 20);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (i > 0) line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    const std::string lead =
        i == 0 ? fmt::format("  {:<{}}", EscapeForTerminal(key), at - 2) : std::string(at, ' ');
    fmt::print("{}{}\n", lead, line);
  }
}

// What recording cost: CUPTI's buffers, the file written, the tool's own
// time and memory, continuous mode's windows.
void PrintRecordingCosts(const StatsInfo& s, const proto::Header& h) {
  PrintKv("buffers", fmt::format("{} requested, {} completed, {} refused ({})",
                                 s.buffers_requested, s.buffers_completed,
                                 s.buffers_refused, FormatBytes(s.buffer_bytes)));
  PrintKv("written", fmt::format("{} in {} packets", FormatBytes(s.bytes_written),
                                 s.packets_written));
  if (s.queue_capacity_batches)
    PrintKv("writer queue", fmt::format("peak {} of {} batches", s.queue_peak_batches,
                                        s.queue_capacity_batches));
  // CUPTI's own time comes from its OVERHEAD records: a trace whose kinds
  // leave them out (CUTRACE_KINDS without "overhead") has none to sum, and
  // a 0 would read as "CUPTI cost nothing". Traces from before the word
  // existed list no "overhead" but had the records with the API ones, so
  // a time that is there is shown.
  const auto& kinds = h.enabled_kinds();
  const bool cupti_unknown = s.cupti_overhead_ns == 0 && !kinds.empty() &&
                             std::find(kinds.begin(), kinds.end(), "overhead") == kinds.end();
  PrintKv("tool overhead", fmt::format("{} CPU, CUPTI {}, peak memory {}",
                                       FormatDuration(s.tool_cpu_ns),
                                       cupti_unknown ? std::string("not recorded (no overhead records)")
                                                     : FormatDuration(s.cupti_overhead_ns),
                                       FormatBytes(s.peak_memory_bytes)));
  if (s.records_handled || s.memory_cap_bytes || s.ring_bytes || s.aggregate_bytes ||
      s.windows) {
    PrintKv("tool memory", fmt::format("cap {}, queue {}, flight recorder {}, aggregates {}",
                                       s.memory_cap_bytes ? FormatBytes(s.memory_cap_bytes) : "none",
                                       FormatBytes(s.queue_bytes), FormatBytes(s.ring_bytes),
                                       FormatBytes(s.aggregate_bytes)));
    PrintKv("records handled", fmt::format("{}{}", s.records_handled,
                                           s.records_dropped_memory_cap
                                               ? fmt::format(" ({} dropped at the memory cap)",
                                                             s.records_dropped_memory_cap)
                                               : ""));
    if (s.windows) {
      PrintKv("windows", s.cupti_detaches ? fmt::format("{} (CUPTI detached between them {} times)",
                                                         s.windows, s.cupti_detaches)
                                            : std::to_string(s.windows));
      if (s.buffers_dropped_at_detach) {
        PrintKv("dropped at detach", fmt::format("{} (activity buffers CUPTI handed back while "
                                                 "detaching, dropped unread)", s.buffers_dropped_at_detach));
      }
    }
  }
}

void PrintText(const TraceData& t) {
  const proto::Header& h = t.header;
  // A trace converted from another format (cutrace import) has no recording
  // behind it: no process ids, CUDA versions, clock anchors, CUPTI buffers
  // or tool costs, so those lines, all zeros, are left out.
  const bool imported = !h.source_format().empty();
  fmt::print("file\n");
  PrintKv("path", t.path);
  PrintKv("size", fmt::format("{} ({} packets)", FormatBytes(t.read.file_bytes), t.read.packets));
  PrintKv("format", fmt::format("{} v{}.{}", Or(h.magic()), h.format_version(), h.format_minor()));
  PrintKv("producer", Or(h.producer()));
  PrintKv("source", h.source_path().empty() ? Or(h.source_format())
                                            : fmt::format("{} ({})", Or(h.source_format()),
                                                          h.source_path()));
  PrintKv("mode", Or(h.mode()));
  // Rotation and windows (collector/rotation.h): which chunk of a run this is.
  if (h.chunk_index() != 0 || !h.run_id().empty() || !h.chunk_reason().empty()) {
    std::string chunk = fmt::format("{}", h.chunk_index());
    if (!h.chunk_reason().empty()) chunk += fmt::format(" (started by {})", h.chunk_reason());
    if (!h.previous_chunk().empty()) chunk += fmt::format(", after {}", h.previous_chunk());
    PrintKv("chunk", chunk);
    PrintKv("run id", Or(h.run_id()));
  }
  if (h.has_rotation()) {
    const proto::RotationLimits& l = h.rotation();
    PrintKv("rotation", fmt::format("max file {}, every {}, max disk {}; {} chunks deleted before this one",
                                    l.max_file_bytes() ? FormatBytes(l.max_file_bytes()) : "-",
                                    l.rotate_interval_ns() ? FormatDuration(l.rotate_interval_ns()) : "-",
                                    l.max_disk_bytes() ? FormatBytes(l.max_disk_bytes()) : "-",
                                    l.chunks_deleted()));
  }
  PrintKv("shutdown", t.clean_shutdown()
                          ? fmt::format("clean ({})", Or(t.end->reason(), "no reason given"))
                          : "NOT clean: no end-of-trace packet (the process died, or is still "
                            "writing)");
  PrintKv("truncated", t.read.truncated
                           ? fmt::format("yes: {} bytes after the last complete packet lost",
                                         t.read.lost_bytes)
                           : "no");

  fmt::print("\nprocess\n");
  PrintKv("host", Or(h.host()));
  if (!imported || h.pid() != 0) PrintKv("pid", fmt::format("{} (parent {})", h.pid(), h.ppid()));
  std::string command;
  for (const std::string& arg : h.command_line()) {
    if (!command.empty()) command += ' ';
    // Quote what a shell would split or drop, so the line reads unambiguously.
    bool quote = arg.empty() || arg.find_first_of(" \t'\"") != std::string::npos;
    command += quote ? "'" + arg + "'" : arg;
  }
  PrintKv("command", Or(command));
  PrintKv("rank", Or(h.rank()));
  if (!imported)
    PrintKv("CUDA", fmt::format("driver {}, runtime {}, CUPTI API {}",
                              Version(h.cuda_driver_version()), Version(h.cuda_runtime_version()),
                              h.cupti_api_version() ? std::to_string(h.cupti_api_version()) : "-"));
  std::string clock = proto::ClockDomain_Name(h.clock());
  if (clock.rfind("CLOCK_DOMAIN_", 0) == 0) clock.erase(0, 13);
  for (char& c : clock) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  PrintKv("clock", Or(clock, "unknown"));
  if (!imported || h.has_start_anchor()) {
    PrintKv("start anchor", Anchor(h.start_anchor()));
    if (!h.clock_anchor_source().empty()) PrintKv("anchor from", h.clock_anchor_source());
    PrintKv("end anchor", t.end ? Anchor(t.end->end_anchor()) : "-");
  }
  std::string kinds;
  for (const std::string& k : h.enabled_kinds()) {
    if (!kinds.empty()) kinds += ", ";
    kinds += k;
  }
  PrintKv("kinds", Or(kinds));

  fmt::print("\ndevices\n");
  if (t.devices.empty()) fmt::print("  (none recorded)\n");
  for (const DeviceInfo& d : t.devices)
    PrintKv(fmt::format("{}", d.id).c_str(),
            fmt::format("{}  {} SMs  {}  CC {}.{}{}", Or(d.name, "(unnamed)"), d.sm_count,
                        FormatBytes(d.global_memory_bytes), d.compute_capability_major,
                        d.compute_capability_minor,
                        d.peak_memory_bandwidth_gbps > 0
                            ? fmt::format("  {:.0f} GB/s", d.peak_memory_bandwidth_gbps)
                            : ""));

  const RecordBatch& r = t.records;
  uint64_t n = EventCount(r);
  fmt::print("\nevents\n");
  // Column bytes per event: what each kind costs in the file (the total
  // below adds framing, strings, shapes, devices and statistics).
  for (const KindBytes& k : ByKind(t))
    PrintKv(k.name, k.events ? fmt::format("{} ({:.1f} bytes/event)", k.events, k.per_event()) : "0");
  if (!t.summaries.empty()) {
    uint64_t kernels = 0;
    for (const proto::SummaryPacket& p : t.summaries)
      for (const proto::KernelSummary& k : p.kernels()) kernels += k.count();
    PrintKv("summaries", fmt::format("{} intervals ({} kernels aggregated)", t.summaries.size(), kernels));
  }
  PrintKv("total", n ? fmt::format("{} ({:.1f} bytes/event with the file's framing, strings "
                                   "and metadata)",
                                   n, static_cast<double>(t.read.file_bytes) / n)
                     : "0");

  fmt::print("\nstatistics\n");
  if (!t.statistics) {
    fmt::print("  (none recorded)\n");
  } else {
    const StatsInfo& s = *t.statistics;
    PrintKv("seen", fmt::format("{} kernels, {} memcpys, {} memsets, {} ranges, {} API calls, "
                                "{} syncs",
                                s.kernels, s.memcpys, s.memsets, s.ranges, s.api_calls,
                                s.syncs));
    uint64_t dropped = SatAdd(s.records_dropped_by_cupti, s.records_dropped_queue_full);
    if (!imported || dropped)
      PrintKv("dropped", fmt::format("{} by CUPTI, {} queue full{}", s.records_dropped_by_cupti,
                                   s.records_dropped_queue_full,
                                   dropped ? ": reports undercount" : ""));
    uint64_t invalid = 0;
    for (const auto& i : s.invalid) invalid = SatAdd(invalid, i.count);
    PrintKv("invalid", std::to_string(invalid));
    for (const auto& i : s.invalid)
      PrintKv("", fmt::format("{} {}: {}", i.kind, i.reason, i.count));
    if (s.kernels_untimed)
      PrintKv("untimed", fmt::format("{} kernels without timestamps (launches counted with "
                                     "hardware counters: CUPTI does not time them; their "
                                     "counters carry gpu__time_duration)",
                                     s.kernels_untimed));
    PrintKv("other records", std::to_string(s.other_records));
    // The rest is what recording cost: nothing for an import.
    if (!imported) PrintRecordingCosts(s, h);
  }
  if (!t.warnings.empty() || !t.read.problems.empty()) {
    fmt::print("\nproblems\n");
    for (const std::string& w : t.warnings) PrintLine(stdout, "  warning: " + w);
    for (const std::string& p : t.read.problems) PrintLine(stdout, "  " + p);
  }
}

int Run(const Options& o) {
  LoadedTraces loaded;
  if (!LoadTraces(o.files, &loaded)) return 1;
  // info describes whole files; with a region it also says which window
  // the reports would cover.
  const std::optional<analysis::Window> window = WindowOrError(loaded.all, o.region);
  if (!window) return 1;
  if (o.format == Format::kTable && window->active) {
    PrintLine(stdout, WindowLine(*window));
    PrintLine(stdout, "(the window the reports would cover; what follows is the whole file's)");
  }
  if (o.format == Format::kJson) {
    json files = json::array();
    for (const TraceData* t : loaded.all) files.push_back(InfoJson(*t));
    json out = {{"files", files}};
    if (window->active) out["window"] = WindowJson(*window);
    PrintJson(out, stdout);
  } else if (o.format == Format::kCsv) {
    bool several = loaded.all.size() > 1;
    Table table(several ? std::vector<std::string>{"file", "key", "value"}
                        : std::vector<std::string>{"key", "value"});
    for (const TraceData* t : loaded.all) {
      std::vector<std::pair<std::string, std::string>> rows;
      Flatten(InfoJson(*t), "", &rows);
      for (auto& [key, value] : rows) {
        if (several)
          table.AddRow({t->path, key, value});
        else
          table.AddRow({key, value});
      }
    }
    table.PrintCsv(stdout);
  } else {
    for (size_t i = 0; i < loaded.all.size(); ++i) {
      if (loaded.all.size() > 1) {
        if (i) fmt::print("\n");
        PrintLine(stdout, "== " + loaded.all[i]->path + " ==");
      }
      PrintText(*loaded.all[i]);
    }
  }
  return 0;
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Header, versions, devices, statistics, clean shutdown or not");
  cmd->add_option("files", options->files, "Trace files")->required();
  AddFormatOption(cmd, &options->format);
  AddRegionOptions(cmd, &options->region);
}

const CommandRegistration kRegistration("info", 80, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_info
