// The --comm-pattern option of the reports that keep communication apart
// from compute (overlap, summary, timeline, diff, diagnose, ranks): which
// kernels besides NCCL/RCCL/NVSHMEM's are communication
// (analysis/comm_kernels.h). A pattern that is not a regex is a usage error
// (one line, exit 2) at parse time, before any file is read.
// Called on the main thread only.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

#include "analysis/comm_kernels.h"

namespace cutrace::cli {

// Adds --comm-pattern REGEX to `cmd`; `out` stays null (the built-ins) when
// it is not given.
void AddCommOption(CLI::App* cmd, std::shared_ptr<const analysis::CommClassifier>* out);

}  // namespace cutrace::cli
