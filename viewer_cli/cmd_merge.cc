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
#include "viewer_cli/command_registry.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  std::string output;
};

int Run(const Options& o) {
  if (o.files.size() < 2) {
    PrintError("merge needs at least two trace files");
    return 2;
  }
  struct stat st;
  if (lstat(o.output.c_str(), &st) == 0) {
    PrintError(fmt::format("{} {}: cutrace never overwrites; remove it or choose another -o",
                           o.output, S_ISLNK(st.st_mode) ? "is a symlink" : "exists"));
    return 1;
  }
  LoadedTraces loaded;
  if (!LoadTraces(o.files, &loaded)) return 1;
  StatusOr<interop::PlacedTraces> placed = interop::PlaceTraces(loaded.all);
  if (!placed.ok()) {
    PrintError(placed.status().message());
    return 1;
  }
  interop::MergedTrace merged = interop::MergePlacedTraces(*placed);
  auto file = interop::FileSink::Create(o.output);
  if (!file.ok()) {
    PrintError(file.status().message());
    return 1;
  }
  Status s = interop::EncodeMergedTrace(merged, file->get());
  if (s.ok()) s = (*file)->Commit();
  if (!s.ok()) {
    PrintError(s.message());
    return 1;
  }
  fmt::print("merged {} files ({} devices) into {}\n", loaded.all.size(), merged.devices.size(),
             o.output);
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
    PrintLine(stdout, line);
  }
  return 0;
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge traces of several processes/ranks/hosts into one, on one timeline");
  cmd->add_option("files", options->files, "Trace files (each with clock anchors)")->required();
  cmd->add_option("-o,--output", options->output, "The trace to create (never overwritten)")
      ->required();
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

const CommandRegistration kRegistration("merge", 95, Register);

}  // namespace
}  // namespace cutrace::cli
