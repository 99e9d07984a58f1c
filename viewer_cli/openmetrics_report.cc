// See openmetrics_report.h.
#include "viewer_cli/openmetrics_report.h"

#include <cstdio>
#include <map>
#include <tuple>

#include "analysis/report_engine.h"
#include "analysis/summary_reports.h"
#include "analysis/trace_set.h"
#include "collector/openmetrics.h"
#include "viewer_cli/option_words.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {
namespace {

// Communication apart from compute on the devices that ran any: the
// figures of the one device sweep (the collector's aggregate counts every
// kernel as compute). A pass over the process's files, made only when one
// of its kernel names is communication.
void SplitComm(const std::vector<const TraceData*>& traces,
               const std::shared_ptr<const analysis::CommClassifier>& comm, SummaryTotals* totals) {
  const analysis::CommClassifier& classes = comm ? *comm : *analysis::BuiltinComm();
  bool any = false;
  for (const auto& [key, durations] : totals->kernels) any = any || classes.IsComm(key.first);
  if (!any) return;
  analysis::ReportParts parts{.timeline = true};
  parts.comm = comm;
  const analysis::TimelineReport timeline =
      analysis::EngineOver(traces, parts, {UINT64_MAX, 0})->Timeline();
  for (const analysis::DeviceOverlap& o : timeline.devices) {
    if (o.comm_ns == 0) continue;
    DeviceTotals& d = totals->devices[o.device];
    d.compute_ns = o.compute_ns;
    d.comm_ns = o.comm_ns;
    d.comm_hidden_ns = o.comm_compute_overlap_ns;
    d.compute_copy_ns = o.overlap_ns;
  }
}

}  // namespace

void AddSummaryFormatOption(CLI::App* cmd, Format* format, bool* openmetrics) {
  cmd->add_option_function<std::string>(
         "--format",
         [format, openmetrics](const std::string& value) {
           std::string v = value;
           for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
           *openmetrics = v == "openmetrics";
           if (v == "csv") *format = Format::kCsv;
           if (v == "json") *format = Format::kJson;
           if (v == "table") *format = Format::kTable;
         },
         "Output format")
      ->type_name("table|csv|json|openmetrics")
      ->transform(internal::WordValidator({"table", "csv", "json", "openmetrics"},
                                          {"table", "csv", "json", "openmetrics"}))
      ->default_str("table");
}

int RunOpenMetrics(const std::vector<std::string>& files,
                   std::shared_ptr<const analysis::CommClassifier> comm) {
  LoadedTraces loaded;
  if (!LoadTraces(files, &loaded)) return 1;
  struct Group {
    std::vector<const TraceData*> traces;
    MetricLabels labels;
    SummaryTotals totals;
    bool has_stats = false;
    StatsInfo stats;
  };
  // One group per process run, in the order of the files.
  std::map<std::tuple<std::string, int64_t, std::string>, size_t> index;
  std::vector<Group> groups;
  for (const TraceData* t : loaded.all) {
    const proto::Header& h = t->header;
    auto key = std::make_tuple(h.host(), h.pid(), h.run_id().empty() ? t->path : h.run_id());
    auto [it, fresh] = index.emplace(key, groups.size());
    if (fresh) {
      groups.emplace_back();
      Group& g = groups.back();
      if (!h.host().empty()) g.labels.push_back({"host", h.host()});
      if (h.pid() != 0) g.labels.push_back({"pid", std::to_string(h.pid())});
      if (!h.rank().empty()) g.labels.push_back({"rank", h.rank()});
    }
    groups[it->second].traces.push_back(t);
  }
  // Groups whose labels collide (no host/pid, e.g. imported traces) get the file.
  std::map<MetricLabels, int> seen;
  for (const Group& g : groups) ++seen[g.labels];
  std::vector<MetricSource> sources;
  for (Group& g : groups) {
    if (seen[g.labels] > 1) g.labels.push_back({"file", g.traces.front()->path});
    g.totals = analysis::MergeSummaries(g.traces);
    SplitComm(g.traces, comm, &g.totals);
    // Statistics are totals so far: the chunk that saw most is the latest.
    for (const TraceData* t : g.traces) {
      if (!t->statistics) continue;
      StatsInfo s = *t->statistics;
      s.records_handled = analysis::RecordsHandled(s);
      if (!g.has_stats || s.records_handled >= g.stats.records_handled) g.stats = s;
      g.has_stats = true;
    }
    sources.push_back({g.labels, &g.totals, g.has_stats ? &g.stats : nullptr});
  }
  const std::string text = RenderOpenMetrics(sources);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace cutrace::cli
