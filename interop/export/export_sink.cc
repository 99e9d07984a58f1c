// File and buffered sinks: see export_sink.h.
#include "interop/export/export_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cutrace::interop {

namespace {

// The temporary files of sinks not yet committed, for a signal that ends
// the command: paths copied into fixed slots, so that the handler only
// reads memory and calls unlink() (both async-signal-safe).
constexpr int kSlots = 16;
constexpr size_t kPathBytes = 4096;
char g_temporary[kSlots][kPathBytes];
std::atomic<bool> g_slot_used[kSlots];

void RemoveTemporaries(int sig) {
  RemoveTemporaryFiles();
  // SA_RESETHAND restored the default: the signal ends the process as it
  // would have.
  ::raise(sig);
}

// Once, for the signals still at their default (one ignored, or handled
// by a host such as Python, is left alone).
void InstallRemoval() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old = {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa = {};
    sa.sa_handler = RemoveTemporaries;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

// The slot holding `path`; -1 when none is free (the file is then left
// behind by a signal, as it was by any crash).
int Remember(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (g_slot_used[i].load(std::memory_order_acquire)) continue;
    std::memcpy(g_temporary[i], path.c_str(), path.size() + 1);
    g_slot_used[i].store(true, std::memory_order_release);
    return i;
  }
  return -1;
}

void Forget(int slot) {
  if (slot >= 0) g_slot_used[slot].store(false, std::memory_order_release);
}

Status Exists(const std::string& path, bool link) {
  return Status::Error(link ? path + " is a symlink: cutrace never writes through one"
                            : path + " exists: cutrace never overwrites; remove it or choose "
                                     "another -o");
}

}  // namespace

void RemoveTemporaryFiles() {
  for (int i = 0; i < kSlots; ++i)
    if (g_slot_used[i].load(std::memory_order_acquire)) ::unlink(g_temporary[i]);
}

StatusOr<std::unique_ptr<FileSink>> FileSink::Create(const std::string& path, bool replace) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Error(path + " is a directory: choose a file for -o");
    if (!replace) return Exists(path, S_ISLNK(st.st_mode));
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return Status::Error("cannot create " + path + ": not a file name");
  // Beside the file (rename() stays on its file system), hidden, and short
  // enough for NAME_MAX whatever the name.
  std::string temp = dir + "." + base.substr(0, 200) + ".cutrace-XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);  // 0600, O_EXCL
  if (fd < 0) return Status::Error("cannot create " + path + ": " + std::strerror(errno));
  InstallRemoval();
  const int slot = Remember(temp);
  return std::unique_ptr<FileSink>(new FileSink(path, std::move(temp), fd, replace, slot));
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
  // The temporary file is ours (mkostemp), so removing it is safe.
  if (!committed_) ::unlink(temp_.c_str());
  Forget(slot_);
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
  if (committed_) return Status::Ok();
  if (fd_ >= 0) {
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return status_ = Status::Error("cannot write " + path_ + ": " +
                                                std::strerror(errno));
  }
  int rc;
  if (replace_) {
    rc = ::rename(temp_.c_str(), path_.c_str());
  } else {
    // Never over a file that appeared since Create(); a file system without
    // RENAME_NOREPLACE gets the same from link(), which fails on any name.
    rc = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      rc = ::link(temp_.c_str(), path_.c_str());
      if (rc == 0) ::unlink(temp_.c_str());
    }
  }
  if (rc != 0) {
    const int err = errno;
    struct stat st;
    if (err == EEXIST)
      return status_ = Exists(path_, ::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
    return status_ = Status::Error("cannot create " + path_ + ": " + std::strerror(err));
  }
  committed_ = true;
  Forget(slot_);
  slot_ = -1;
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
