// Stragglers (issue 21 point 5): over several ranks that run the same steps
// (an NVTX range such as torch.profiler's ProfilerStep#N), per step the
// slowest rank, its excess over the median, and what the excess is.
//
// A rank is a process (rank_imbalance.h RanksOf(): a run's chunks are one;
// each process of a merged file is one: its threads' ranges and calls, and
// the GPU work they launched, or, launched by no call of the file, that ran
// on its devices). Ranks are in the order of the ranks their headers give
// when every one gives one, else as given. A rank's steps are the instances
// of the range (a glob, as --range takes) at the least depth any has (0
// unless an enclosing range holds them all), in start order. When every
// step of every rank is named "...#N" with distinct N (torch.profiler's
// ProfilerStep#N), step N of one rank is step N of the others, over the
// numbers every rank has; otherwise step k is each rank's k-th, over the
// steps every rank has. A step's window on a rank is the region's (region.h): [CPU
// start, max(CPU end, end of the last GPU operation launched inside it on
// any thread of the process)], operations joined to their launch call by
// correlation id. Within it, over the rank's devices added up:
//   compute = |compute kernels ∩ window|, comm = |communication kernels ∩
//   window| (comm_kernels.h), idle = |window| - |all GPU work ∩ window|,
// each device counted over the whole window.
// Per step: duration = |window|; the slowest rank has the longest (ties:
// the first); median over the ranks (for an even count the mean of the two
// middle values, rounded half up); excess = slowest - median. The cause is
// the one of compute, comm and idle by which the slowest rank exceeds the
// median of that figure over the ranks the most ("none" when none does).
//
// The slowest window alone does not name the straggler of a synchronous
// job: every rank waits at the step's collectives for the last to arrive,
// so the windows end together and the longest is often an early rank whose
// communication kernels spun while they waited. The rank the others waited
// for is the one with the least communication in the step (it arrived last
// and waited least): waited_for, with wait = the most communication any rank
// had minus its (ties: the first). None (-1) unless every rank has
// communication in the step and the wait is at least kWaitFloorPct of the
// median step: balanced ranks differ by jitter, which names nobody.
//
// Pure; call from any thread on traces no one is modifying.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/comm_kernels.h"
#include "analysis/trace_set.h"

namespace cutrace::analysis {

// The least wait, in percent of the step's median duration, that names the
// rank waited for.
inline constexpr uint64_t kWaitFloorPct = 5;

struct StepOnRank {
  uint64_t start_ns = 0, end_ns = 0;  // the window, on the rank's clock
  uint64_t compute_ns = 0, comm_ns = 0, idle_ns = 0;
  long number = -1;  // N of a range named "...#N" (ProfilerStep#N), else -1
  uint64_t duration_ns() const { return end_ns - start_ns; }
};

struct StepStraggler {
  size_t step = 0;     // the step's number N (by_number), else the step-th instance of each rank
  size_t slowest = 0;  // rank index
  uint64_t duration_ns = 0;  // the slowest rank's
  uint64_t median_ns = 0;
  uint64_t excess_ns = 0;
  // The slowest rank's figure minus the median of that figure (negative:
  // below it); cause is the largest positive one.
  int64_t compute_excess_ns = 0, comm_excess_ns = 0, idle_excess_ns = 0;
  std::string cause;  // "compute", "comm", "idle" or "none"
  long waited_for = -1;  // rank index, or -1 (see above)
  uint64_t wait_ns = 0;  // max comm - the waited-for rank's comm
  std::vector<StepOnRank> ranks;  // by rank
};

struct StragglerReport {
  std::string range;                // the glob used
  std::vector<std::string> ranks;   // labels (RanksOf(); "PATH: rank R" for a merged file's)
  std::vector<long> rank_ids;       // per rank: the rank its header gives, -1 when none
  bool by_number = false;           // steps matched by their "#N", not by position
  std::vector<size_t> steps_of;     // instances per rank
  std::vector<StepStraggler> steps; // the steps every rank has
  std::vector<size_t> waited_for;   // per rank: the steps it was waited for in
  std::vector<uint64_t> median_wait_ns;  // per rank: the median wait over those steps
};

// Needs two ranks or more (else an error saying so); an error too when a
// rank has no instance of `range`.
StatusOr<StragglerReport> FindStragglers(TraceSet traces, const std::string& range,
                                         std::shared_ptr<const CommClassifier> comm = nullptr);

}  // namespace cutrace::analysis
