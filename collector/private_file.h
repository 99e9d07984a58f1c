// The one way cutrace creates an output file: traces (TraceWriter: `run`,
// `import`), exports and merges (interop/export/export_sink.h). Traces hold
// command lines, environment-derived ranks, host names and kernel names, so
// every file cutrace writes is private to its owner, 0600, whatever the
// umask; a writer that wants another mode (CUTRACE_FILE_MODE) says so.
// O_EXCL|O_NOFOLLOW: an existing file or a symlink at the path is never
// replaced or written through.
//
// Header-only, no state; async-signal-unsafe only in what open() is.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <string>

namespace cutrace {

inline constexpr mode_t kPrivateFileMode = 0600;

// Returns the new file's descriptor, or -1 with errno set (EEXIST also for a
// symlink at the path; callers lstat() to say which).
inline int CreatePrivateFile(const std::string& path, mode_t mode = kPrivateFileMode) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  // The mode asked for, exactly: open() applied the umask, which may have
  // taken away bits the caller asked for (CUTRACE_FILE_MODE=0644 under umask
  // 077). The file is new and empty, so there is nothing to expose yet.
  if (fd >= 0) static_cast<void>(::fchmod(fd, mode));
  return fd;
}

}  // namespace cutrace
