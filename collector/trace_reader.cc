// See trace_reader.h.
#include "collector/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "collector/format.h"
#include "collector/proto_reader.h"

namespace cutrace {

namespace {

// Reads a varint at bytes[*pos] (proto_reader.h's rules).
wire::VarintRead ReadVarintAt(std::string_view bytes, uint64_t* pos, uint64_t* value) {
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* p = begin + *pos;
  const wire::VarintRead r = wire::ReadVarintOr(p, begin + bytes.size(), value);
  *pos = static_cast<uint64_t>(p - begin);
  return r;
}

// libprotobuf logs a line to stderr for every string field with invalid
// UTF-8 it meets; on damaged input that is noise, since the reader reports
// the packet itself in one line. Other messages still reach stderr.
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  if (level < google::protobuf::LOGLEVEL_FATAL && message.find("UTF-8") != std::string::npos) {
    return;
  }
  std::fprintf(stderr, "[libprotobuf %s:%d] %s\n", file, line, message.c_str());
}

void QuietUtf8Complaints() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&ProtobufLog); });
}

std::string Bytes(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

std::string At(uint64_t offset) { return " at offset " + std::to_string(offset); }

}  // namespace

namespace {

std::atomic<uint64_t> g_max_input_bytes{FileBytes::kDefaultMaxInputBytes};

// The live mappings, for MappedPathAt() in a SIGBUS handler: plain atomics
// in a fixed array, so the handler reads them without locks or allocation.
struct MapSlot {
  std::atomic<const char*> begin{nullptr};
  std::atomic<size_t> size{0};
  std::atomic<const char*> path{nullptr};
};
constexpr size_t kMapSlots = 64;
MapSlot g_maps[kMapSlots];

// Claims a slot for a mapping; false when all are taken (the file is then
// read instead).
bool Register(const char* begin, size_t size, const char* path) {
  for (MapSlot& slot : g_maps) {
    const char* expected = nullptr;
    if (slot.begin.compare_exchange_strong(expected, begin)) {
      slot.size.store(size);
      slot.path.store(path);
      return true;
    }
  }
  return false;
}

void Unregister(const char* begin) {
  for (MapSlot& slot : g_maps)
    if (slot.begin.load() == begin) {
      slot.path.store(nullptr);
      slot.size.store(0);
      slot.begin.store(nullptr);
      return;
    }
}

// Closes the descriptor on every path out of FileBytes::Open.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

Status ReadError(const std::string& path, int err) {
  return Status::Error("cannot read " + path + ": " + std::strerror(err));
}

// A FIFO's first byte (or its end) within kFifoWaitSeconds: with no writer,
// a blocking open or read would wait forever. Linux reports no hang-up on a
// FIFO that never had a writer, so poll() times out exactly in that case.
Status WaitForFifo(int fd, const std::string& path) {
  struct pollfd p = {fd, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, FileBytes::kFifoWaitSeconds * 1000);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ReadError(path, errno);
  if (n == 0)
    return Status::Error(path + ": no data from the FIFO within " +
                         std::to_string(FileBytes::kFifoWaitSeconds) + " s (no writer?)");
  return Status::Ok();
}

}  // namespace

void FileBytes::SetMaxInputBytes(uint64_t bytes) { g_max_input_bytes.store(bytes); }
uint64_t FileBytes::max_input_bytes() { return g_max_input_bytes.load(); }

size_t FileBytes::readable() const {
  if (map_ == nullptr) return size_;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (size_ + page - 1) / page * page;
}

FileBytes::~FileBytes() {
  if (map_ != nullptr) {
    Unregister(data_);
    ::munmap(map_, size_);
  }
}

const char* FileBytes::MappedPathAt(const void* address) {
  const char* a = static_cast<const char*>(address);
  for (const MapSlot& slot : g_maps) {
    const char* begin = slot.begin.load();
    if (begin != nullptr && a >= begin && a < begin + slot.size.load()) return slot.path.load();
  }
  return nullptr;
}

