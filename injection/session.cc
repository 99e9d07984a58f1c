#include "injection/session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "collector/output_path.h"
#include "injection/api_filter.h"
#include "injection/clock.h"
#include "injection/log.h"
#include "injection/process_info.h"
#include "injection/range_profiler.h"

namespace cutrace::injection {

uint64_t CUPTIAPI MonotonicTimestampCallback() { return MonotonicTimestamp(); }

namespace {

std::atomic<Session*> g_active{nullptr};

// Threads created while this is alive (the writer thread, and CUPTI's own
// threads created during subscription) inherit a mask without SIGINT and
// SIGTERM, so those signals are always handled on an application thread,
// never on a thread the shutdown path has to wait for.
class ScopedSignalBlock {
 public:
  ScopedSignalBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~ScopedSignalBlock() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

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

Session::Session(Config config, EnvGetter env) : config_(std::move(config)), env_(std::move(env)) {}

Session::~Session() {
  Session* self = this;
  g_active.compare_exchange_strong(self, nullptr);
  if (writer_) writer_->Stop();
}

Session* Session::Active() { return g_active.load(std::memory_order_acquire); }

Status Session::Start(std::unique_ptr<CuptiApi> api) {
  if (api_ != nullptr || api == nullptr) return Status::Error("session started twice");
  api_ = std::move(api);
  pid_ = ::getpid();
  ScopedSignalBlock block;
  StartProduction();  // production modes: before the pool is sized (CUTRACE_MAX_MEMORY)

  if (api_->GetVersion(&cupti_version_) != CUPTI_SUCCESS) {
    return Status::Error("cuptiGetVersion failed; CUPTI is unusable here");
  }
  // CUPTI 13 reports 130001 for 13.0.1; the activity record layouts compiled
  // in must match the library's major version.
  if (cupti_version_ / 10000 != CUPTI_API_VERSION / 10000) {
    return Status::Error("libcupti reports API version " + std::to_string(cupti_version_) +
                         ", cutrace was built for " + std::to_string(CUPTI_API_VERSION) +
                         " (CUDA 13); set CUTRACE_CUPTI_PATH to CUDA 13's libcupti.so.13");
  }
  if (Status s = Subscribe(); !s.ok()) return s;
  pool_ = std::make_unique<BufferPool>(config_.buffer_count, config_.buffer_bytes);
  if (pool_->capacity() == 0) {
    api_->Unsubscribe(subscriber_);
    return Status::Error("cannot allocate activity buffers; lower CUTRACE_BUFFER_SIZE");
  }
  ConfigureActivity();
  if (Status s = OpenTrace(); !s.ok()) {
    api_->Unsubscribe(subscriber_);
    return s;
  }
  processor_ = std::make_unique<ActivityProcessor>(api_.get(), &interner_, &stats_);
  processor_->set_launch_names(&launch_names_);
  if (clock_ == ClockDomain::kMonotonic) {
    processor_->set_now([](CuptiApi*) { return MonotonicNs(); });
  } else {
    processor_->set_now([](CuptiApi* api) {
      uint64_t t = 0;
      return api->GetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
    });
  }
  if (production_) production_->Attach(writer_.get(), &interner_);  // production modes
  if (Status s = writer_->Start(); !s.ok()) {
    api_->Unsubscribe(subscriber_);
    ::unlink(path_.c_str());
    return Status::Error("cannot start the writer thread: " + s.message());
  }
  state_.store(kRunning, std::memory_order_release);
  g_active.store(this, std::memory_order_release);

  CUptiResult r = api_->ActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    g_active.store(nullptr, std::memory_order_release);
    state_.store(kDone, std::memory_order_release);
    writer_->Stop();
    api_->Unsubscribe(subscriber_);
    ::unlink(path_.c_str());
    return Status::Error("cuptiActivityRegisterCallbacks failed: " + api_->ResultString(r));
  }
  EnableKinds();
  // --- hardware counters (injection/range_profiler.h): only when
  // CUTRACE_METRICS asks; failures are one line and leave tracing as is.
  CounterSinks sinks;
  sinks.counters = [this](CounterBatchInfo batch) {
    writer_->Post([batch = std::move(batch)](TraceWriter& w, StringInterner& i) {
      static_cast<void>(w.WriteCounters(batch, i));  // errors surface at Finalize
    });
  };
  sinks.warning = [this](std::string line) {
    writer_->Post([line = std::move(line)](TraceWriter& w, StringInterner&) {
      static_cast<void>(w.WriteWarning(line));
    });
  };
  const bool counting = StartCounters(env_, config_.cupti_path, subscriber_, &interner_, std::move(sinks));
  // --- end hardware counters
  KeepOrReleaseSubscription(counting);
  DecideDetach(counting);
  WatchForOtherClient();
  if (production_) production_->Start();  // production modes
  WriteManifest();
  Log(LogLevel::kInfo, "tracing to %s", path_.c_str());
  return Status::Ok();
}

Status Session::Subscribe() {
  std::string other;
  // The subscriber callback serves only hardware counters (range_profiler.h):
  // without CUTRACE_METRICS no callback is enabled and CUPTI never calls it.
  CUptiResult r = api_->Subscribe(&subscriber_, &Session::SubscriberCallback, nullptr, "cutrace", &other);
  if (r == CUPTI_SUCCESS) return Status::Ok();
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return Status::Error("another CUPTI client is active (" +
                         (other.empty() ? std::string("unknown; e.g. nsys, ncu, a profiler in the program")
                                        : other) +
                         "); cutrace stays out of its way, no trace is written");
  }
  return Status::Error("cuptiSubscribe failed: " + api_->ResultString(r) +
                       "; the program runs untraced");
}

void Session::KeepOrReleaseSubscription(bool counting) {
  // The subscription is what tells cutrace that another tool came first. Once
  // that is known, holding it would lock out a CUPTI client the program starts
  // later (torch.profiler's Kineto turns GPU tracing off for good when its
  // cuptiSubscribe fails), so cutrace keeps it only where it serves: for
  // counters, and, in a program without a CUPTI client of its own, for the
  // flush at module unload that reads kernel names while they are valid.
  if (!counting && api_->ProgramHasOwnClient()) {
    api_->Unsubscribe(subscriber_);
    Log(LogLevel::kDebug, "the program has a CUPTI client of its own: cutrace holds no CUPTI "
        "subscription, so the program's profiler can start");
    return;
  }
  EnableOwnCallbacks();
}

void Session::EnableOwnCallbacks() {
  // The API entry, not CUPTI's MODULE_UNLOAD_STARTING resource callback: a
  // flush from inside that one never returned on the H200 (CUDA 13.0).
  CUptiResult r = CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : {CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload}) {
    if (r == CUPTI_SUCCESS) r = api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "no module-unload callback (%s): names of kernels from unloaded modules "
        "may be stale", api_->ResultString(r).c_str());
  }
  if (launch_names_.active()) EnableLaunchCallbacks();
  WatchForGraphs();  // continuous mode detaching (session_modes.cc)
}

