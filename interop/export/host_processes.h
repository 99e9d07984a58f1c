// The host processes of traces being exported, so that each traced process
// (each rank) is its own process in Chrome JSON and Perfetto: one per file,
// or, for a merged trace (Header.processes, written by `cutrace merge`), one
// per process it joins, owning the host threads listed for it.
//
// Pure; call from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/trace_set.h"

namespace cutrace::interop {

struct HostProcess {
  size_t file = 0;
  int64_t pid = 0;  // as recorded (0: not known)
  std::string rank;
  std::vector<std::string> command_line;
  // "rank R HOST pid P: COMMAND", the parts that are known.
  std::string label;
  // Sorting: the rank where it is a number, else the position among all.
  int64_t sort_index = 0;
};

class HostProcesses {
 public:
  explicit HostProcesses(analysis::TraceSet traces);
  const std::vector<HostProcess>& all() const { return processes_; }
  // Index in all() of the process that owns host thread `tid` of `file`.
  size_t Of(size_t file, uint64_t tid) const;
  // Where a GPU operation of `file` on `device` goes among the device's
  // rows: 0 where one process alone ran work on the device, else 1 + the
  // index in all() of the operation's process (its launch call's thread's,
  // or the device's owner without one), so that two processes on one GPU
  // (the same UUID: one device id) keep their streams apart. Stream ids are
  // each process's own.
  uint32_t Lane(size_t file, uint32_t device, uint64_t correlation) const;
  // A GPU operation's row key on its device: (Lane() << 32) | stream.
  uint64_t StreamKey(size_t file, uint32_t device, uint32_t stream, uint64_t correlation) const {
    return (uint64_t{Lane(file, device, correlation)} << 32) | stream;
  }
  // With several processes, the rank of the one process that ran work on
  // `device` (an id of the exported traces); "" when none or several did.
  std::string GpuRank(uint32_t device) const;
  // "rank R" or "pid P": which process a lane is, for row names.
  std::string LaneName(uint32_t lane) const;

 private:
  std::vector<HostProcess> processes_;
  std::vector<size_t> first_of_file_;
  std::vector<size_t> run_process_;  // per file: its run's first file's process
  std::map<std::pair<size_t, uint64_t>, size_t> by_thread_;
  std::map<std::pair<size_t, uint32_t>, size_t> by_device_;
  size_t OpProcess(size_t file, uint32_t device, uint64_t correlation) const;
  // Merged files: the process of each launch, by correlation id.
  std::vector<std::unordered_map<uint64_t, size_t>> launch_process_;
  std::set<uint32_t> shared_devices_;  // devices that several processes ran work on
  std::map<uint32_t, size_t> owner_;     // the others: the process that did
};

}  // namespace cutrace::interop
