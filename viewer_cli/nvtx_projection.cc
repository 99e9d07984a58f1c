// See nvtx_projection.h.
#include "viewer_cli/nvtx_projection.h"

#include <fmt/core.h>

#include "viewer_cli/option_words.h"

namespace cutrace::cli {

void AddNvtxProjectionOption(CLI::App* cmd, bool* process) {
  StringWords(cmd->add_option_function<std::string>(
                     "--nvtx-projection",
                     [process](const std::string& value) { *process = value == "process"; },
                     "GPU work of an NVTX range: launched by the range's own thread while it "
                     "is open (thread, as nsys), or by any thread of its process (process: "
                     "e.g. PyTorch's autograd thread)"),
              {"thread", "process"})
      ->default_str("thread");
}

std::vector<std::string> NvtxProjectionNotes(const analysis::NvtxReport& report) {
  if (report.process_projection)
    return {"GPU projection: work launched by any thread of the process while a range is open "
            "(--nvtx-projection process)"};
  if (report.other_thread_launches == 0 || report.ranges.empty()) return {};
  return {fmt::format(
      "note: {} launches by other threads ran while ranges were open and are not in those "
      "ranges' GPU projection (each range takes its own thread's launches, as nsys does); "
      "--nvtx-projection process counts every thread's",
      report.other_thread_launches)};
}

}  // namespace cutrace::cli
