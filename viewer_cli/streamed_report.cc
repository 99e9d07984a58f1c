// Streamed report commands: see streamed_report.h.
#include "viewer_cli/streamed_report.h"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "viewer_cli/region_options.h"

namespace cutrace::cli {

bool OpenStreams(const std::vector<std::string>& paths, Streams* out) {
  out->clear();
  for (const std::string& path : paths) {
    auto opened = analysis::StreamedTrace::Open(path);
    if (!opened.ok()) {
      PrintOpenError(path, opened.status().message());
      return false;
    }
    const TraceData& info = (*opened)->info();
    if (info.read.truncated)
      PrintError(fmt::format("{}: warning: file truncated ({} bytes after the last complete "
                             "packet lost); reporting the readable part",
                             path, info.read.lost_bytes));
    out->push_back(std::move(opened).value());
  }
  return true;
}

void WarnIfCutShort(const TraceData& info) {
  if (info.read.truncated || info.clean_shutdown()) return;  // OpenStreams() said it
  PrintError(fmt::format("{}: warning: no end-of-trace marker: the program did not exit cleanly "
                         "(or the file was cut between packets); reporting what it holds",
                         info.path));
}

std::vector<analysis::StreamedTrace*> StreamsOf(analysis::TraceSet traces, const Streams& streams) {
  std::vector<analysis::StreamedTrace*> subset;
  for (const TraceData* info : traces)
    for (const auto& stream : streams)
      if (&stream->info() == info) subset.push_back(stream.get());
  return subset;
}

namespace {

std::shared_ptr<const analysis::Window> Shared(StatusOr<analysis::Window> window) {
  if (!window.ok()) {
    PrintError(window.status().message());
    return nullptr;
  }
  return std::make_shared<const analysis::Window>(std::move(window).value());
}

}  // namespace

std::shared_ptr<const analysis::Window> StreamedWindow(
    std::span<analysis::StreamedTrace* const> streams, const analysis::RegionSpec& region,
    bool always, std::shared_ptr<const analysis::Window>* steady) {
  if (!region.active() && !always) {
    // No window to resolve; its trace start (where gap offsets count from)
    // from the packets' start hints, which every file of ours has. A file
    // whose hints do not say (foreign encoding) leaves it 0: unknown.
    analysis::Window whole;
    uint64_t start = UINT64_MAX;
    for (const analysis::StreamedTrace* t : streams) {
      if (t->start_hint() == 0) {
        start = 0;
        break;
      }
      start = std::min(start, t->start_hint());
    }
    whole.trace_start_ns = start == UINT64_MAX ? 0 : start;
    return std::make_shared<const analysis::Window>(std::move(whole));
  }
  StatusOr<analysis::Window> second = Status::Error("");
  std::shared_ptr<const analysis::Window> window =
      Shared(analysis::ResolveStreamedWindow(streams, region, steady ? &second : nullptr));
  // The steady state's window, resolved with it (a failure just leaves it out).
  if (window && steady && window->steady) *steady = Shared(std::move(second));
  return window;
}

int RunStreamedReport(const std::vector<std::string>& paths, Format format,
                      const analysis::ReportParts& parts, const analysis::GapOptions& gaps,
                      const EngineRenderFn& render, const analysis::RegionSpec& region,
                      bool steady) {
  Streams streams;
  if (!OpenStreams(paths, &streams)) return 1;
  LoadedTraces infos;
  for (const auto& stream : streams) infos.all.push_back(&stream->info());
  // A region that holds nothing over all the files is one error line, before
  // any output.
  std::vector<analysis::StreamedTrace*> all;
  for (const auto& stream : streams) all.push_back(stream.get());
  std::shared_ptr<const analysis::Window> whole;
  if (region.active() && (whole = StreamedWindow(all, region)) == nullptr) return 1;
  int status = 0;
  std::set<const TraceData*> warned;
  PrintReport(infos, format,
              [&](analysis::TraceSet traces, Format f) {
                std::vector<analysis::StreamedTrace*> subset = StreamsOf(traces, streams);
                const bool want_steady = steady && !region.active();
                std::shared_ptr<const analysis::Window> second;
                std::shared_ptr<const analysis::Window> window =
                    whole && subset.size() == all.size()
                        ? whole
                        : StreamedWindow(subset, region, want_steady, want_steady ? &second : nullptr);
                if (window == nullptr) {
                  status = 1;
                  return Rendered();
                }
                StatusOr<std::unique_ptr<analysis::ReportEngine>> engine =
                    analysis::StreamTraces(subset, parts, gaps, nullptr, window, second);
                if (!engine.ok()) {  // the file changed since it was opened
                  PrintError(engine.status().message());
                  status = 1;
                  return Rendered();
                }
                // Summary lists it among its warnings; the other reports
                // here, once the pass has read the end (or not).
                if (!parts.counts)
                  for (const TraceData* t : traces)
                    if (warned.insert(t).second) WarnIfCutShort(*t);
                Rendered r = render(**engine, traces, subset, f);
                AddWindow(*window, f, &r);
                // Summary says it beside its kernel table; the other
                // reports of device time (and nvtx's GPU projection) here.
                if ((parts.timeline || parts.nvtx) && !parts.kernels)
                  AddUntimedCountedNote(traces, f, &r);
                return r;
              },
              stdout);
  return status;
}

}  // namespace cutrace::cli
