// `--nvtx-projection thread|process` (issue 19 point 7) for the reports that
// project NVTX ranges onto the GPU (`nvtx`, `summary`), and the lines they
// print about the rule: which one was used, and, with the default, how many
// launches of other threads ran inside ranges that the rule left out
// (analysis/nvtx_projector.h).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/nvtx_stats.h"

namespace cutrace::cli {

// Sets *process when the user asks for `process`.
void AddNvtxProjectionOption(CLI::App* cmd, bool* process);

// Table lines (and JSON notes): the rule when it is `process`; with
// `thread`, a pointer to `process` when other threads' launches were left
// out. None when there is nothing to say.
std::vector<std::string> NvtxProjectionNotes(const analysis::NvtxReport& report);

}  // namespace cutrace::cli
