// See trace_writer.h.
#include "collector/trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "collector/info_encoder.h"
#include "collector/private_file.h"
#include "collector/proto_writer.h"
#include "collector/summary_aggregator.h"
#include "collector/wire_fields.h"

namespace cutrace {

namespace {

// Records per EventBatch packet: bounds a packet to ~120 MiB even when every
// value takes its widest encoding, below the reader's kMaxPacketBytes.
constexpr size_t kMaxRecordsPerPacket = size_t{1} << 20;

template <typename T>
void Slice(const std::vector<T>& from, size_t* skip, size_t* room, std::vector<T>* to) {
  to->clear();
  if (*skip >= from.size()) {
    *skip -= from.size();
    return;
  }
  const size_t take = std::min(from.size() - *skip, *room);
  to->assign(from.begin() + *skip, from.begin() + *skip + take);
  *skip = 0;
  *room -= take;
}

// Appends the framing of a packet whose payload body is `body_size` bytes:
// Trace.packet tag and length, then the payload field's tag and length.
void AppendFraming(uint32_t payload_field, size_t body_size, std::string* out) {
  ProtoWriter w(out);
  const size_t payload = VarintSize(MakeTag(payload_field, WireType::kLengthDelimited)) +
                         VarintSize(body_size) + body_size;
  w.AppendTag(wire::Trace::kPacket, WireType::kLengthDelimited);
  w.AppendVarint(payload);
  w.AppendTag(payload_field, WireType::kLengthDelimited);
  w.AppendVarint(body_size);
}

}  // namespace

template <typename F>
void TraceEncoder::Packet(uint32_t payload_field, std::string* out, F&& body) {
  ProtoWriter w(out);
  const size_t packet = w.BeginNested(wire::Trace::kPacket);
  const size_t payload = w.BeginNested(payload_field);
  body(&w);
  w.EndNested(payload);
  w.EndNested(packet);
  ++packets_;
}

void TraceEncoder::EncodeHeader(const HeaderInfo& info, std::string* out) {
  Packet(wire::TracePacket::kHeader, out, [&](ProtoWriter* w) { cutrace::EncodeHeader(info, w); });
}

void TraceEncoder::EncodeDevice(const DeviceInfo& info, std::string* out) {
  Packet(wire::TracePacket::kDevice, out, [&](ProtoWriter* w) { cutrace::EncodeDevice(info, w); });
}

void TraceEncoder::EncodeNewStrings(StringInterner& interner, std::string* out) {
  std::vector<InternedEntry> strings = interner.TakeNew();
  std::vector<KernelShapeEntry> shapes = batches_.TakeNewShapes();
  if (strings.empty() && shapes.empty()) return;
  Packet(wire::TracePacket::kInterned, out, [&](ProtoWriter* w) {
    for (const InternedEntry& s : strings) {
      namespace f = wire::InternedString;
      const size_t token = w->BeginNested(wire::InternedData::kStrings);
      w->Uint(f::kId, s.id);
      w->String(f::kValue, s.value);
      w->String(f::kDemangled, Demangle(s.value));
      w->EndNested(token);
    }
    for (const KernelShapeEntry& s : shapes) {
      namespace f = wire::KernelShape;
      const KernelShape& k = s.key;
      const size_t token = w->BeginNested(wire::InternedData::kKernelShapes);
      w->Uint(f::kId, s.id);
      w->Uint(f::kNameId, k.name_id);
      w->Uint(f::kGridX, k.grid[0]);
      w->Uint(f::kGridY, k.grid[1]);
      w->Uint(f::kGridZ, k.grid[2]);
      w->Uint(f::kBlockX, k.block[0]);
      w->Uint(f::kBlockY, k.block[1]);
      w->Uint(f::kBlockZ, k.block[2]);
      w->Uint(f::kRegistersPerThread, k.registers_per_thread);
      w->Uint(f::kStaticSharedBytes, k.static_shared_bytes);
      w->Uint(f::kDynamicSharedBytes, k.dynamic_shared_bytes);
      w->Uint(f::kLocalBytesPerThread, k.local_bytes_per_thread);
      w->Uint(f::kLaunchType, k.launch_type);
      w->Uint(f::kSharedMemoryConfigBytes, k.shared_memory_config_bytes);
      w->EndNested(token);
    }
  });
}

void TraceEncoder::EncodeBatchPart(const RecordBatch& batch, StringInterner& interner,
                                   std::string* out) {
  scratch_.clear();
  if (!batch.empty()) {
    ProtoWriter w(&scratch_);
    batches_.Encode(batch, &w);
  }
  // After Encode, so the shapes this batch introduced go out before it.
  EncodeNewStrings(interner, out);
  if (batch.empty()) return;
  AppendFraming(wire::TracePacket::kEvents, scratch_.size(), out);
  out->append(scratch_);
  ++packets_;
}

void TraceEncoder::EncodeBatch(const RecordBatch& batch, StringInterner& interner,
                               std::string* out) {
  const size_t total = batch.size();
  if (total <= kMaxRecordsPerPacket) {
    EncodeBatchPart(batch, interner, out);
    return;
  }
  // Rare: a batch too large for one packet goes out in slices.
  RecordBatch part;
  for (size_t done = 0; done < total; done += kMaxRecordsPerPacket) {
    size_t skip = done;
    size_t room = kMaxRecordsPerPacket;
    ForEachKind([&](auto, const auto& from, auto& to) { Slice(from, &skip, &room, &to); }, batch,
                part);
    EncodeBatchPart(part, interner, out);
  }
}

void TraceEncoder::EncodeCounters(const CounterBatchInfo& info, StringInterner& interner,
                                  std::string* out) {
  EncodeNewStrings(interner, out);
  Packet(wire::TracePacket::kCounters, out,
         [&](ProtoWriter* w) { cutrace::EncodeCounterBatch(info, w); });
}

void TraceEncoder::EncodeStatistics(const StatsInfo& info, std::string* out) {
  Packet(wire::TracePacket::kStatistics, out,
         [&](ProtoWriter* w) { cutrace::EncodeStatistics(info, w); });
}

void TraceEncoder::EncodeWarning(std::string_view message, int64_t trace_ns, std::string* out) {
  Packet(wire::TracePacket::kWarning, out,
         [&](ProtoWriter* w) { cutrace::EncodeWarning(message, trace_ns, w); });
}

void TraceEncoder::EncodeEnd(const EndInfo& info, std::string* out) {
  const uint64_t before = packets_;
  Packet(wire::TracePacket::kEnd, out, [&](ProtoWriter* w) { cutrace::EncodeEnd(info, before, w); });
}

void TraceEncoder::EncodeSummary(const SummaryInfo& info, StringInterner& interner,
                                 std::string* out) {
  EncodeNewStrings(interner, out);
  Packet(wire::TracePacket::kSummary, out, [&](ProtoWriter* w) { cutrace::EncodeSummary(info, w); });
}

void TraceEncoder::Reset() {
  batches_.Reset();
  packets_ = 0;
}

// ---------------------------------------------------------------------------

StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path,
                                                           const TraceWriterOptions& options) {
  if (path.empty()) return Status::Error("cannot create trace: empty path");
  const int fd = CreatePrivateFile(path, options.mode);
  if (fd < 0) {
    const int err = errno;
    struct stat st;
    // With O_EXCL a symlink at `path` fails with EEXIST (ELOOP on some
    // systems); either way, say that it is a symlink.
    if ((err == EEXIST || err == ELOOP) && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Status::Error("refusing to write through symlink " + path);
    }
    if (err == EEXIST) return Status::Error(path + " exists");
    return Status::Error("cannot create " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<TraceWriter>(new TraceWriter(path, fd, options));
}

std::unique_ptr<TraceWriter> TraceWriter::Adopt(int fd, std::string name,
                                               const TraceWriterOptions& options) {
  return std::unique_ptr<TraceWriter>(new TraceWriter(std::move(name), fd, options));
}

TraceWriter::TraceWriter(std::string path, int fd, const TraceWriterOptions& options)
    : path_(std::move(path)), fd_(fd), options_(options) {
  buffer_.reserve(std::min<size_t>(options_.buffer_bytes, size_t{64} << 20) + 4096);
}

TraceWriter::~TraceWriter() { (void)Close(); }

Status TraceWriter::WriteAll(const char* data, size_t n) {
  while (n > 0) {
    const ssize_t done = ::write(fd_, data, n);
    if (done < 0) {
      if (errno == EINTR) continue;
      return Status::Error("cannot write " + path_ + ": " + std::strerror(errno));
    }
    if (done == 0) return Status::Error("cannot write " + path_ + ": no progress");
    data += done;
    n -= static_cast<size_t>(done);
    bytes_written_ += static_cast<uint64_t>(done);
  }
  return Status::Ok();
}

Status TraceWriter::Ready() const {
  if (!status_.ok()) return status_;
  if (fd_ < 0) return Status::Error("cannot write " + path_ + ": already closed");
  return Status::Ok();
}

Status TraceWriter::Flush() {
  if (!status_.ok() || fd_ < 0) return status_;
  if (!buffer_.empty()) {
    // On error the file keeps whole packets plus at most one partial one,
    // which a reader reports as truncation; nothing is written after it.
    status_ = WriteAll(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  return status_;
}

Status TraceWriter::AfterEncode() {
  if (buffer_.size() >= options_.buffer_bytes) return Flush();
  return status_;
}

Status TraceWriter::WriteHeader(const HeaderInfo& info) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeHeader(info, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteDevice(const DeviceInfo& info) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeDevice(info, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteBatch(const RecordBatch& batch, StringInterner& interner) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeBatch(batch, interner, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteCounters(const CounterBatchInfo& info, StringInterner& interner) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeCounters(info, interner, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteStatistics(const StatsInfo& info) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeStatistics(info, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteWarning(std::string_view message, int64_t trace_ns) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeWarning(message, trace_ns, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteEnd(const EndInfo& info) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeEnd(info, &buffer_);
  return AfterEncode();
}

Status TraceWriter::WriteSummary(const SummaryInfo& info, StringInterner& interner) {
  if (Status ready = Ready(); !ready.ok()) return ready;
  encoder_.EncodeSummary(info, interner, &buffer_);
  return AfterEncode();
}

Status TraceWriter::Close() {
  if (fd_ < 0) return status_;
  Status flushed = Flush();
  if (::close(fd_) != 0 && flushed.ok() && errno != EINTR) {
    status_ = Status::Error("cannot close " + path_ + ": " + std::strerror(errno));
  }
  fd_ = -1;
  return status_;
}

}  // namespace cutrace
