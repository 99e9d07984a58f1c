// See rotation.h.
#include "collector/rotation.h"

#include <sys/stat.h>
#include <unistd.h>

namespace cutrace {
namespace {

std::string FileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string ChunkPath(const std::string& first, uint32_t index) {
  if (index == 0) return first;
  const size_t slash = first.rfind('/');
  const size_t dot = first.rfind('.');
  const std::string n = std::to_string(index);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1) {
    return first + "." + n;
  }
  return first.substr(0, dot) + "." + n + first.substr(dot);
}

ChunkSeries::ChunkSeries(std::string first_path, HeaderInfo header, RotationOptions options)
    : first_path_(std::move(first_path)), header_(std::move(header)), options_(options) {}

HeaderInfo ChunkSeries::HeaderFor(uint32_t index, const std::string& reason) const {
  HeaderInfo h = header_;
  h.chunk_index = index;
  h.previous_chunk = index == 0 ? std::string() : previous_name_;
  h.chunk_reason = reason;
  h.max_file_bytes = options_.max_file_bytes;
  h.rotate_interval_ns = options_.rotate_interval_ns;
  h.max_disk_bytes = options_.max_disk_bytes;
  h.chunks_deleted = deleted_;
  return h;
}

HeaderInfo ChunkSeries::FirstHeader() const { return HeaderFor(0, ""); }

void ChunkSeries::AdoptFirst(int64_t now_ns) {
  index_ = 0;
  current_path_ = first_path_;
  opened_ns_ = now_ns;
  live_.assign(1, current_path_);
  live_bytes_.assign(1, 0);
}

void ChunkSeries::AddDevice(const DeviceInfo& device) {
  for (const DeviceInfo& d : devices_)
    if (d.id == device.id) return;
  devices_.push_back(device);
}

bool ChunkSeries::Due(const TraceWriter& current, int64_t now_ns) const {
  if (options_.max_file_bytes != 0 && current.bytes_encoded() >= options_.max_file_bytes) return true;
  return options_.rotate_interval_ns != 0 &&
         now_ns - opened_ns_ >= static_cast<int64_t>(options_.rotate_interval_ns);
}

Status ChunkSeries::Finish(TraceWriter* current, const StatsInfo& stats, const EndInfo& end) {
  Status s = current->WriteStatistics(stats);
  if (s.ok()) s = current->WriteEnd(end);
  Status closed = current->Close();
  if (s.ok()) s = closed;
  if (!live_bytes_.empty()) live_bytes_.back() = current->bytes_written();
  return s;
}

StatusOr<std::unique_ptr<TraceWriter>> ChunkSeries::OpenNext(StringInterner& interner,
                                                            const std::string& reason,
                                                            int64_t now_ns) {
  previous_name_ = FileName(current_path_);
  std::string last_error;
  // An index whose file exists (a leftover) is skipped, never overwritten.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const uint32_t index = index_ + 1;
    const std::string path = ChunkPath(first_path_, index);
    index_ = index;
    auto created = TraceWriter::Create(path, options_.writer);
    if (!created.ok()) {
      last_error = created.status().message();
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) continue;
      return Status::Error(last_error);
    }
    std::unique_ptr<TraceWriter> w = std::move(created).value();
    Status s = w->WriteHeader(HeaderFor(index, reason));
    for (const DeviceInfo& d : devices_) {
      if (s.ok()) s = w->WriteDevice(d);
    }
    // The header goes out at once, so even a chunk cut short says what it is.
    if (s.ok()) s = w->Flush();
    if (!s.ok()) {
      static_cast<void>(w->Close());
      ::unlink(path.c_str());
      return Status::Error("cannot write " + path + ": " + s.message());
    }
    interner.MarkAllNew();
    current_path_ = path;
    opened_ns_ = now_ns;
    live_.push_back(path);
    live_bytes_.push_back(0);
    ApplyCap(w->bytes_encoded());
    return w;
  }
  return Status::Error(last_error);
}

void ChunkSeries::ApplyCap(uint64_t current_bytes) {
  if (options_.max_disk_bytes == 0) return;
  uint64_t total = current_bytes;
  for (size_t i = 0; i + 1 < live_bytes_.size(); ++i) total += live_bytes_[i];
  // Leave room for the current chunk to grow to its own limit.
  const uint64_t room = options_.max_file_bytes;
  while (live_.size() > 1 && total + room > options_.max_disk_bytes) {
    ::unlink(live_.front().c_str());
    total -= live_bytes_.front();
    live_.pop_front();
    live_bytes_.pop_front();
    ++deleted_;
  }
}

}  // namespace cutrace
