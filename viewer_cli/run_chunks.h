// The trace files a `cutrace run` produced, chunks included.
//
// The run manifest names each traced process's first trace path. A rotated
// or windowed run (continuous mode, CUTRACE_MAX_FILE_SIZE, capture ranges)
// goes on in name.1.trace, name.2.trace, ... (collector/rotation.h
// ChunkPath()), and the disk cap deletes the oldest chunks, the first one
// too; with capture ranges the first is a placeholder that goes when the
// first range opens. So the files are found beside each manifest path: the
// path itself if it still exists, and every name.N.trace modified since the
// run started (older ones are a previous run's under the same name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cutrace::cli {

struct RunOutput {
  std::string first;                // the manifest's path
  std::vector<std::string> files;   // what exists of it, in chunk order
  uint32_t last_index = 0;          // the highest chunk index found
};

// For each manifest path (in order), its files. `started_s`: when the run
// began, in seconds since the epoch; files modified before it are left out.
std::vector<RunOutput> FindRunOutputs(const std::vector<std::string>& manifest_paths,
                                      int64_t started_s);

// "wrote PATH", or for several chunks "wrote N chunks: FIRST … LAST".
std::string WroteLine(const RunOutput& out);

}  // namespace cutrace::cli
