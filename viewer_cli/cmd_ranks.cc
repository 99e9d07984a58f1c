// `cutrace ranks FILE...`: stragglers over several ranks (issue 21 point 5):
// per step of a common NVTX range (torch.profiler's ProfilerStep#N by
// default), the slowest rank, its excess over the median and whether the
// excess is compute, comm or idle (analysis/stragglers.h). One report over
// all the files (the chunks of one run are one rank), not one per file.
#include <algorithm>
#include <memory>

#include <fmt/core.h>

#include "analysis/stragglers.h"
#include "viewer_cli/comm_options.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/display.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_ranks {
namespace {

struct Options {
  std::vector<std::string> files;
  Format format = Format::kTable;
  std::string range = "ProfilerStep*";
  std::shared_ptr<const analysis::CommClassifier> comm;  // --comm-pattern
};

std::string Signed(int64_t ns, const Cells& c) {
  if (!c.human()) return std::to_string(ns);
  const uint64_t magnitude = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  return (ns < 0 ? "-" : "+") + FormatDuration(magnitude);
}

nlohmann::json Json(const analysis::StragglerReport& r) {
  nlohmann::json ranks = nlohmann::json::array(), steps = nlohmann::json::array();
  for (size_t i = 0; i < r.ranks.size(); ++i)
    ranks.push_back({{"rank", i},
                     {"rank_id", r.rank_ids[i] < 0 ? nlohmann::json(nullptr)
                                                   : nlohmann::json(r.rank_ids[i])},
                     {"label", r.ranks[i]},
                     {"steps", r.steps_of[i]}});
  for (const analysis::StepStraggler& s : r.steps) {
    nlohmann::json per_rank = nlohmann::json::array();
    for (const analysis::StepOnRank& x : s.ranks)
      per_rank.push_back({{"start_ns", x.start_ns},
                          {"duration_ns", x.duration_ns()},
                          {"compute_ns", x.compute_ns},
                          {"comm_ns", x.comm_ns},
                          {"idle_ns", x.idle_ns}});
    steps.push_back({{"step", s.step},
                     {"slowest_rank", s.slowest},
                     {"duration_ns", s.duration_ns},
                     {"median_ns", s.median_ns},
                     {"excess_ns", s.excess_ns},
                     {"cause", s.cause},
                     {"waited_for_rank", s.waited_for < 0 ? nlohmann::json(nullptr)
                                                           : nlohmann::json(s.waited_for)},
                     {"wait_ns", s.wait_ns},
                     {"excess_by_class_ns",
                      {{"compute", s.compute_excess_ns},
                       {"comm", s.comm_excess_ns},
                       {"idle", s.idle_excess_ns}}},
                     {"ranks", std::move(per_rank)}});
  }
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    ranks[i]["waited_for_steps"] = r.waited_for[i];
    ranks[i]["median_wait_ns"] = r.median_wait_ns[i];
  }
  return {{"range", r.range},
          {"steps_matched_by", r.by_number ? "number" : "position"},
          {"ranks", ranks},
          {"steps", steps}};
}

// Who the others waited for, over the steps: the rank (or ranks, tied)
// named most, or why nobody is.
std::string WaitedForLine(const analysis::StragglerReport& r) {
  size_t most = 0;
  for (size_t n : r.waited_for) most = std::max(most, n);
  if (most == 0)
    return fmt::format("waited for: nobody named (a rank is named when it has the least "
                       "communication in a step, by {}% of the step or more)",
                       analysis::kWaitFloorPct);
  std::string who;
  for (size_t i = 0; i < r.waited_for.size(); ++i)
    if (r.waited_for[i] == most)
      who += fmt::format("{}rank {} ({}, median wait {})", who.empty() ? "" : ", ", i, r.ranks[i],
                         FormatDuration(r.median_wait_ns[i]));
  return fmt::format("waited for: {} in {} of {} steps (the least communication: the others' "
                     "collectives waited for it)",
                     who, most, r.steps.size());
}

int Run(const Options& o) {
  LoadedTraces loaded;
  if (!LoadTraces(o.files, &loaded)) return 1;
  StatusOr<analysis::StragglerReport> found =
      analysis::FindStragglers(loaded.all, o.range, o.comm);
  if (!found.ok()) {
    PrintError(found.status().message());
    return 1;
  }
  const analysis::StragglerReport& r = *found;
  if (o.format == Format::kJson) {
    PrintJson(Json(r), stdout);
    return 0;
  }
  Cells c(o.format);
  if (o.format == Format::kTable) {
    PrintLine(stdout, fmt::format("stragglers over {} ranks, NVTX range '{}': {} steps every rank "
                                  "has ({}); excess = the slowest rank's step over the median",
                                  r.ranks.size(), r.range, r.steps.size(),
                                  r.by_number ? "matched by their #N" : "the k-th of each rank"));
    for (size_t i = 0; i < r.ranks.size(); ++i)
      PrintLine(stdout, fmt::format("  rank {}: {} ({} steps)", i, r.ranks[i], r.steps_of[i]));
    PrintLine(stdout, WaitedForLine(r));
    fmt::print("\n");
  }
  std::vector<std::string> headers = {
      c.Header("Step", "step"),          c.Header("Slowest", "slowest_rank"),
      c.Header("Duration", "duration_ns"), c.Header("Median", "median_ns"),
      c.Header("Excess", "excess_ns"),   c.Header("Cause", "cause"),
      c.Header("Compute", "compute_excess_ns"), c.Header("Comm", "comm_excess_ns"),
      c.Header("Idle", "idle_excess_ns"), c.Header("Waited for", "waited_for_rank")};
  std::vector<bool> right = {true, true, true, true, true, false, true, true, true, true};
  // CSV also has the wait (the table shows it per rank in the line above).
  if (!c.human()) {
    headers.push_back("wait_ns");
    right.push_back(true);
  }
  Table table(std::move(headers));
  table.SetRightAligned(right);
  for (const analysis::StepStraggler& s : r.steps) {
    std::vector<std::string> row = {
        c.Count(s.step), c.Count(s.slowest), c.Duration(s.duration_ns), c.Duration(s.median_ns),
        c.Duration(s.excess_ns), s.cause, Signed(s.compute_excess_ns, c),
        Signed(s.comm_excess_ns, c), Signed(s.idle_excess_ns, c),
        s.waited_for < 0 ? c.None() : c.Count(static_cast<uint64_t>(s.waited_for))};
    if (!c.human()) row.push_back(std::to_string(s.wait_ns));
    table.AddRow(std::move(row));
  }
  table.Print(o.format, stdout);
  return 0;
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description(
      "Stragglers: per step, the slowest rank, its excess and whether it is compute, "
      "comm or idle");
  cmd->add_option("files", options->files, "Trace files, one or more per rank")->required();
  AddFormatOption(cmd, &options->format);
  cmd->add_option("--range", options->range,
                  "The step range (a name or glob; its outermost instances are the steps)")
      ->type_name("NAME")
      ->default_str("ProfilerStep*");
  AddCommOption(cmd, &options->comm);
}

const CommandRegistration kRegistration("ranks", 96, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_ranks
