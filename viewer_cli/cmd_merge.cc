// `cutrace merge FILE... -o OUT.trace`: one trace from the traces of several
// processes, ranks or hosts, placed on one timeline by their clock anchors
// (interop/merge/trace_placement.h, interop/merge/trace_merge.h). Refuses files without
// anchors, and never overwrites OUT.
#include <sys/stat.h>

#include <memory>
#include <string>

#include <fmt/core.h>

#include "interop/export/export_sink.h"
#include "interop/merge/trace_merge.h"
#include "interop/merge/trace_placement.h"
#include "viewer_cli/output_file.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_merge {
namespace {

struct Options {
  std::vector<std::string> files;
  OutputOption output;
  std::string max_skew = "1h";
};

int Run(const Options& o) {
  if (o.files.size() < 2) {
    PrintError("merge needs at least two trace files");
    return 2;
  }
  if (!PrepareOutput(o.output)) return 1;
  LoadedTraces loaded;
  if (!LoadTraces(o.files, &loaded)) return 1;
  StatusOr<interop::PlacedTraces> placed = interop::PlaceTraces(loaded.all);
  if (!placed.ok()) {
    PrintError(placed.status().message());
    return 1;
  }
  uint64_t max_skew = 0;
  ParseDuration(o.max_skew, &max_skew);  // checked by the option's validator
  StatusOr<std::string> gap = interop::CheckTimeGap(*placed, static_cast<int64_t>(max_skew));
  if (!gap.ok()) {
    PrintError(gap.status().message());
    return 1;
  }
  if (!gap->empty()) PrintError(*gap);
  interop::MergedTrace merged = interop::MergePlacedTraces(*placed);
  Status s;
  if (o.output.ToStdout()) {
    StdoutSink out;
    s = interop::EncodeMergedTrace(merged, &out);
    if (s.ok()) s = out.Finish();
  } else {
    auto file = interop::FileSink::Create(o.output.path, o.output.force);
    if (!file.ok()) {
      PrintError(file.status().message());
      return 1;
    }
    s = interop::EncodeMergedTrace(merged, file->get());
    if (s.ok()) s = (*file)->Commit();
  }
  if (!s.ok()) {
    PrintError(s.message());
    return 1;
  }
  std::FILE* messages = o.output.Messages();
  PrintLine(messages, fmt::format("merged {} files ({} devices) into {}", loaded.all.size(),
                                  merged.devices.size(),
                                  o.output.ToStdout() ? "stdout" : o.output.path));
  // How each input moved and which ids its devices now have.
  for (size_t f = 0; f < placed->traces.size(); ++f) {
    const TraceData& t = *loaded.all[f];
    std::string line = fmt::format("  {}: host {} pid {}{}, offset {} ns", t.path,
                                   t.header.host().empty() ? "?" : t.header.host(), t.header.pid(),
                                   t.header.rank().empty() ? "" : " rank " + t.header.rank(),
                                   placed->offsets_ns[f]);
    for (const interop::PlacedDevice& d : placed->devices)
      if (d.file == f && d.id != d.original)
        line += fmt::format(", device {} -> {}", d.original, d.id);
    PrintLine(messages, line);
  }
  return 0;
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Merge traces of several processes/ranks/hosts into one, on one timeline");
  cmd->add_option("files", options->files, "Trace files (each with clock anchors)")->required();
  AddOutputOptions(cmd, &options->output, "The trace to create");
  AddMaxSkewOption(cmd, &options->max_skew);
}

const CommandRegistration kRegistration("merge", 95, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_merge
