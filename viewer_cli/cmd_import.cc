// `cutrace import TRACE.json[.gz]... -o OUT.trace`: converts a Chrome trace
// written by torch.profiler (Kineto) into a cutrace trace
// (interop/kineto/chrome_import.h), then says what it imported and what it
// skipped. Several inputs (one per rank) are imported and merged into one
// trace (interop/merge/). Never overwrites OUT (unless --force).
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "collector/trace_loader.h"
#include "interop/kineto/chrome_import.h"
#include "interop/merge/trace_merge.h"
#include "interop/merge/trace_placement.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/output.h"
#include "viewer_cli/output_file.h"

namespace cutrace::cli::cmd_import {
namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string input;  // the one being reported
  OutputOption output;
  bool cpu_ops = false;
  std::string max_skew = "1h";
  Format format = Format::kTable;
};

std::vector<std::pair<std::string, uint64_t>> ImportedRows(const interop::ChromeImportCounts& c) {
  return {{"kernels", c.kernels},     {"memcpys", c.memcpys},       {"memsets", c.memsets},
          {"cpu_ranges", c.cpu_ranges}, {"gpu_ranges", c.gpu_ranges}, {"api_calls", c.api_calls},
          {"syncs", c.syncs}};
}

nlohmann::json ReportJson(const Options& o, const interop::ImportedTrace& t) {
  const interop::ChromeImportCounts& c = t.counts;
  nlohmann::json imported = nlohmann::json::object();
  for (const auto& [key, n] : ImportedRows(c)) imported[key] = n;
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& [cat, n] : c.skipped_categories) categories[cat] = n;
  return {{"input", o.input},
          {"output", o.output.path},
          {"trace_events", c.trace_events},
          {"imported", imported},
          {"imported_total", c.imported()},
          {"skipped", {{"not_complete_events", c.skipped_phase},
                       {"other_categories", c.skipped_category},
                       {"not_objects", c.skipped_not_object},
                       {"categories", categories}}},
          {"devices", t.devices.size()},
          {"unknown_copy_kind", c.unknown_copy_kind},
          {"device_from_pid", c.device_from_pid},
          {"device_unknown", c.device_unknown}};
}

void PrintTable(const Options& o, const interop::ImportedTrace& t) {
  const interop::ChromeImportCounts& c = t.counts;
  std::FILE* out = o.output.Messages();
  PrintLine(out, fmt::format("imported {} of {} events from {} into {}", c.imported(),
                             c.trace_events, o.input,
                             o.output.ToStdout() ? "stdout" : o.output.path));
  Table table({"kind", "events"});
  table.SetRightAligned({false, true});
  for (const auto& [key, n] : ImportedRows(c))
    if (n) table.AddRow({key, std::to_string(n)});
  if (table.rows()) {
    fmt::print(out, "\n");
    table.PrintText(out);
  }
  uint64_t skipped = c.skipped_phase + c.skipped_category + c.skipped_not_object;
  if (skipped) {
    // Category names come from the JSON file: one escaped line.
    std::string line = fmt::format("skipped {} events:", skipped);
    if (c.skipped_phase)
      line += fmt::format(" {} not complete (\"X\") events (metadata, flow, instant...);",
                          c.skipped_phase);
    if (c.skipped_not_object) line += fmt::format(" {} not objects;", c.skipped_not_object);
    if (c.skipped_category) {
      line += fmt::format(" {} of other categories (", c.skipped_category);
      for (size_t i = 0; i < c.skipped_categories.size(); ++i)
        line += fmt::format("{}{} {}", i ? ", " : "", c.skipped_categories[i].first,
                            c.skipped_categories[i].second);
      line += ")";
    }
    fmt::print(out, "\n");
    PrintLine(out, line);
  }
  if (c.device_from_pid)
    fmt::print(out, "{} GPU events had no args.device: device taken from pid\n", c.device_from_pid);
}

void PrintCsv(const Options& o, const interop::ImportedTrace& t) {
  const interop::ChromeImportCounts& c = t.counts;
  std::FILE* out = o.output.Messages();
  Table table({"key", "value"});
  table.AddRow({"input", o.input});
  table.AddRow({"output", o.output.path});
  table.AddRow({"trace_events", std::to_string(c.trace_events)});
  for (const auto& [key, n] : ImportedRows(c)) table.AddRow({key, std::to_string(n)});
  table.AddRow({"skipped_not_complete_events", std::to_string(c.skipped_phase)});
  table.AddRow({"skipped_other_categories", std::to_string(c.skipped_category)});
  table.AddRow({"skipped_not_objects", std::to_string(c.skipped_not_object)});
  table.PrintCsv(out);
}

void PrintImportWarnings(const std::string& input, const interop::ChromeImportCounts& c) {
  if (c.imported() == 0)
    PrintError(fmt::format("warning: {}: no kernel, copy, memset, NVTX, API or sync events "
                           "found (is it a torch.profiler trace with CUDA activities?)",
                           input));
  if (c.unknown_copy_kind)
    PrintError(fmt::format("warning: {} memcpy events with names not of the form "
                           "\"Memcpy HtoD (Pageable -> Device)\": copy kind unknown",
                           c.unknown_copy_kind));
  if (c.device_unknown)
    PrintError(fmt::format("warning: {} GPU events with no device in args or pid: device 0 "
                           "assumed",
                           c.device_unknown));
}

