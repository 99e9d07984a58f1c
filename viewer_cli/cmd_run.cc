// `cutrace run [--output DIR|PATTERN] [--kinds LIST] [--buffer-size SIZE]
// [--mode trace|summary|continuous]
// [--metrics LIST|PRESET [--metrics-scope kernel|nvtx] [--kernel-filter REGEX]
// [--kernel-sample N] [--launch-skip N | --launch-skip-before-match N]
// [--launch-count N]] [--capture-range cudaProfilerApi|nvtx:NAME[@DOMAIN]
// [--capture-range-end stop|repeat[:N]]] [--delay D] [--duration D]
// [--no-summary] -- PROG ARGS...`: runs an unmodified
// program under the injection library and then says which traces it wrote,
// with a summary. The --metrics options become CUTRACE_METRICS,
// CUTRACE_METRICS_SCOPE, CUTRACE_KERNEL_FILTER, CUTRACE_KERNEL_SAMPLE and
// CUTRACE_LAUNCH_SKIP / _COUNT / _SKIP_BEFORE_MATCH
// (injection/counters/metrics_config.h); preset and metric names, the scope, the
// regex and N are checked here, before the program starts. So is whether the
// GPUs have each metric named outright (not those of presets, which are best
// effort): the metric checker (viewer_cli/metric_check.h) asks CUPTI, and a
// name no GPU here has stops the run with one line and exit 2 before the
// program starts. CUTRACE_METRICS_CHIP=GH100[,...] checks against those chips
// instead (no GPU needed). When the check cannot be made (no driver, GPU or
// CUPTI, no checker) one line says so and the run goes on: the library checks
// again at the program's first context and fails open.
//
// How: finds libcutrace_injection.so next to itself (<dir of
// /proc/self/exe>/../lib, which covers build/bin + build/lib and an install
// prefix; CUTRACE_LIBRARY overrides), sets CUDA_INJECTION64_PATH (so the
// library starts at cuInit and costs nothing in processes that never touch
// the GPU), NVTX_INJECTION64_PATH (the libcupti the library will load, so
// NVTX ranges are captured), CUTRACE_OUTPUT, CUTRACE_KINDS and CUTRACE_MODE
// (injection/modes.h; the other production variables pass through), and
// CUTRACE_RUN_MANIFEST: a private file to which every traced process —
// the program and any child it forks or execs — appends its trace path.
//
// Exit status: the program's own; a death by signal N is 128+N; 127 (or 126)
// with one line if the program cannot be run, as a shell does; 1 if the
// library is missing or the output pattern is bad; 2 for usage errors, an
// unknown metric among them. While the program runs,
// cutrace ignores SIGINT and SIGTERM from the terminal (the program gets its
// own copy from the terminal) and forwards ones sent to cutrace alone.
// Everything cutrace prints goes to stderr, so the program's stdout stays
// the program's.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "collector/cupti_search.h"
#include "collector/metric_presets.h"
#include "collector/output_path.h"
#include "collector/trace_kinds.h"
#include "collector/trace_loader.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/metric_check.h"
#include "viewer_cli/option_words.h"
#include "viewer_cli/output.h"
#include "viewer_cli/run_chunks.h"
#include "viewer_cli/run_selection.h"

namespace cutrace::cli::cmd_run {
namespace {

struct Options {
  std::string output;
  std::string kinds;
  std::string mode;
  std::string buffer_size;
  std::string metrics;
  std::string metrics_scope;
  std::string kernel_filter;
  uint64_t kernel_sample = 0;
  RunSelection selection;  // capture ranges, launch selection (run_selection.h)
  bool no_summary = false;
  std::vector<std::string> command;
};

std::string SelfExe() {
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  return exe;
}

std::string FindLibrary() {
  if (const char* o = std::getenv("CUTRACE_LIBRARY"); o && *o) return o;
  std::string dir = SelfExe();
  if (dir.empty()) return "";
  dir.erase(dir.rfind('/'));
  std::string lib = dir + "/../lib/libcutrace_injection.so";
  char resolved[PATH_MAX];
  return ::realpath(lib.c_str(), resolved) ? std::string(resolved) : lib;
}

std::string Cwd() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof(buf)) ? std::string(buf) : std::string(".");
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// mkdir -p for a directory the user named with a trailing '/'.
bool MakeDirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return IsDirectory(path);
}

