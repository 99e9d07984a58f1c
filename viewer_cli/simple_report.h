// The shape most report commands share: `cutrace NAME FILE... [--format F]
// [--top N]`, one report computed by one streaming pass of the files through
// the report engine (viewer_cli/streamed_report.h), whatever the traces hold
// (events or summary-mode aggregates: the engine takes both), and printed
// under one JSON key or as one table. A command of that shape is a
// SimpleReport handed to its CommandRegistration (cmd_api.cc, cmd_memcpy.cc,
// cmd_nvtx.cc, cmd_overlap.cc); commands that print more build their own.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/report_engine.h"
#include "analysis/trace_set.h"
#include "viewer_cli/comm_options.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/output.h"
#include "viewer_cli/region_options.h"
#include "viewer_cli/report_common.h"
#include "viewer_cli/streamed_report.h"

namespace cutrace::cli {

template <typename Report>
struct SimpleReport {
  std::string name;      // the subcommand
  std::string help;      // its line in `cutrace --help`
  std::string json_key;  // the report's key in --format json
  std::string top_help = "";    // the --top option's help; "" for no --top
  analysis::ReportParts parts;  // what the engine computes
  analysis::GapOptions gaps = {};  // with parts.timeline
  // `top` is --top's value (0: all; always 0 without the option).
  std::function<Report(analysis::ReportEngine& engine, size_t top)> from_engine;
  std::function<nlohmann::json(const Report& report)> to_json;
  std::function<TableSection(const Report& report, Format format)> to_table;
  // Optional: tables printed after it in table form only (CSV keeps one
  // table a report, for readers such as pandas).
  std::function<std::vector<TableSection>(const Report& report)> more_tables = nullptr;
  // Optional: lines printed above the table in table form (and a "notes"
  // array in JSON) about what the report could not show for these traces.
  std::function<std::vector<std::string>(const Report& report, analysis::TraceSet traces)> notes =
      nullptr;
  // Optional: options of this command that change what the engine computes.
  std::function<void(CLI::App* cmd, analysis::ReportParts* parts)> add_options = nullptr;
};

template <typename Report>
RegisterFn RegisterSimpleReport(SimpleReport<Report> spec) {
  auto shared = std::make_shared<const SimpleReport<Report>>(std::move(spec));
  return [shared](CLI::App& app, int* exit_code) {
    struct Options {
      std::vector<std::string> files;
      Format format = Format::kTable;
      size_t top = 0;
      analysis::RegionSpec region;
      analysis::ReportParts parts;
    };
    auto options = std::make_shared<Options>();
    const SimpleReport<Report>& s = *shared;
    options->parts = s.parts;
    CLI::App* cmd = app.add_subcommand(s.name, s.help);
    cmd->add_option("files", options->files, "Trace files")->required();
    AddFormatOption(cmd, &options->format);
    if (!s.top_help.empty()) cmd->add_option("--top", options->top, s.top_help);
    AddRegionOptions(cmd, &options->region);
    if (s.add_options) s.add_options(cmd, &options->parts);
    // Reports of the device sweep tell communication from compute.
    if (s.parts.timeline) AddCommOption(cmd, &options->parts.comm);
    cmd->callback([shared, options, exit_code] {
      const SimpleReport<Report>& s = *shared;
      *exit_code = RunStreamedReport(
          options->files, options->format, options->parts, s.gaps,
          [&](analysis::ReportEngine& engine, analysis::TraceSet traces,
              std::span<analysis::StreamedTrace* const>, Format format) {
            Report report = s.from_engine(engine, options->top);
            Rendered r;
            std::vector<std::string> notes;
            if (s.notes) notes = s.notes(report, traces);
            if (format == Format::kJson) {
              r.json[s.json_key] = s.to_json(report);
              if (!notes.empty()) r.json["notes"] = notes;
            } else {
              r.tables.push_back(s.to_table(report, format));
              if (format == Format::kTable && s.more_tables)
                for (TableSection& t : s.more_tables(report)) r.tables.push_back(std::move(t));
              if (format == Format::kTable) r.lines = notes;
            }
            return r;
          },
          options->region);
    });
  };
}

}  // namespace cutrace::cli
