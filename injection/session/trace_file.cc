// Session: the trace file — its path (CUTRACE_OUTPUT, a numbered sibling
// where one exists), its header, the writer that owns it, the run manifest
// line, and the clock anchors.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "collector/output_path.h"
#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_info.h"
#include "injection/session/session.h"

namespace cutrace::injection {
namespace {

// "dir/name.trace" -> "dir/name-N.trace" (the suffix goes before the extension).
std::string WithSuffix(const std::string& path, int n) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1) {
    return path + "-" + std::to_string(n);
  }
  return path.substr(0, dot) + "-" + std::to_string(n) + path.substr(dot);
}

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  std::string base(cwd);
  std::string rel = path;
  while (rel.rfind("./", 0) == 0) rel.erase(0, 2);
  return base + "/" + rel;
}

}  // namespace

Status Session::OpenTrace() {
  std::string host = HostName();
  EnvLookup lookup = [this](const std::string& name) { return env_(name.c_str()); };
  auto expanded = ExpandOutputPattern(config_.output, host, pid_, lookup);
  if (!expanded.ok()) return Status::Error("CUTRACE_OUTPUT: " + expanded.status().message());
  std::string base = Absolute(*expanded);

  TraceWriterOptions options;
  options.mode = static_cast<mode_t>(config_.file_mode);
  std::unique_ptr<TraceWriter> file;
  std::string last_error;
  // Never create a trace where another user could swap or read it first.
  if (Status safe = CheckOutputDirectory(base); !safe.ok()) {
    return Status::Error(safe.message() + "; set CUTRACE_OUTPUT to a directory of your own");
  }
  // A pattern without %p shared by several processes must not make the later
  // ones lose their trace: an existing file gets a numbered sibling instead.
  for (int attempt = 0; attempt < 100 && !file; ++attempt) {
    std::string candidate = attempt == 0 ? base : WithSuffix(base, attempt);
    auto created = TraceWriter::Create(candidate, options);
    if (created.ok()) {
      file = std::move(created).value();
      path_ = candidate;
      break;
    }
    last_error = created.status().message();
    struct stat st;
    if (::lstat(candidate.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) break;
  }
  if (!file) {
    return Status::Error(last_error + "; set CUTRACE_OUTPUT to a writable directory");
  }

  HeaderInfo h;
  h.producer = kProducer;
  h.host = host;
  h.pid = pid_;
  h.ppid = ::getppid();
  h.command_line = RedactCommandLine(ReadCommandLine());
  h.rank = RankFromEnv(env_);
  h.cuda_driver_version = api_->DriverVersion();
  h.cuda_runtime_version = api_->RuntimeVersion();
  h.cupti_api_version = cupti_version_;
  h.clock = clock_;
  h.start_anchor = Anchor();
  h.source_format = "cupti";
  h.enabled_kinds = config_.kinds.Names();
  h.mode = "trace";
  if (production_) production_->DecorateHeader(&h, path_);  // production modes
  // The header goes to the file at once (not after the first megabyte), so
  // even a process killed with SIGKILL leaves a file that says what it is.
  Status written = file->WriteHeader(h);
  if (written.ok()) written = file->Flush();
  if (Status s = written; !s.ok()) {
    static_cast<void>(file->Close());  // the write error is the one to report
    ::unlink(path_.c_str());
    return Status::Error("cannot write " + path_ + ": " + s.message());
  }
  AsyncWriterOptions wopts;
  wopts.max_batches = config_.queue_batches;
  if (production_) wopts.max_bytes = production_->budget().queue_bytes;  // CUTRACE_MAX_MEMORY
  writer_ = std::make_unique<AsyncWriter>(std::move(file), &interner_, wopts);
  return Status::Ok();
}

void Session::WriteManifest(const std::string& path) {
  if (config_.run_manifest.empty()) return;
  // `cutrace run` created the file; never create or follow a link here.
  int fd = ::open(config_.run_manifest.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    Log(LogLevel::kDebug, "cannot append to CUTRACE_RUN_MANIFEST %s: %s",
        config_.run_manifest.c_str(), std::strerror(errno));
    return;
  }
  std::string line = path + "\n";
  // One write with O_APPEND: lines from concurrent processes never interleave.
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

int64_t Session::TraceNow() {
  if (clock_ == ClockDomain::kMonotonic) return static_cast<int64_t>(MonotonicNs());
  uint64_t t = 0;
  return api_ && api_->GetTimestamp(&t) == CUPTI_SUCCESS ? static_cast<int64_t>(t)
                                                         : static_cast<int64_t>(MonotonicNs());
}

ClockAnchorInfo Session::Anchor() {
  ClockAnchorInfo a;
  uint64_t cupti = 0;
  a.monotonic_ns = static_cast<int64_t>(MonotonicNs());
  a.realtime_ns = static_cast<int64_t>(RealtimeNs());
  if (clock_ == ClockDomain::kMonotonic) {
    a.trace_ns = a.monotonic_ns;
  } else if (api_ && api_->GetTimestamp(&cupti) == CUPTI_SUCCESS) {
    a.trace_ns = static_cast<int64_t>(cupti);
  }
  return a;
}

}  // namespace cutrace::injection