// Forwards SIGINT/SIGTERM sent to cutrace by another process (kill, timeout)
// to the program; ones from the terminal reach the program directly.
volatile sig_atomic_t g_child = 0;

void Forward(int sig, siginfo_t* info, void*) {
  if (g_child > 0 && info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE) &&
      info->si_pid != g_child) {
    ::kill(g_child, sig);
  }
}

struct SavedSignals {
  struct sigaction old_int, old_term;
};

void StartForwarding(SavedSignals* saved) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = &Forward;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &saved->old_int);
  ::sigaction(SIGTERM, &action, &saved->old_term);
}

void StopForwarding(const SavedSignals& saved) {
  ::sigaction(SIGINT, &saved.old_int, nullptr);
  ::sigaction(SIGTERM, &saved.old_term, nullptr);
}

// Forks and execs the program. Returns its wait status, or -1 with *exec_errno
// set when it could not be started.
int RunChild(const std::vector<std::string>& command, const SavedSignals& saved, int* exec_errno) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *exec_errno = errno;
    return -1;
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    *exec_errno = errno;
    return -1;
  }
  if (pid == 0) {
    // The program gets the dispositions cutrace itself was started with.
    ::sigaction(SIGINT, &saved.old_int, nullptr);
    ::sigaction(SIGTERM, &saved.old_term, nullptr);
    ::close(pipe_fds[0]);
    ::execvp(argv[0], argv.data());
    int err = errno;
    ssize_t w = ::write(pipe_fds[1], &err, sizeof(err));
    (void)w;
    ::_exit(127);
  }
  g_child = pid;
  ::close(pipe_fds[1]);
  int err = 0;
  ssize_t got;
  do {
    got = ::read(pipe_fds[0], &err, sizeof(err));
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  if (got == static_cast<ssize_t>(sizeof(err))) {
    *exec_errno = err;
    return -1;
  }
  return status;
}

std::vector<std::string> ReadManifest(const std::string& path) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && seen.insert(line).second) paths.push_back(line);
  }
  return paths;
}

// `cutrace summary PATHS...` as registered by cmd_summary.cc, printed on
// stderr. Falls back to a kernel count per file if no summary is registered.
void PrintSummary(const std::vector<std::string>& paths) {
  const CommandInfo* summary = nullptr;
  for (const CommandInfo& c : Registry()) {
    if (c.name == "summary") summary = &c;
  }
  std::fflush(stdout);
  int saved_stdout = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  if (summary != nullptr) {
    CLI::App app;
    int exit_code = 0;
    summary->register_fn(app, &exit_code);
    std::vector<std::string> args = {"cutrace", "summary"};
    args.insert(args.end(), paths.begin(), paths.end());
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError&) {
      PrintError("could not summarize the traces");
    }
  } else {
    for (const std::string& p : paths) {
      auto t = LoadTrace(p);
      if (!t.ok()) continue;
      uint64_t total = 0;
      for (const auto& k : t->records.kernels) total += k.end_ns - k.start_ns;
      std::printf("%s: %zu kernels, %s of kernel time\n", p.c_str(), t->records.kernels.size(),
                  FormatDuration(total).c_str());
    }
  }
  std::fflush(stdout);
  ::dup2(saved_stdout, STDOUT_FILENO);
  ::close(saved_stdout);
}

