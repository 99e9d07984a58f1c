// The injected library's process life, without a GPU: a stand-in CUDA
// program (injection/testing/lifecycle_app.cc) loads the real
// libcutrace_injection.so the way the driver does, against a stand-in
// libcupti (injection/testing/fake_libcupti.cc), and ends in each way a
// process can. Every exit path must leave a complete trace with the
// clean-shutdown marker and the program's own output and exit status; every
// failure must leave the program alone with one line on stderr.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "collector/trace_loader.h"

namespace cutrace::injection {
namespace {

const std::string kBin = CUTRACE_BINARY_DIR;

struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
  std::vector<std::string> traces;  // full paths
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int CountLines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class InjectionLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cutrace-lifecycle-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(::mkdir((dir_ + "/out").c_str(), 0700), 0);
    for (const char* tool : {"/bin/injection_lifecycle_app", "/lib/libcutrace_injection.so",
                             "/lib/libcutrace_fake_cupti.so"}) {
      ASSERT_EQ(::access((kBin + tool).c_str(), R_OK), 0) << kBin + tool << " is not built";
    }
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }

  RunResult Run(const std::string& mode, std::map<std::string, std::string> env = {}) {
    std::map<std::string, std::string> vars = {
        {"PATH", "/usr/bin:/bin"},
        {"CUDA_INJECTION64_PATH", kBin + "/lib/libcutrace_injection.so"},
        {"CUTRACE_CUPTI_PATH", kBin + "/lib/libcutrace_fake_cupti.so"},
        {"CUTRACE_OUTPUT", dir_ + "/out/"},
        // Under ASan (scripts/sanitize.sh) the app's leak check at exit would
        // stop the world in a forked child that inherited the allocator's lock
        // mid-use, and hang there; the session it leaks on purpose is not a
        // leak to judge. Ignored by a build without ASan.
        {"ASAN_OPTIONS", "detect_leaks=0"},
    };
    for (auto& [k, v] : env) vars[k] = v;
    std::vector<std::string> strings;
    for (auto& [k, v] : vars) strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string app = kBin + "/bin/injection_lifecycle_app";
    std::vector<char*> argv = {app.data(), const_cast<char*>(mode.c_str()), nullptr};
    std::string out_path = dir_ + "/stdout", err_path = dir_ + "/stderr";

    RunResult r;
    pid_t pid = ::fork();
    if (pid == 0) {
      int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(out, 1);
      ::dup2(err, 2);
      struct rlimit no_core = {0, 0};  // the crash tests leave no core files behind
      ::setrlimit(RLIMIT_CORE, &no_core);
      ::execve(app.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    ::waitpid(pid, &r.status, 0);
    r.out = ReadFile(out_path);
    r.err = ReadFile(err_path);
    DIR* d = ::opendir((dir_ + "/out").c_str());
    while (struct dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') r.traces.push_back(dir_ + "/out/" + e->d_name);
    }
    ::closedir(d);
    return r;
  }

  // The one trace of a run: clean, with every kernel the app launched.
  void ExpectCompleteTrace(const RunResult& r, const std::string& reason) {
    ASSERT_EQ(r.traces.size(), 1u) << r.err;
    auto t = LoadTrace(r.traces[0]);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_TRUE(t->clean_shutdown()) << r.traces[0];
    if (t->end) {
      EXPECT_EQ(t->end->reason(), reason);
    }
    EXPECT_EQ(t->records.kernels.size(), 8u) << "5 delivered early + 3 at the final flush";
    ASSERT_TRUE(t->statistics.has_value());
    EXPECT_EQ(t->statistics->kernels(), 8u);
    EXPECT_EQ(t->header.clock(), proto::CLOCK_DOMAIN_MONOTONIC);
    EXPECT_FALSE(t->read.truncated);
  }

  std::string dir_;
};

TEST_F(InjectionLifecycleTest, ReturnFromMain) {
  RunResult r = Run("return");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  EXPECT_EQ(r.err, "") << "no problem, no output";
  ExpectCompleteTrace(r, "exit");
}

TEST_F(InjectionLifecycleTest, ExitFromAnotherThread) {
  RunResult r = Run("exit-thread");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 7);
  EXPECT_EQ(r.out, "app output exit-thread\n");
  ExpectCompleteTrace(r, "exit");
}

TEST_F(InjectionLifecycleTest, SigtermStillKillsButTheTraceIsComplete) {
  RunResult r = Run("sigterm");
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status;
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
  EXPECT_EQ(r.out, "app output sigterm\n");
  ExpectCompleteTrace(r, "SIGTERM");
}

// With the flight recorder on, a crash finishes the trace and dumps the ring,
// and the process still dies of its own signal.
class InjectionCrashTest : public InjectionLifecycleTest,
                           public ::testing::WithParamInterface<std::tuple<const char*, int, const char*>> {};

TEST_P(InjectionCrashTest, FlightRecorderDumpsAndTheProcessStillDiesOfIt) {
  const auto [mode, sig, reason] = GetParam();
  // ASan's own SIGSEGV handler would turn the crash into exit(1).
  RunResult r = Run(mode, {{"CUTRACE_FLIGHT_RECORDER", "4M"},
                           {"ASAN_OPTIONS", "detect_leaks=0:handle_segv=0:handle_abort=0"}});
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status << ": " << r.err;
  EXPECT_EQ(WTERMSIG(r.status), sig);
  EXPECT_NE(r.out.find(std::string("app output ") + mode), std::string::npos) << r.out;
  std::vector<std::string> dumps, traces;
  for (const std::string& path : r.traces)
    (path.find("flight-") != std::string::npos ? dumps : traces).push_back(path);
  RunResult main = r;
  main.traces = traces;
  ExpectCompleteTrace(main, reason);
  ASSERT_EQ(dumps.size(), 1u) << r.err;
  auto dump = LoadTrace(dumps[0]);
  ASSERT_TRUE(dump.ok()) << dump.status().message();
  EXPECT_TRUE(dump->clean_shutdown());
  EXPECT_EQ(dump->records.kernels.size(), 8u) << "the ring holds every kernel of the run";
}

INSTANTIATE_TEST_SUITE_P(Signals, InjectionCrashTest,
                         ::testing::Values(std::make_tuple("segv", SIGSEGV, "SIGSEGV"),
                                           std::make_tuple("abort", SIGABRT, "SIGABRT")),
                         [](const auto& info) { return std::string(std::get<0>(info.param)); });

TEST_F(InjectionLifecycleTest, WithoutTheFlightRecorderACrashIsLeftAlone) {
  RunResult r = Run("segv", {{"ASAN_OPTIONS", "detect_leaks=0:handle_segv=0"}});
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status << ": " << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGSEGV);
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = LoadTrace(r.traces[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_FALSE(t->clean_shutdown()) << "no handler of cutrace's ran";
  EXPECT_EQ(r.err, "");
}

TEST_F(InjectionLifecycleTest, ProgramSigintHandlerIsChained) {
  RunResult r = Run("sigint-handler");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output sigint-handler\nhandled 1\n");
  ExpectCompleteTrace(r, "exit");
}

TEST_F(InjectionLifecycleTest, ExitInsideTheProgramsSignalHandler) {
  RunResult r = Run("exit-in-handler");
  ASSERT_TRUE(WIFEXITED(r.status)) << "status " << r.status;
  EXPECT_EQ(WEXITSTATUS(r.status), 3);
  EXPECT_EQ(r.out, "app output exit-in-handler\n");
  EXPECT_EQ(r.err, "");
  // Finished by the watcher thread, not inside the signal handler.
  ExpectCompleteTrace(r, "SIGTERM");
}

TEST_F(InjectionLifecycleTest, IgnoredSigtermStaysIgnored) {
  RunResult r = Run("sigterm-ignored");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output sigterm-ignored\nstill here\n");
  ExpectCompleteTrace(r, "exit");
}

TEST_F(InjectionLifecycleTest, ForkedChildStaysSilentAndNeverHangs) {
  RunResult r = Run("fork");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output fork\nchild\n");
  EXPECT_EQ(r.err, "");
  ExpectCompleteTrace(r, "exit");
}

TEST_F(InjectionLifecycleTest, AnotherCuptiClientMeansOneLineAndNoTrace) {
  RunResult r = Run("return", {{"FAKE_CUPTI_OTHER_SUBSCRIBER", "CUPTI for Nsight Compute"}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cutrace: another CUPTI client is active (CUPTI for Nsight Compute)"),
            std::string::npos) << r.err;
  EXPECT_TRUE(r.traces.empty());
}

// torch.profiler's case: the program's own client registers its buffer
// callbacks while CUPTI still fills a buffer of cutrace's. cutrace must take
// that buffer back first (else the client gets it, does not know it, and
// loses its first kernels), then stop, and say so once; when the client ends
// its profile (kernel records off, forced flush), cutrace goes on.
class InjectionOtherClientTest : public InjectionLifecycleTest,
                                 public ::testing::WithParamInterface<const char*> {};

TEST_P(InjectionOtherClientTest, ProgramsOwnClientGetsTheActivityApiWithNothingLost) {
  RunResult r = Run("other-client", {{"OTHER_CLIENT_PATH", kBin + "/lib/" + GetParam()}});
  ASSERT_TRUE(WIFEXITED(r.status)) << r.err;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.err;
  EXPECT_EQ(r.out, "other client saw 4 kernels, 0 unknown buffers\napp output other-client\n");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cutrace: the program started a CUPTI client of its own"), std::string::npos)
      << r.err;
  ASSERT_EQ(r.traces.size(), 1u) << r.err;
  auto t = LoadTrace(r.traces[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->clean_shutdown());
  EXPECT_EQ(t->records.kernels.size(), 10u)
      << "5 delivered early + 3 taken back at the hand-over + 2 after the client stopped";
  size_t profiled = 0;
  for (const auto& k : t->records.kernels) profiled += t->strings.Raw(k.name_id) == "_Z7profiledv";
  EXPECT_EQ(profiled, 0u) << "the client's own kernels are the client's";
  bool yielded = false, resumed = false;
  for (const auto& w : t->warnings) {
    yielded = yielded || w.find("CUPTI client of its own (such as torch.profiler)") != std::string::npos;
    resumed = resumed || w.find("recorded again") != std::string::npos;
  }
  EXPECT_TRUE(yielded) << "the trace says where its activity stops";
  EXPECT_TRUE(resumed) << "and where it starts again";
  // The client's clock (ticks from 1000) never reached cutrace's records:
  // none is invalid, and all of them are on cutrace's monotonic clock.
  ASSERT_TRUE(t->statistics.has_value());
  EXPECT_EQ(t->statistics->kernels(), 10u);
  uint64_t invalid = 0;
  for (const auto& i : t->statistics->invalid()) invalid += i.count();
  EXPECT_EQ(invalid, 0u);
  for (const auto& k : t->records.kernels) EXPECT_GT(k.start_ns, 1000000000u) << "a tick of the client's clock";
}

// Through a lazily bound PLT slot, and through a read-only GOT slot.
INSTANTIATE_TEST_SUITE_P(Binding, InjectionOtherClientTest,
                         ::testing::Values("libcutrace_other_client.so", "libcutrace_other_client_now.so"));

TEST_F(InjectionLifecycleTest, MissingCuptiMeansOneLineAndNoTrace) {
  RunResult r = Run("return", {{"CUTRACE_CUPTI_PATH", dir_ + "/no/libcupti.so.13"}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cutrace: cannot load libcupti"), std::string::npos) << r.err;
  EXPECT_TRUE(r.traces.empty());
}

TEST_F(InjectionLifecycleTest, WrongCuptiVersionMeansOneLineAndNoTrace) {
  RunResult r = Run("return", {{"FAKE_CUPTI_VERSION", "26"}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("API version 26"), std::string::npos) << r.err;
  EXPECT_TRUE(r.traces.empty());
}

TEST_F(InjectionLifecycleTest, UnwritableOutputMeansOneLine) {
  RunResult r = Run("sigterm", {{"CUTRACE_OUTPUT", dir_ + "/missing/"}});
  ASSERT_TRUE(WIFSIGNALED(r.status));
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
  EXPECT_EQ(r.out, "app output sigterm\n");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("CUTRACE_OUTPUT"), std::string::npos) << r.err;
}

TEST_F(InjectionLifecycleTest, BadValueIsOneLineAndTracingGoesOn) {
  RunResult r = Run("return", {{"CUTRACE_BUFFER_SIZE", "99M"}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.err, "cutrace: CUTRACE_BUFFER_SIZE=99M: must be 1M..8M; using 2M\n");
  ExpectCompleteTrace(r, "exit");
}

TEST_F(InjectionLifecycleTest, DisabledDoesNothing) {
  RunResult r = Run("return", {{"CUTRACE_DISABLE", "1"}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(r.traces.empty());
}

TEST_F(InjectionLifecycleTest, DebugLogSaysWhatHappened) {
  RunResult r = Run("return", {{"CUTRACE_LOG", "debug"}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_NE(r.err.find("cutrace: loaded "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cutrace: tracing to "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cutrace: wrote "), std::string::npos) << r.err;
  ExpectCompleteTrace(r, "exit");
}

}  // namespace
}  // namespace cutrace::injection
