// Chunks of one continuous-mode run written for tests (interop merge, CLI
// reports): see WriteChunk().
#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "tests/unit/trace_file.h"

namespace cutrace::testing {

inline constexpr int64_t kRealtime0 = 1'700'000'000'000'000'000;
inline constexpr int64_t kHour = 3'600'000'000'000;

// Chunk `index` of a run of process `pid`: one "step" kernel of 1000 + index
// ns at index hours (continuous-mode windows an hour apart), launched from
// thread 9 with correlation 10 * index + 1; its own NVTX range (id index +
// 1); and one launch at its end (correlation 10 * index + 5) whose kernel is
// in the next chunk. Statistics: the process's totals so far (index + 1
// kernels).
inline std::string WriteChunk(const std::string& dir, const std::string& run, int64_t pid,
                              uint32_t index, uint32_t chunks) {
  HeaderInfo h;
  h.producer = "chunk_writer";
  h.host = "node1";
  h.pid = pid;
  h.mode = "continuous";
  h.run_id = run;
  h.chunk_index = index;
  h.chunk_reason = index ? "window" : "";
  h.clock = ClockDomain::kMonotonic;
  const int64_t t0 = index * kHour;  // the chunk's first timestamp, monotonic
  h.start_anchor = {t0, kRealtime0 + t0, t0};
  TraceFile file(dir + "/" + run + "." + std::to_string(index) + ".trace", h);
  auto launch = [&](uint64_t at, uint64_t corr) {
    file.Api("cudaLaunchKernel", at, at + 10, /*thread=*/9, corr);
  };
  auto kernel = [&](uint64_t s, uint64_t e, uint64_t corr) { file.Kernel("step", s, e, corr); };
  launch(t0 + 100, 10 * index + 1);
  kernel(t0 + 200, t0 + 1200 + index, 10 * index + 1);
  if (index > 0) kernel(t0 + 50, t0 + 90, 10 * (index - 1) + 5);  // launched last chunk
  if (index + 1 < chunks) launch(t0 + 2000, 10 * index + 5);
  file.Range("window", t0, t0 + 3000, /*thread=*/9).range_id = index + 1;
  file.Batch();
  StatsInfo stats;
  stats.kernels = index + 1;
  stats.records_handled = 10 * (index + 1);
  file.Statistics(stats);
  return file.Finish(EndInfo{{}, "exit"});
}

}  // namespace cutrace::testing
