// Streamed report commands: see streamed_report.h.
#include "viewer_cli/streamed_report.h"

#include <fmt/core.h>

namespace cutrace::cli {

bool OpenStreams(const std::vector<std::string>& paths, Streams* out) {
  out->clear();
  for (const std::string& path : paths) {
    auto opened = analysis::StreamedTrace::Open(path);
    if (!opened.ok()) {
      // The reader's messages mostly start with the path already; keep the
      // "cutrace: PATH: REASON" shape either way.
      const std::string& message = opened.status().message();
      PrintError(message.rfind(path + ":", 0) == 0 ? message : path + ": " + message);
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

std::vector<analysis::StreamedTrace*> StreamsOf(analysis::TraceSet traces, const Streams& streams) {
  std::vector<analysis::StreamedTrace*> subset;
  for (const TraceData* info : traces)
    for (const auto& stream : streams)
      if (&stream->info() == info) subset.push_back(stream.get());
  return subset;
}

int RunStreamedReport(const std::vector<std::string>& paths, Format format,
                      const analysis::ReportParts& parts, const analysis::GapOptions& gaps,
                      const EngineRenderFn& render) {
  Streams streams;
  if (!OpenStreams(paths, &streams)) return 1;
  LoadedTraces infos;
  for (const auto& stream : streams) infos.all.push_back(&stream->info());
  int status = 0;
  PrintReport(infos, format,
              [&](analysis::TraceSet traces, Format f) {
                std::vector<analysis::StreamedTrace*> subset = StreamsOf(traces, streams);
                StatusOr<std::unique_ptr<analysis::ReportEngine>> engine =
                    analysis::StreamTraces(subset, parts, gaps);
                if (!engine.ok()) {  // the file changed since it was opened
                  PrintError(engine.status().message());
                  status = 1;
                  return Rendered();
                }
                return render(**engine, traces, subset, f);
              },
              stdout);
  return status;
}

}  // namespace cutrace::cli