int Run(const Options& o) {
  if (o.command.empty()) {
    PrintError("run: no program given (usage: cutrace run [OPTIONS] -- PROG ARGS...)");
    return 2;
  }
  if (std::string error = CheckRunSelection(o.selection, o.mode, !o.metrics.empty()); !error.empty()) {
    PrintError(error);
    return 2;
  }
  std::string library = FindLibrary();
  if (::access(library.c_str(), R_OK) != 0) {
    PrintError("cannot find the injection library at " + library +
               "; build it (target cutrace_injection) or set CUTRACE_LIBRARY");
    return 1;
  }
  std::string kinds_error;
  if (!o.kinds.empty() && !ParseKinds(o.kinds, &kinds_error)) {
    PrintError("--kinds: " + kinds_error);
    return 2;
  }
  MetricSelection selection;
  if (!o.metrics.empty()) {
    std::string error;
    if (!ExpandMetrics(o.metrics, &selection, &error)) {
      PrintError("--metrics: " + error);
      return 2;
    }
  } else if (!o.metrics_scope.empty() || !o.kernel_filter.empty() || o.kernel_sample) {
    PrintError("--metrics-scope, --kernel-filter, --kernel-sample, --launch-skip, --launch-count and "
               "--launch-skip-before-match need --metrics");
    return 2;
  }
  if (!o.metrics_scope.empty() && o.metrics_scope != "kernel" && o.metrics_scope != "nvtx") {
    PrintError("--metrics-scope: must be kernel or nvtx");
    return 2;
  }
  if (!o.kernel_filter.empty()) {
    try {
      std::regex test(o.kernel_filter);
    } catch (const std::regex_error& e) {
      PrintError("--kernel-filter: not a regex: " + std::string(e.what()));
      return 2;
    }
  }
  // After the cheap checks: this one may start the driver (a second or more).
  if (!o.metrics.empty()) {
    const char* chips = std::getenv("CUTRACE_METRICS_CHIP");
    StartVerdict verdict = CheckBeforeStart(selection, chips != nullptr ? chips : "");
    if (!verdict.message.empty()) PrintError(verdict.message);
    if (!verdict.start) return 2;
  }
  // Absolute, so a program that changes directory still writes where asked.
  std::string output = o.output.empty() ? "." : o.output;
  if (output[0] != '/') output = Cwd() + "/" + output;
  // A directory named with a trailing '/', or the directory of a file
  // pattern (when it has no % in it), is created if missing.
  std::string dir = output.back() == '/' ? output : output.substr(0, output.rfind('/') + 1);
  if (dir.find('%') == std::string::npos && !IsDirectory(dir) && !MakeDirs(dir)) {
    PrintError("cannot create the output directory " + dir + ": " + std::strerror(errno));
    return 1;
  }
  // The pattern's syntax now; its %q{VAR}s are each traced process's own
  // (torchrun and mpirun set RANK per rank, not in this shell), so one unset
  // here is a note, not an error.
  std::set<std::string> unset;
  const EnvLookup env = ProcessEnv();
  auto check = ExpandOutputPattern(output, "host", 1, [&](const std::string& name) {
    std::optional<std::string> value = env(name);
    if (!value) unset.insert(name);
    return value ? value : std::optional<std::string>(name);
  });
  if (!check.ok()) {
    PrintError("--output: " + check.status().message());
    return 1;
  }
  for (const std::string& name : unset)
    std::fprintf(stderr,
                 "cutrace: note: %s is not set here; each traced process fills %%q{%s} in from its "
                 "own environment, and one without it writes no trace (torchrun sets RANK; mpirun "
                 "sets OMPI_COMM_WORLD_RANK or PMI_RANK, srun SLURM_PROCID)\n",
                 name.c_str(), name.c_str());
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/cutrace-run-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    PrintError("cannot create a temporary directory in " + tmpl + ": " + std::strerror(errno));
    return 1;
  }
  std::string manifest = tmpl + "/manifest";
  int fd = ::open(manifest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);

  ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
  // The injection's own search (collector/cupti_search.h), so NVTX and the
  // library load one libcupti; the library says where it looked if none is.
  if (std::string cupti = FindCuptiFile(CuptiSearchFromEnvironment(SelfExe(), o.command[0]));
      !cupti.empty()) {
    ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 0);
  }
  ::setenv("CUTRACE_OUTPUT", output.c_str(), 1);
  ::setenv("CUTRACE_RUN_MANIFEST", manifest.c_str(), 1);
  if (!o.kinds.empty()) ::setenv("CUTRACE_KINDS", o.kinds.c_str(), 1);
  if (!o.mode.empty()) ::setenv("CUTRACE_MODE", o.mode.c_str(), 1);
  if (!o.buffer_size.empty()) ::setenv("CUTRACE_BUFFER_SIZE", o.buffer_size.c_str(), 1);
  ExportRunSelection(o.selection);
  if (!o.metrics.empty()) {
    ::setenv("CUTRACE_METRICS", o.metrics.c_str(), 1);
    if (!o.metrics_scope.empty()) ::setenv("CUTRACE_METRICS_SCOPE", o.metrics_scope.c_str(), 1);
    if (!o.kernel_filter.empty()) ::setenv("CUTRACE_KERNEL_FILTER", o.kernel_filter.c_str(), 1);
    if (o.kernel_sample) ::setenv("CUTRACE_KERNEL_SAMPLE", std::to_string(o.kernel_sample).c_str(), 1);
  }

  const int64_t started_s = static_cast<int64_t>(std::time(nullptr));
  SavedSignals saved;
  StartForwarding(&saved);
  int exec_errno = 0;
  int status = RunChild(o.command, saved, &exec_errno);
  StopForwarding(saved);

  std::vector<std::string> traces = ReadManifest(manifest);
  ::unlink(manifest.c_str());
  ::rmdir(tmpl.c_str());
  if (status < 0) {
    PrintError("cannot run " + o.command[0] + ": " + std::strerror(exec_errno));
    return exec_errno == ENOENT ? 127 : 126;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  // Every file each traced process wrote, its chunks included (a rotated or
  // windowed run, capture ranges; the first may be gone).
  std::vector<std::string> written;
  for (const RunOutput& out : FindRunOutputs(traces, started_s)) {
    if (out.files.empty()) continue;
    PrintError(WroteLine(out));
    written.insert(written.end(), out.files.begin(), out.files.end());
  }
  if (written.empty()) {
    PrintError("no trace was written (the program never initialised CUDA, or tracing failed: "
               "see the lines above)");
  } else if (!o.no_summary) {
    PrintSummary(written);
  }
  return code;
}