StatusOr<std::unique_ptr<FileBytes>> FileBytes::Open(const std::string& path) {
  int fd;
  // O_NONBLOCK: opening a FIFO with no writer would block; it is cleared
  // again below before any read.
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  FdCloser closer{fd};
  std::unique_ptr<FileBytes> file(new FileBytes());
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::Error("cannot open " + path + ": is a directory");
  if (S_ISFIFO(st.st_mode)) {
    if (Status s = WaitForFifo(fd, path); !s.ok()) return s;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) static_cast<void>(::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK));

  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // Mapped, not copied: a copy costs 15% of `cutrace summary`. A file
    // truncated while mapped raises SIGBUS on the lost pages; the CLI's
    // handler finds the file with MappedPathAt() and exits with one line.
    const size_t size = static_cast<size_t>(st.st_size);
    file->path_ = path;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      if (Register(static_cast<const char*>(map), size, file->path_.c_str())) {
        file->map_ = map;
        file->data_ = static_cast<const char*>(map);
        file->size_ = size;
        return file;
      }
      ::munmap(map, size);
    }
    // Mapping refused, or too many files mapped at once: read it, to the
    // size fstat gave. A file that shrinks meanwhile is an error.
    file->owned_.resize(size);
    size_t got = 0;
    while (got < size) {
      const ssize_t n = ::read(fd, file->owned_.data() + got, std::min<size_t>(size - got, 1u << 30));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ReadError(path, errno);
      }
      if (n == 0)
        return Status::Error(path + ": file shrank while being read (" + std::to_string(got) +
                             " of " + std::to_string(size) + " bytes)");
      got += static_cast<size_t>(n);
    }
    file->data_ = file->owned_.data();
    file->size_ = size;
    return file;
  }
  // Pipes, /dev/stdin, character devices, files that say they are empty
  // (/proc): to the end, up to the cap.
  const uint64_t cap = max_input_bytes();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ReadError(path, errno);
    }
    if (n == 0) break;
    if (file->owned_.size() + static_cast<uint64_t>(n) > cap)
      return Status::Error(path + ": input larger than --max-input (" + std::to_string(cap) +
                           " bytes)");
    file->owned_.append(buf, static_cast<size_t>(n));
  }
  file->data_ = file->owned_.data();
  file->size_ = file->owned_.size();
  return file;
}

TraceReader::TraceReader(std::string_view bytes) : bytes_(bytes) {
  QuietUtf8Complaints();
  report_.file_bytes = bytes.size();
}

void TraceReader::Stop(uint64_t lost, bool truncated, std::string problem) {
  done_ = true;
  report_.truncated = truncated;
  report_.lost_bytes = lost;
  report_.problems.push_back(std::move(problem));
}

bool TraceReader::NextRaw(std::string_view* body) {
  if (done_) return false;
  const uint64_t start = pos_;
  const uint64_t left = bytes_.size() - start;
  if (left == 0) {
    done_ = true;
    return false;
  }
  uint64_t pos = start;
  uint64_t tag = 0;
  wire::VarintRead r = ReadVarintAt(bytes_, &pos, &tag);
  if (r == wire::VarintRead::kTruncated) {
    Stop(left, true, "truncated: the file ends inside a packet header" + At(start) + " (" +
                         Bytes(left) + " lost)");
    return false;
  }
  if (r != wire::VarintRead::kOk || tag != 0x0A) {
    Stop(left, false,
         "corrupt: not a trace packet" + At(start) + "; ignoring the last " + Bytes(left));
    return false;
  }
  uint64_t length = 0;
  r = ReadVarintAt(bytes_, &pos, &length);
  if (r == wire::VarintRead::kTruncated) {
    Stop(left, true, "truncated: the file ends inside a packet header" + At(start) + " (" +
                         Bytes(left) + " lost)");
    return false;
  }
  if (r != wire::VarintRead::kOk || length > kMaxPacketBytes) {
    Stop(left, false, "corrupt: packet" + At(start) +
                          " claims an impossible length; ignoring the last " + Bytes(left));
    return false;
  }
  const uint64_t body_left = bytes_.size() - pos;
  if (length > body_left) {
    Stop(left, true, "truncated: the last packet" + At(start) + " needs " + Bytes(length) + ", " +
                         std::to_string(body_left) + " present (" + Bytes(left) + " lost)");
    return false;
  }
  *body = bytes_.substr(pos, length);
  last_ = start;
  pos_ = pos + length;
  report_.packets += 1;
  report_.bytes_used = pos_;
  return true;
}

void TraceReader::Reject() {
  // Undo the packet's accounting: it is not a complete, valid packet.
  const uint64_t left = bytes_.size() - last_;
  report_.packets -= 1;
  report_.bytes_used = last_;
  pos_ = last_;
  Stop(left, false,
       "corrupt: packet" + At(last_) + " does not parse; ignoring the last " + Bytes(left));
}

bool TraceReader::Next(proto::TracePacket* packet) {
  std::string_view body;
  if (!NextRaw(&body)) return false;
  if (!packet->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    Reject();
    return false;
  }
  return true;
}

}  // namespace cutrace
