// See side_trace.h.
#include "collector/side_trace.h"

namespace cutrace {

StatusOr<std::unique_ptr<SideTrace>> SideTrace::Create(const std::string& path,
                                                       const HeaderInfo& header,
                                                       const std::vector<DeviceInfo>& devices,
                                                       const TraceWriterOptions& options) {
  auto created = TraceWriter::Create(path, options);
  if (!created.ok()) return created.status();
  std::unique_ptr<SideTrace> side(new SideTrace(std::move(created).value()));
  Status s = side->writer_->WriteHeader(header);
  for (const DeviceInfo& d : devices) {
    if (s.ok()) s = side->writer_->WriteDevice(d);
  }
  if (!s.ok()) return s;
  return side;
}

uint32_t SideTrace::Map(uint32_t id, const StringInterner& source) {
  if (id == 0) return 0;
  auto it = ids_.find(id);
  if (it != ids_.end()) return it->second;
  const uint32_t mapped = own_.Intern(source.Lookup(id));
  ids_.emplace(id, mapped);
  return mapped;
}

Status SideTrace::Write(const RecordBatch& batch, const StringInterner& source) {
  scratch_ = batch;
  for (KernelRecord& k : scratch_.kernels) k.name_id = Map(k.name_id, source);
  for (RangeRecord& r : scratch_.ranges) {
    r.name_id = Map(r.name_id, source);
    r.domain_id = Map(r.domain_id, source);
  }
  for (ApiRecord& a : scratch_.api_calls) a.name_id = Map(a.name_id, source);
  records_ += scratch_.size();
  return writer_->WriteBatch(scratch_, own_);
}

Status SideTrace::Finish(const StatsInfo& stats, const EndInfo& end) {
  Status s = writer_->WriteStatistics(stats);
  if (s.ok()) s = writer_->WriteEnd(end);
  Status closed = writer_->Close();
  return s.ok() ? closed : s;
}

}  // namespace cutrace