void Register(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("run", "Run a program under cutrace and summarize its trace");
  cmd->add_option("-o,--output", options->output,
                  "Directory or file pattern for traces (%h host, %p pid, %q{VAR}); default: .");
  cmd->add_option("--kinds", options->kinds,
                  "What to record: kernel,memcpy,memset,nvtx,api,sync,overhead, default or all "
                  "(default: all but sync, whose records cost; the sync API calls are kept; "
                  "--mode continuous: no api either, so that CUPTI detaches between windows)");
  cmd->add_option("--buffer-size", options->buffer_size, "CUPTI buffer size, 1M..8M (default 2M)");
  StringWords(cmd->add_option("--mode", options->mode,
                              "trace (every event, default), summary (per-interval aggregates, "
                              "CUTRACE_SUMMARY_INTERVAL) or continuous (windows: CUTRACE_WINDOW "
                              "every CUTRACE_PERIOD)"),
              {"trace", "summary", "continuous"});
  cmd->add_option("--metrics", options->metrics,
                  "Hardware counters: presets (cutrace metrics --list) and/or metric names, "
                  "comma-separated (names the GPU lacks stop the run before the program starts); "
                  "counted launches are replayed");
  cmd->add_option("--metrics-scope", options->metrics_scope,
                  "kernel (one range per launch, default) or nvtx (one per NVTX range)");
  cmd->add_option("--kernel-filter", options->kernel_filter,
                  "Count only launches of kernels whose name matches this regex");
  cmd->add_option("--kernel-sample", options->kernel_sample,
                  "Count every Nth matching launch (default 1: all)")
      ->check(Unlabelled(CLI::PositiveNumber))
      ->type_name("N");
  AddRunSelectionOptions(cmd, &options->selection);
  cmd->add_flag("--no-summary", options->no_summary, "Only list the traces written");
  // After "--" everything belongs to the program (CLI11 puts it in
  // `command` and leaves the "--" itself among the remaining arguments).
  // Without "--", arguments CLI11 does not recognise follow as remaining.
  cmd->add_option("command", options->command, "The program and its arguments, after --");
  cmd->prefix_command();
  cmd->footer("Usage: cutrace run [OPTIONS] -- PROG ARGS...");
  cmd->callback([options, exit_code, cmd] {
    bool marker_seen = false;
    for (const std::string& extra : cmd->remaining()) {
      if (extra == "--" && !marker_seen) {
        marker_seen = true;
        continue;
      }
      options->command.push_back(extra);
    }
    *exit_code = Run(*options);
  });
}

const CommandRegistration kRegistration("run", 0, Register);

}  // namespace
}  // namespace cutrace::cli::cmd_run
