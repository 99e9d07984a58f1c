// Region options and the window line: see region_options.h.
#include "viewer_cli/region_options.h"

#include <algorithm>

#include <fmt/core.h>

#include "analysis/gap_causes.h"
#include "viewer_cli/report_views.h"

namespace cutrace::cli {

namespace {

std::string RangeName(const analysis::RegionSpec& s) {
  return s.domain.empty() ? s.range : s.range + "@" + s.domain;
}

}  // namespace

void AddRegionOptions(CLI::App* cmd, analysis::RegionSpec* spec) {
  CLI::Option* range =
      cmd->add_option_function<std::string>(
             "--range", [spec](const std::string& text) { analysis::SetRange(text, spec); },
             "Only the instances of this NVTX range (a name or glob such as 'ProfilerStep*'; "
             "NAME@DOMAIN for one domain)")
          ->type_name("NAME");
  // Alone it would be silently ignored: the window is the whole trace.
  cmd->add_option("--skip-first", spec->skip_first,
                  "With --range: drop each file's first N instances (warm-up; each "
                  "process's in a merged trace)")
      ->type_name("N")
      ->needs(range);
  cmd->add_option_function<std::string>(
         "--from",
         [spec](const std::string& text) {
           spec->has_from = ParseDuration(text, &spec->from_ns);
         },
         "Start of the window, from the trace start (10us, 2ms, 1.5s, 500ns; plain = ns)")
      ->check(DurationCheck())
      ->type_name("T");
  cmd->add_option_function<std::string>(
         "--to",
         [spec](const std::string& text) { spec->has_to = ParseDuration(text, &spec->to_ns); },
         "End of the window, from the trace start")
      ->check(DurationCheck())
      ->type_name("T");
}

std::string WindowLine(const analysis::Window& w) {
  if (!w.active)
    return "window: whole trace (choose one with --range NAME [--skip-first N] or --from/--to)";
  const uint64_t t0 = w.trace_start_ns;
  std::string where = fmt::format("{} to {} from the trace start, {}", FormatOffset(w.start_ns(), t0),
                                  FormatOffset(w.end_ns(), t0), FormatDuration(w.length_ns()));
  if (w.parts.size() > 1) where += fmt::format(" in {} parts", w.parts.size());
  if (w.spec.range.empty()) return "window: " + where;
  std::string chosen = fmt::format("{} of {} instances", w.chosen, w.instances);
  if (w.spec.skip_first > 0) chosen += fmt::format(", first {} skipped", w.spec.skip_first);
  if (w.spec.has_from || w.spec.has_to) chosen += ", starting inside --from/--to";
  return fmt::format("window: NVTX range '{}' ({}): {}", RangeName(w.spec), chosen, where);
}

nlohmann::json WindowJson(const analysis::Window& w) {
  if (!w.active) return {{"whole_trace", true}};
  nlohmann::json j = {{"whole_trace", false},
                      {"trace_start_ns", w.trace_start_ns},
                      {"start_ns", w.start_ns()},
                      {"end_ns", w.end_ns()},
                      {"duration_ns", w.length_ns()},
                      {"parts", w.parts.size()}};
  if (!w.spec.range.empty()) {
    j["range"] = w.spec.range;
    j["domain"] = w.spec.domain;
    j["skip_first"] = w.spec.skip_first;
    j["instances"] = w.instances;
    j["chosen"] = w.chosen;
  }
  if (w.spec.has_from) j["from_ns"] = w.spec.from_ns;
  if (w.spec.has_to) j["to_ns"] = w.spec.to_ns;
  return j;
}

void AddWindow(const analysis::Window& window, Format format, Rendered* r) {
  if (format == Format::kJson)
    r->json["window"] = WindowJson(window);
  else if (format == Format::kTable)
    r->lines.insert(r->lines.begin(), WindowLine(window));
  // A line under the window's (JSON: window.note / window.warning).
  auto say = [&](const char* key, const char* text) {
    if (format == Format::kJson)
      r->json["window"][key] = text;
    else if (format == Format::kTable)
      r->lines.insert(r->lines.begin() + 1, std::string(key) + ": " + text);
  };
  if (window.active && window.split_processes && !window.spec.range.empty())
    say("note",
        "a merged trace of several processes: each process's instances are its own (--skip-first "
        "counts per process) and its launches count only in them; device times are clipped to "
        "the union of all processes' instances (each rank's own: cutrace ranks)");
  if (window.active && window.unbanded_merge)
    say("warning",
        "merged by an older cutrace, which did not record where each process's correlation ids "
        "begin: the window may count other processes' launches; merge the inputs again");
}

std::string SteadyLine(const analysis::RangeCandidate& c, const analysis::Window& w) {
  const std::string name = c.domain.empty() || c.domain == "default"
                               ? c.pattern
                               : c.pattern + "@" + c.domain;
  return fmt::format(
      "steady state: NVTX range '{}', {} instances, the first {} skipped as warm-up: {} from "
      "{} ({}); choose another with --range NAME --skip-first N",
      name, c.instances, c.skip, FormatDuration(w.length_ns()),
      FormatOffset(w.start_ns(), w.trace_start_ns), w.parts.size() > 1
                                                  ? fmt::format("{} parts", w.parts.size())
                                                  : "one part");
}

std::string ProgramLine(const analysis::ProgramVerdict& v) {
  if (!v.known) return "verdict: no GPU work in the window";
  const std::string idle = TopCausesText(v.idle_by_cause_ns, v.idle_ns, 3, 1);
  return fmt::format("verdict: {}, GPU busy {:.1f}% of {}; idle {:.1f}%{}{}; {}", v.bound,
                     v.busy_pct, FormatDuration(v.span_ns), v.idle_pct,
                     idle.empty() ? "" : " (of it: ", idle.empty() ? "" : idle + ")", v.advice);
}

std::string CommLine(const analysis::ProgramVerdict& v) {
  if (v.comm_ns == 0) return "";
  return fmt::format("communication: {}, {:.1f}% hidden behind compute, {} exposed ({:.1f}% of "
                     "the span); {}",
                     FormatDuration(v.comm_ns), v.comm_hidden_pct, FormatDuration(v.comm_exposed_ns),
                     v.comm_span_pct, v.comm_advice);
}

nlohmann::json ProgramJson(const analysis::ProgramVerdict& v, const analysis::Window& window) {
  nlohmann::json causes = nlohmann::json::object();
  for (size_t c = 0; c < analysis::kGapCauses; ++c)
    causes[analysis::GapCauseName(static_cast<analysis::GapCause>(c))] = v.idle_by_cause_ns[c];
  nlohmann::json out = {{"window", WindowJson(window)},
                        {"span_ns", v.span_ns},
                        {"busy_ns", v.busy_ns},
                        {"idle_ns", v.idle_ns},
                        {"busy_pct", v.busy_pct},
                        {"idle_pct", v.idle_pct},
                        {"idle_by_cause_ns", causes},
                        {"largest_cause", analysis::GapCauseName(v.largest)},
                        {"bound", v.bound},
                        {"advice", v.advice}};
  if (v.comm_ns > 0)
    out["comm"] = {{"comm_ns", v.comm_ns},
                   {"hidden_ns", v.comm_hidden_ns},
                   {"exposed_ns", v.comm_exposed_ns},
                   {"hidden_pct", v.comm_hidden_pct},
                   {"exposed_span_pct", v.comm_span_pct},
                   {"mostly_exposed", v.comm_exposed},
                   {"advice", v.comm_advice}};
  return out;
}

std::optional<analysis::Window> WindowOrError(analysis::TraceSet traces,
                                              const analysis::RegionSpec& spec) {
  StatusOr<analysis::Window> window = analysis::ResolveWindow(traces, spec);
  if (!window.ok()) {
    PrintError(window.status().message());
    return std::nullopt;
  }
  return std::move(window).value();
}

int RunWindowedReport(const std::vector<std::string>& paths, Format format,
                      const analysis::RegionSpec& spec, const WindowedRenderFn& render) {
  LoadedTraces loaded;
  if (!LoadTraces(paths, &loaded)) return 1;
  // Nothing left over all the files: one line, no output.
  if (spec.active() && !WindowOrError(loaded.all, spec)) return 1;
  int status = 0;
  PrintReport(loaded, format,
              [&](analysis::TraceSet traces, Format f) {
                std::optional<analysis::Window> window = WindowOrError(traces, spec);
                if (!window) {
                  status = 1;
                  return Rendered();
                }
                auto shared = std::make_shared<const analysis::Window>(std::move(*window));
                Rendered r = render(traces, shared, f);
                AddWindow(*shared, f, &r);
                return r;
              },
              stdout);
  return status;
}

}  // namespace cutrace::cli
