// File and buffered sinks: see export_sink.h.
#include "interop/export/export_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collector/private_file.h"

namespace cutrace::interop {

StatusOr<std::unique_ptr<FileSink>> FileSink::Create(const std::string& path) {
  int fd = CreatePrivateFile(path);
  if (fd < 0) {
    int err = errno;
    struct stat st;
    // With O_EXCL a symlink at the path fails with EEXIST: say which it is.
    if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return Status::Error(path + " is a symlink: cutrace never writes through one");
    if (err == EEXIST)
      return Status::Error(path + " exists: cutrace never overwrites; remove it or choose "
                                  "another -o");
    return Status::Error("cannot create " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<FileSink>(new FileSink(path, fd));
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
  // The file is ours (created with O_EXCL above), so removing it is safe.
  if (!committed_) ::unlink(path_.c_str());
}

Status FileSink::Write(std::string_view bytes) {
  if (!status_.ok()) return status_;
  if (fd_ < 0) return status_ = Status::Error("cannot write " + path_ + ": already closed");
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status_ = Status::Error("cannot write " + path_ + ": " +
                              std::strerror(n < 0 ? errno : EIO));
      return status_;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status FileSink::Commit() {
  if (!status_.ok()) return status_;
  if (fd_ >= 0) {
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return status_ = Status::Error("cannot write " + path_ + ": " +
                                                std::strerror(errno));
  }
  committed_ = true;
  return Status::Ok();
}

Status BufferedSink::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status s = sink_->Write(buffer_);
  bytes_ += buffer_.size();
  buffer_.clear();
  return s;
}

}  // namespace cutrace::interop
