// See trace_reader.h.
#include "collector/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "collector/format.h"

namespace cutrace {

namespace {

// Reads a varint at bytes[*pos]. Returns 1 on success, 0 if the input ends
// inside it, -1 if it is longer than ten bytes.
int ReadVarint(std::string_view bytes, uint64_t* pos, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= bytes.size()) return 0;
    const uint8_t b = static_cast<uint8_t>(bytes[(*pos)++]);
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *value = result;
      return 1;
    }
  }
  return -1;
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

StatusOr<std::unique_ptr<FileBytes>> FileBytes::Open(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  std::unique_ptr<FileBytes> file(new FileBytes());
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::Error("cannot open " + path + ": " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::Error("cannot open " + path + ": is a directory");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      ::close(fd);
      file->map_ = map;
      file->data_ = static_cast<const char*>(map);
      file->size_ = static_cast<size_t>(st.st_size);
      return file;
    }
  }
  // Pipes, /dev/stdin, empty files, or mmap refused: read it all.
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::Error("cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    file->owned_.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  file->data_ = file->owned_.data();
  file->size_ = file->owned_.size();
  return file;
}

FileBytes::~FileBytes() {
  if (map_ != nullptr) ::munmap(map_, size_);
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
  int r = ReadVarint(bytes_, &pos, &tag);
  if (r == 0) {
    Stop(left, true, "truncated: the file ends inside a packet header" + At(start) + " (" +
                         Bytes(left) + " lost)");
    return false;
  }
  if (r < 0 || tag != 0x0A) {
    Stop(left, false,
         "corrupt: not a trace packet" + At(start) + "; ignoring the last " + Bytes(left));
    return false;
  }
  uint64_t length = 0;
  r = ReadVarint(bytes_, &pos, &length);
  if (r == 0) {
    Stop(left, true, "truncated: the file ends inside a packet header" + At(start) + " (" +
                         Bytes(left) + " lost)");
    return false;
  }
  if (r < 0 || length > kMaxPacketBytes) {
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
