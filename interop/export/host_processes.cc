// HostProcesses: see host_processes.h.
#include "interop/export/host_processes.h"

#include <fmt/core.h>

#include "analysis/rank_imbalance.h"

namespace cutrace::interop {
namespace {

std::string Label(const std::string& rank, const std::string& host, int64_t pid,
                  const std::vector<std::string>& command_line) {
  std::string name;
  if (!rank.empty()) name += "rank " + rank + " ";
  if (!host.empty()) name += host + " ";
  name += fmt::format("pid {}", pid);
  if (!command_line.empty()) name += ": " + command_line.front();
  return name;
}

// A process of file `f` from its Header or one of its MergedProcess
// entries (both carry pid, rank, host and command line).
template <class P>
HostProcess ProcessOf(size_t f, const P& from) {
  HostProcess p;
  p.file = f;
  p.pid = from.pid();
  p.rank = from.rank();
  p.command_line.assign(from.command_line().begin(), from.command_line().end());
  p.label = Label(p.rank, from.host(), p.pid, p.command_line);
  return p;
}

}  // namespace

HostProcesses::HostProcesses(analysis::TraceSet traces) {
  for (size_t f = 0; f < traces.size(); ++f) {
    const proto::Header& h = traces[f]->header;
    first_of_file_.push_back(processes_.size());
    if (h.processes_size() < 2) {
      processes_.push_back(ProcessOf(f, h));
      continue;
    }
    for (const proto::MergedProcess& m : h.processes()) {
      for (uint64_t tid : m.thread_ids()) by_thread_.emplace(std::make_pair(f, tid), processes_.size());
      for (uint32_t d : m.device_ids()) by_device_.emplace(std::make_pair(f, d), processes_.size());
      processes_.push_back(ProcessOf(f, m));
    }
  }
  // The chunks of one run (rotation, continuous windows) are one process
  // to the device rows: each file's work counts as its run's first file's.
  const analysis::Ranks runs = analysis::RanksOf(traces);
  std::map<uint32_t, size_t> first_of_run;
  for (size_t f = 0; f < traces.size(); ++f) {
    auto [it, fresh] = first_of_run.try_emplace(runs.of_file[f], first_of_file_[f]);
    run_process_.push_back(traces[f]->header.processes_size() < 2 ? it->second : first_of_file_[f]);
  }
  // Which processes ran work on each device.
  launch_process_.resize(traces.size());
  std::map<uint32_t, std::set<size_t>> owners;
  for (size_t f = 0; f < traces.size(); ++f) {
    const RecordBatch& r = traces[f]->records;
    if (traces[f]->header.processes_size() >= 2)
      for (const ApiRecord& a : r.api_calls)
        if (a.correlation_id) launch_process_[f].emplace(a.correlation_id, Of(f, a.thread_id));
    auto see = [&](const auto& ops) {
      for (const auto& o : ops)
        owners[o.device_id].insert(OpProcess(f, o.device_id, o.correlation_id));
    };
    see(r.kernels);
    see(r.memcpys);
    see(r.memsets);
  }
  for (const auto& [device, who] : owners)
    if (who.size() > 1)
      shared_devices_.insert(device);
    else
      owner_[device] = *who.begin();
  for (size_t i = 0; i < processes_.size(); ++i) {
    // The rank as a sort index when it is a plain number.
    const long rank = analysis::RankNumber(processes_[i].rank);
    processes_[i].sort_index = rank >= 0 ? rank : static_cast<int64_t>(i);
  }
}

size_t HostProcesses::Of(size_t file, uint64_t tid) const {
  auto it = by_thread_.find({file, tid});
  return it != by_thread_.end() ? it->second : first_of_file_[file];
}

size_t HostProcesses::OpProcess(size_t file, uint32_t device, uint64_t correlation) const {
  const std::unordered_map<uint64_t, size_t>& launches = launch_process_[file];
  if (!launches.empty() && correlation != 0)
    if (auto it = launches.find(correlation); it != launches.end()) return it->second;
  auto it = by_device_.find({file, device});
  return it != by_device_.end() ? it->second : run_process_[file];
}

uint32_t HostProcesses::Lane(size_t file, uint32_t device, uint64_t correlation) const {
  if (!shared_devices_.count(device)) return 0;
  return static_cast<uint32_t>(OpProcess(file, device, correlation) + 1);
}

std::string HostProcesses::GpuRank(uint32_t device) const {
  auto it = owner_.find(device);
  return processes_.size() > 1 && it != owner_.end() ? processes_[it->second].rank : "";
}

std::string HostProcesses::LaneName(uint32_t lane) const {
  if (lane == 0 || lane > processes_.size()) return "";
  const HostProcess& p = processes_[lane - 1];
  return p.rank.empty() ? fmt::format("pid {}", p.pid) : "rank " + p.rank;
}

}  // namespace cutrace::interop
