// Report commands as one streaming pass per rendering: the files are mapped
// and checked once (analysis/stream_summary.h StreamedTrace), and each
// rendering (every file's own, then the aggregate, as report_common.h
// prints them) streams its files through one ReportEngine
// (analysis/report_engine.h) computing the parts the command asks for.
// Memory follows distinct names and the disorder between packets, never the
// number of events, so a report over a trace of any size fits in memory.
//
// Errors: a file that cannot be opened prints "cutrace: PATH: REASON" and
// the command exits 1; a truncated one prints report_common.h's warning and
// is reported as far as it can be read. Called on the main thread only.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/report_engine.h"
#include "analysis/stream_summary.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {

using Streams = std::vector<std::unique_ptr<analysis::StreamedTrace>>;

// Opens every path. On the first unreadable file prints its error line and
// returns false; truncated files open with a warning on stderr.
bool OpenStreams(const std::vector<std::string>& paths, Streams* out);

// The files of `traces` (infos of `streams`) as the streams they belong to.
// One warning line when a streamed trace, read through, has no end-of-trace
// marker and was not truncated (a truncated one was reported on opening).
void WarnIfCutShort(const TraceData& info);

std::vector<analysis::StreamedTrace*> StreamsOf(analysis::TraceSet traces, const Streams& streams);

// Renders from a finished engine; `traces` holds each file's header,
// devices, strings, counters and statistics (not its records), in engine
// file order, and `streams` the same files for a further pass.
using EngineRenderFn = std::function<Rendered(
    analysis::ReportEngine& engine, analysis::TraceSet traces,
    std::span<analysis::StreamedTrace* const> streams, Format format)>;

// Opens, streams (per file and aggregate) and prints. Returns the exit
// status. With an active `region` (region_options.h) each rendering's window
// is resolved first (analysis/region.h) and the engine covers it only; the
// window is put first in every rendering (AddWindow()). With `steady` and no
// region, the steady state (analysis/region.h) gets a second device sweep in
// the same pass (ReportEngine::second_window(), SecondTimeline()).
int RunStreamedReport(const std::vector<std::string>& paths, Format format,
                      const analysis::ReportParts& parts, const analysis::GapOptions& gaps,
                      const EngineRenderFn& render, const analysis::RegionSpec& region = {},
                      bool steady = false);

// The window of `region` over `streams` (inactive and unresolved when the
// region is, unless `always`: the first pass then finds the steady state).
// On error prints it and returns null. With `steady`, when the first pass
// finds a steady-state candidate, *steady receives its window, resolved
// from the same first pass (null, its error printed, when it has none).
std::shared_ptr<const analysis::Window> StreamedWindow(
    std::span<analysis::StreamedTrace* const> streams, const analysis::RegionSpec& region,
    bool always = false, std::shared_ptr<const analysis::Window>* steady = nullptr);

}  // namespace cutrace::cli
