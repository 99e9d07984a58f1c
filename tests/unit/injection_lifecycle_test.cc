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
#include "tests/unit/lifecycle_app.h"
#include "tests/unit/temp_dir.h"

namespace cutrace::injection {
namespace {

using RunResult = cutrace::testing::AppRun;
using cutrace::testing::kBinaryDir;

int CountLines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class InjectionLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty()) << "no temporary directory";
    ASSERT_EQ(::mkdir((dir_ + "/out").c_str(), 0700), 0);
    cutrace::testing::ExpectLifecycleAppBuilt();
  }

  RunResult Run(const std::string& mode, std::map<std::string, std::string> env = {}) {
    cutrace::testing::AppOptions o;
    o.env = std::move(env);
    return cutrace::testing::RunLifecycleApp(dir_, dir_ + "/out", mode, o);
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
    EXPECT_EQ(t->statistics->kernels, 8u);
    EXPECT_EQ(t->header.clock(), proto::CLOCK_DOMAIN_MONOTONIC);
    EXPECT_FALSE(t->read.truncated);
  }

  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
};

// One way for the program to end, and what it must look like afterwards: its
// own status and output, and a complete trace.
struct Ending {
  const char* name;    // of the test
  const char* mode;    // the lifecycle app's
  int signal;          // the signal it dies of; 0: it exits with `status`
  int status;
  const char* out;     // its whole stdout
  bool quiet;          // nothing on stderr
  const char* reason;  // the trace's end reason
};
void PrintTo(const Ending& e, std::ostream* os) { *os << e.name; }

class InjectionEndingTest : public InjectionLifecycleTest,
                            public ::testing::WithParamInterface<Ending> {};

TEST_P(InjectionEndingTest, ProgramUnchangedAndTheTraceComplete) {
  const Ending& e = GetParam();
  RunResult r = Run(e.mode);
  if (e.signal != 0) {
    ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status;
    EXPECT_EQ(WTERMSIG(r.status), e.signal);
  } else {
    ASSERT_TRUE(WIFEXITED(r.status)) << "status " << r.status;
    EXPECT_EQ(WEXITSTATUS(r.status), e.status);
  }
  EXPECT_EQ(r.out, e.out);
  if (e.quiet) {
    EXPECT_EQ(r.err, "") << "no problem, no output";
  }
  ExpectCompleteTrace(r, e.reason);
}

INSTANTIATE_TEST_SUITE_P(
    Endings, InjectionEndingTest,
    ::testing::Values(
        Ending{"ReturnFromMain", "return", 0, 0, "app output return\n", true, "exit"},
        Ending{"ExitFromAnotherThread", "exit-thread", 0, 7, "app output exit-thread\n", false,
               "exit"},
        // SIGTERM still kills, but the trace is complete.
        Ending{"Sigterm", "sigterm", SIGTERM, 0, "app output sigterm\n", false, "SIGTERM"},
        // The program's SIGINT handler is chained.
        Ending{"ProgramSigintHandler", "sigint-handler", 0, 0,
               "app output sigint-handler\nhandled 1\n", false, "exit"},
        // exit() inside the program's signal handler: the trace is finished
        // by the watcher thread, not inside the signal handler.
        Ending{"ExitInsideTheProgramsSignalHandler", "exit-in-handler", 0, 3,
               "app output exit-in-handler\n", true, "SIGTERM"},
        // An ignored SIGTERM stays ignored.
        Ending{"IgnoredSigterm", "sigterm-ignored", 0, 0,
               "app output sigterm-ignored\nstill here\n", false, "exit"},
        // The forked child stays silent and never hangs.
        Ending{"Fork", "fork", 0, 0, "app output fork\nchild\n", true, "exit"}),
    [](const auto& info) { return std::string(info.param.name); });

// A problem that stops tracing: the program runs as it would bare, with one
// line on stderr that says why, and no trace.
struct Refusal {
  const char* name;  // of the test
  const char* env;   // the variable that makes the problem
  bool in_dir;       // its value is a path under the test's directory
  const char* value;
  const char* says;  // what the line holds
};
void PrintTo(const Refusal& p, std::ostream* os) { *os << p.name; }

class InjectionRefusalTest : public InjectionLifecycleTest,
                             public ::testing::WithParamInterface<Refusal> {};

TEST_P(InjectionRefusalTest, OneLineAndNoTrace) {
  const Refusal& p = GetParam();
  RunResult r = Run("return", {{p.env, (p.in_dir ? dir_ : std::string()) + p.value}});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(p.says), std::string::npos) << r.err;
  EXPECT_TRUE(r.traces.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Problems, InjectionRefusalTest,
    ::testing::Values(
        Refusal{"AnotherCuptiClient", "FAKE_CUPTI_OTHER_SUBSCRIBER", false,
                "CUPTI for Nsight Compute",
                "cutrace: another CUPTI client is active (CUPTI for Nsight Compute)"},
        Refusal{"MissingCupti", "CUTRACE_CUPTI_PATH", true, "/no/libcupti.so.13",
                "cutrace: cannot load libcupti"},
        Refusal{"WrongCuptiVersion", "FAKE_CUPTI_VERSION", false, "26", "API version 26"}),
    [](const auto& info) { return std::string(info.param.name); });

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

// torch.profiler's case: the program's own client registers its buffer
// callbacks while CUPTI still fills a buffer of cutrace's. cutrace must take
// that buffer back first (else the client gets it, does not know it, and
// loses its first kernels), then stop, and say so once; when the client ends
// its profile (kernel records off, forced flush), cutrace goes on.
class InjectionOtherClientTest : public InjectionLifecycleTest,
                                 public ::testing::WithParamInterface<const char*> {};

TEST_P(InjectionOtherClientTest, ProgramsOwnClientGetsTheActivityApiWithNothingLost) {
  RunResult r = Run("other-client", {{"OTHER_CLIENT_PATH", kBinaryDir + "/lib/" + GetParam()}});
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
  EXPECT_EQ(t->statistics->kernels, 10u);
  uint64_t invalid = 0;
  for (const auto& i : t->statistics->invalid) invalid += i.count;
  EXPECT_EQ(invalid, 0u);
  for (const auto& k : t->records.kernels) EXPECT_GT(k.start_ns, 1000000000u) << "a tick of the client's clock";
}

// Through a lazily bound PLT slot, and through a read-only GOT slot.
INSTANTIATE_TEST_SUITE_P(Binding, InjectionOtherClientTest,
                         ::testing::Values("libcutrace_other_client.so", "libcutrace_other_client_now.so"));

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