void Session::ConfigureActivity() {
  // Before any kind is enabled, so every record uses one clock.
  if (!config_.timestamp_callback) {
    clock_ = ClockDomain::kCupti;
    Log(LogLevel::kDebug, "CUTRACE_TIMESTAMP_CALLBACK=0: timestamps stay on CUPTI's clock");
  } else if (api_->ProgramHasOwnClient()) {
    // The callback is process-wide: it would put the program's own profiler
    // (torch.profiler saw none of its kernels) on a clock it does not expect.
    clock_ = ClockDomain::kCupti;
    Log(LogLevel::kDebug, "the program has a CUPTI client of its own: timestamps stay on CUPTI's clock");
  } else if (api_->ActivityRegisterTimestampCallback(&MonotonicTimestampCallback) == CUPTI_SUCCESS) {
    clock_ = ClockDomain::kMonotonic;
  } else {
    clock_ = ClockDomain::kCupti;
    Log(LogLevel::kDebug, "timestamp callback unavailable: timestamps stay on CUPTI's clock");
  }
  ApplyActivitySettings();
}

void Session::ApplyActivitySettings() {
  if (config_.latency_timestamps) {
    CUptiResult r = api_->ActivityEnableLatencyTimestamps(1);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot set CUTRACE_LATENCY_TIMESTAMPS: %s", api_->ResultString(r).c_str());
    }
  }
  // Thread ids in API and NVTX records become the kernel's tids (gettid).
  if (api_->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "cuptiSetThreadIdType(SYSTEM) failed: thread ids are CUPTI's");
  }
  if (config_.per_thread_buffers) {
    uint8_t value = *config_.per_thread_buffers ? 1 : 0;
    size_t size = sizeof(value);
    CUptiResult r =
        api_->ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &value);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot set CUTRACE_PER_THREAD_BUFFERS: %s", api_->ResultString(r).c_str());
    }
  }
  if (config_.flush_period_ms > 0) {
    CUptiResult r = api_->ActivityFlushPeriod(config_.flush_period_ms);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot set CUTRACE_FLUSH_PERIOD_MS: %s", api_->ResultString(r).c_str());
    }
  }
}

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

