// The region options every report takes (issue 19; analysis/region.h):
//   --range NAME        an NVTX range name or glob ('ProfilerStep*'); NAME@DOMAIN
//   --skip-first N      drop each file's first N instances (warm-up; each
//                       process's in a merged trace)
//   --from T, --to T    offsets from the trace start (10us, 2ms, 1.5s, 500ns)
// One function adds them (AddRegionOptions()), one struct carries them
// (analysis::RegionSpec), and analysis/ resolves the window; each report
// prints the window it used as its first line (table) or under "window"
// (JSON), through AddWindow(). Reports that load whole traces go through
// RunWindowedReport(); streamed ones through RunStreamedReport()
// (streamed_report.h), which resolves the window the same way.
// Called on the main thread only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analysis/program_verdict.h"
#include "analysis/region.h"
#include "viewer_cli/output.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {

// Adds the four options to `cmd`; durations are checked by ParseDuration(),
// as --min-gap's are.
void AddRegionOptions(CLI::App* cmd, analysis::RegionSpec* spec);
// The window `spec` names over `traces` (analysis/region.h ResolveWindow),
// or nullopt with the reason printed: one line for every command.
std::optional<analysis::Window> WindowOrError(analysis::TraceSet traces,
                                              const analysis::RegionSpec& spec);

// "window: ..." for table form, and the JSON object.
std::string WindowLine(const analysis::Window& window);
nlohmann::json WindowJson(const analysis::Window& window);
// Puts the window first in `r`: the line in table form, "window" in JSON.
void AddWindow(const analysis::Window& window, Format format, Rendered* r);

// The steady-state region named for the user: which range, and how to
// choose another.
std::string SteadyLine(const analysis::RangeCandidate& c, const analysis::Window& window);

// The program-level line (analysis/program_verdict.h): "verdict: VERDICT,
// GPU busy X% of SPAN; idle by cause ...; advice", and its JSON object
// (`window` included).
std::string ProgramLine(const analysis::ProgramVerdict& v);
// "communication: C (X% of GPU time ...), H% hidden behind compute; ADVICE",
// or "" when no communication kernel ran; JSON puts it under "comm" in
// ProgramJson().
std::string CommLine(const analysis::ProgramVerdict& v);
nlohmann::json ProgramJson(const analysis::ProgramVerdict& v, const analysis::Window& window);

using WindowedRenderFn = std::function<Rendered(analysis::TraceSet traces,
                                                std::shared_ptr<const analysis::Window> window,
                                                Format format)>;
// RunReport() (report_common.h) with the window resolved over each
// rendering's loaded traces and put first. Returns the exit status.
int RunWindowedReport(const std::vector<std::string>& paths, Format format,
                      const analysis::RegionSpec& spec, const WindowedRenderFn& render);

}  // namespace cutrace::cli