int RunOne(const Options& o, const interop::ChromeImportOptions& import_options) {
  StatusOr<interop::ImportedTrace> trace = interop::ImportChromeJsonFile(o.input, import_options);
  if (!trace.ok()) {
    PrintError(trace.status().message());
    return 1;
  }
  if (o.output.ToStdout()) {
    std::string bytes;
    interop::EncodeImportedTrace(*trace, o.input, &bytes);
    if (!WriteStdout(bytes)) return 1;
  } else if (Status s = interop::WriteImportedTrace(*trace, o.input, o.output.path,
                                                    o.output.force);
             !s.ok()) {
    PrintError(s.message());
    return 1;
  }
  PrintImportWarnings(o.input, trace->counts);
  if (o.format == Format::kJson)
    PrintJson(ReportJson(o, *trace), o.output.Messages());
  else if (o.format == Format::kCsv)
    PrintCsv(o, *trace);
  else
    PrintTable(o, *trace);
  return 0;
}

// The merged trace to -o (a file, or stdout for "-").
Status WriteMerged(const interop::MergedTrace& merged, const OutputOption& output) {
  if (output.ToStdout()) {
    StdoutSink out;
    Status s = interop::EncodeMergedTrace(merged, &out);
    return s.ok() ? out.Finish() : s;
  }
  auto file = interop::FileSink::Create(output.path, output.force);
  if (!file.ok()) return file.status();
  Status s = interop::EncodeMergedTrace(merged, file->get());
  return s.ok() ? (*file)->Commit() : s;
}

// Several inputs: each imported in memory, then placed on one timeline by
// its realtime anchor and merged into one trace, as `cutrace merge` would.
int RunMany(const Options& o, const interop::ChromeImportOptions& import_options) {
  std::vector<TraceData> traces;
  traces.reserve(o.inputs.size());
  nlohmann::json inputs = nlohmann::json::array();
  Table table({"input", "trace_events", "imported", "rank", "pid", "realtime_from"});
  for (const std::string& path : o.inputs) {
    StatusOr<interop::ImportedTrace> trace = interop::ImportChromeJsonFile(path, import_options);
    if (!trace.ok()) {
      PrintError(trace.status().message());
      return 1;
    }
    PrintImportWarnings(path, trace->counts);
    std::string bytes;
    interop::EncodeImportedTrace(*trace, path, &bytes);
    StatusOr<TraceData> loaded = LoadTraceFromBytes(bytes, path);
    if (!loaded.ok()) {
      PrintError(path + ": " + loaded.status().message());
      return 1;
    }
    traces.push_back(std::move(loaded).value());
    const interop::ImportedTrace& t = *trace;
    inputs.push_back({{"input", path},
                      {"trace_events", t.counts.trace_events},
                      {"imported_total", t.counts.imported()},
                      {"rank", t.rank},
                      {"pid", t.pid},
                      {"realtime_from", t.anchor_source}});
    table.AddRow({path, std::to_string(t.counts.trace_events), std::to_string(t.counts.imported()),
                  t.rank.empty() ? "-" : t.rank, std::to_string(t.pid),
                  t.anchor_source.empty() ? "-" : t.anchor_source});
  }
  std::vector<const TraceData*> set;
  for (const TraceData& t : traces) set.push_back(&t);
  StatusOr<interop::PlacedTraces> placed = interop::PlaceTraces(set);
  if (!placed.ok()) {
    PrintError("cannot merge the imports: " + placed.status().message());
    return 1;
  }
  uint64_t max_skew = 0;
  ParseDuration(o.max_skew, &max_skew);  // checked by the option's validator
  StatusOr<std::string> gap = interop::CheckTimeGap(*placed, static_cast<int64_t>(max_skew));
  if (!gap.ok()) {
    PrintError("cannot merge the imports: " + gap.status().message());
    return 1;
  }
  if (!gap->empty()) PrintError(*gap);
  interop::MergedTrace merged = interop::MergePlacedTraces(*placed);
  if (Status s = WriteMerged(merged, o.output); !s.ok()) {
    PrintError(s.message());
    return 1;
  }
  std::FILE* messages = o.output.Messages();
  const std::string where = o.output.ToStdout() ? "stdout" : o.output.path;
  if (o.format == Format::kJson) {
    PrintJson({{"inputs", inputs}, {"output", where}, {"devices", merged.devices.size()}},
              messages);
  } else if (o.format == Format::kCsv) {
    table.PrintCsv(messages);
  } else {
    PrintLine(messages, fmt::format("imported {} files and merged them ({} devices) into {}",
                                    traces.size(), merged.devices.size(), where));
    table.SetRightAligned({false, true, true, false, true, false});
    table.PrintText(messages);
  }
  return 0;
}

int Run(const Options& o) {
  // Fail before parsing a large file when the answer is already known; the
  // writer's O_EXCL still guards against a race.
  if (!PrepareOutput(o.output)) return 1;
  interop::ChromeImportOptions import_options;
  import_options.cpu_ops_as_ranges = o.cpu_ops;
  if (o.inputs.size() > 1) return RunMany(o, import_options);
  Options one = o;
  one.input = o.inputs.front();
  return RunOne(one, import_options);
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Convert a Chrome trace JSON from torch.profiler (Kineto) to a cutrace trace");
  cmd->add_option("traces", options->inputs,
                  "Chrome trace JSON ({\"traceEvents\":[...]} or [...]), gzipped or not; several "
                  "are merged into one trace on one timeline by their realtime anchors")
      ->required();
  AddOutputOptions(cmd, &options->output, "The cutrace trace to create");
  cmd->add_flag("--cpu-ops", options->cpu_ops,
                "Also import CPU operators (cat cpu_op) as ranges in domain \"cpu_op\"");
  AddFormatOption(cmd, &options->format);
  AddMaxSkewOption(cmd, &options->max_skew);
}

const CommandRegistration kRegistration("import", 90, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_import