void Session::EnableKinds() {
  auto enable = [this](CUpti_ActivityKind kind, const char* what) {
    CUptiResult r = api_->ActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot record %s (cuptiActivityEnable: %s)", what,
          api_->ResultString(r).c_str());
    }
  };
  const Kinds& k = config_.kinds;
  // CONCURRENT_KERNEL, never KERNEL: KERNEL serializes every kernel.
  if (k.kernel) enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
  if (k.memcpy) {
    enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memory copies");
    enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer copies");
  }
  if (k.memset) enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets");
  if (k.nvtx) {
    enable(CUPTI_ACTIVITY_KIND_MARKER, "NVTX ranges");
    enable(CUPTI_ACTIVITY_KIND_MARKER_DATA, "NVTX colors");
  }
  if (k.sync) enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization");
  if (k.runtime_api) EnableApiRecords(/*runtime=*/true);
  if (k.driver_api) EnableApiRecords(/*runtime=*/false);
  // Cheap, and they give the header devices and sync records their device.
  enable(CUPTI_ACTIVITY_KIND_DEVICE, "devices");
  enable(CUPTI_ACTIVITY_KIND_CONTEXT, "contexts");
  // CUPTI's overhead records (the statistics' "CUPTI" time): a kind of
  // their own (CUTRACE_KINDS word "overhead"), so a narrowed list (say,
  // kernel) means only those records compete for buffers, and CUPTI's
  // dropped-record count, which does not say of which kind, is exactly theirs.
  if (k.overhead) enable(CUPTI_ACTIVITY_KIND_OVERHEAD, "CUPTI overhead");
}

void Session::EnableApiRecords(bool runtime) {
  const CUpti_CallbackDomain domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const uint32_t count = runtime ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                 : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
  const ApiDomain api_domain = runtime ? ApiDomain::kRuntime : ApiDomain::kDriver;
  int enabled = 0;
  bool per_call = true;
  for (uint32_t cbid = 1; cbid < count && per_call; ++cbid) {
    const char* name = nullptr;
    if (api_->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!IsTracedApi(api_domain, name)) continue;
    CUptiResult r = runtime ? api_->ActivityEnableRuntimeApi(cbid, 1)
                            : api_->ActivityEnableDriverApi(cbid, 1);
    if (r == CUPTI_SUCCESS) {
      ++enabled;
    } else if (enabled == 0) {
      per_call = false;  // not supported: fall back to the whole domain
    }
  }
  if (per_call && enabled > 0) {
    Log(LogLevel::kDebug, "recording %d %s API calls", enabled, runtime ? "runtime" : "driver");
    return;
  }
  // Every call of the domain, filtered at conversion.
  processor_->set_filter_api(true);
  CUptiResult r = api_->ActivityEnable(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER);
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kWarn, "cannot record %s API calls (cuptiActivityEnable: %s)",
        runtime ? "runtime" : "driver", api_->ResultString(r).c_str());
  }
}

void Session::WriteManifest() {
  if (config_.run_manifest.empty()) return;
  // `cutrace run` created the file; never create or follow a link here.
  int fd = ::open(config_.run_manifest.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    Log(LogLevel::kDebug, "cannot append to CUTRACE_RUN_MANIFEST %s: %s",
        config_.run_manifest.c_str(), std::strerror(errno));
    return;
  }
  std::string line = path_ + "\n";
  // One write with O_APPEND: lines from concurrent processes never interleave.
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
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
