// Faults the injected library must survive without changing the program, on
// a machine without a GPU: the stand-in CUDA program
// (injection/testing/lifecycle_app.cc) loads the real libcutrace_injection.so
// against the stand-in libcupti, as in injection_lifecycle_test.cc, under
// hostile conditions: secrets on the command line and in the environment, a
// planted symlink, an unsafe output directory, a write error part-way (the
// disk-full case, through RLIMIT_FSIZE), several bad CUTRACE_* values at once,
// SIGKILL and abort(). Each keeps the program's output and exit status and
// prints at most one `cutrace:` line per problem.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "collector/proto_reader.h"
#include "collector/trace_loader.h"
#include "tests/unit/lifecycle_app.h"
#include "tests/unit/temp_dir.h"

namespace cutrace::injection {
namespace {

using RunResult = cutrace::testing::AppRun;
using RunOptions = cutrace::testing::AppOptions;

std::vector<std::string> CutraceLines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cutrace: ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

class InjectionFailOpenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty()) << "no temporary directory";
    ASSERT_EQ(::mkdir(out_.c_str(), 0700), 0);
    cutrace::testing::ExpectLifecycleAppBuilt();
  }
  void TearDown() override { ::chmod(out_.c_str(), 0700); }

  RunResult Run(const std::string& mode, const RunOptions& o = {}) {
    return cutrace::testing::RunLifecycleApp(dir_, out_, mode, o);
  }

  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
  std::string out_ = dir_ + "/out";
};

TEST_F(InjectionFailOpenTest, SecretsNeverReachTheTrace) {
  RunOptions o;
  o.args = {"--api-key=key-x7q", "--password", "pw-k2m", "DB_PASSWORD=db-p9z",
            "https://me:url-w4v@example.com/x", "--visible=plain-arg"};
  o.env = {{"GITHUB_TOKEN", "tok-env-3j8"}, {"MY_SECRET", "sec-env-5r1"}};
  RunResult r = Run("return", o);
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(r.traces.size(), 1u);
  const std::string bytes = cutrace::testing::Slurp(r.traces[0]);
  for (const char* secret : {"key-x7q", "pw-k2m", "db-p9z", "url-w4v", "tok-env-3j8", "sec-env-5r1"}) {
    EXPECT_EQ(bytes.find(secret), std::string::npos) << secret << " is in the trace";
  }
  auto t = LoadTrace(r.traces[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const auto& cmd = t->header.command_line();
  ASSERT_EQ(cmd.size(), 8);
  EXPECT_EQ(cmd[1], "return");
  EXPECT_EQ(cmd[2], "--api-key=<redacted>");
  EXPECT_EQ(cmd[3], "--password");
  EXPECT_EQ(cmd[4], "<redacted>");
  EXPECT_EQ(cmd[5], "DB_PASSWORD=<redacted>");
  EXPECT_EQ(cmd[6], "https://me:<redacted>@example.com/x");
  EXPECT_EQ(cmd[7], "--visible=plain-arg");
}

TEST_F(InjectionFailOpenTest, TraceIsPrivateByDefault) {
  RunResult r = Run("return");
  ASSERT_EQ(r.traces.size(), 1u) << r.err;
  struct stat st;
  ASSERT_EQ(::stat(r.traces[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST_F(InjectionFailOpenTest, FileModeIsHonouredWhateverTheUmask) {
  RunOptions o;
  o.env = {{"CUTRACE_FILE_MODE", "0644"}};
  o.umask = 077;
  RunResult r = Run("return", o);
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(r.traces.size(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(r.traces[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(InjectionFailOpenTest, PlantedSymlinkIsRefusedInOneLine) {
  const std::string victim = dir_ + "/victim";
  { std::ofstream(victim) << "precious\n"; }
  const std::string link = out_ + "/fixed.trace";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  RunOptions o;
  o.env = {{"CUTRACE_OUTPUT", link}};
  RunResult r = Run("return", o);
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  auto lines = CutraceLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("refusing to write through symlink " + link), std::string::npos)
      << lines[0];
  EXPECT_EQ(cutrace::testing::Slurp(victim), "precious\n");
  EXPECT_TRUE(r.traces.empty());
}

TEST_F(InjectionFailOpenTest, WorldWritableDirectoryIsRefusedInOneLine) {
  ASSERT_EQ(::chmod(out_.c_str(), 0777), 0);
  RunResult r = Run("return");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  auto lines = CutraceLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("refusing to write a trace into " + out_ +
                          ": it is writable by others and has no sticky bit"),
            std::string::npos)
      << lines[0];
  EXPECT_TRUE(r.traces.empty());
}

TEST_F(InjectionFailOpenTest, AnotherUsersDirectoryIsRefusedInOneLine) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_EQ(::chmod(out_.c_str(), 0755), 0);
  ASSERT_EQ(::chown(out_.c_str(), 65534, 65534), 0);
  RunResult r = Run("return");
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  auto lines = CutraceLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("owned by uid 65534, not by you"), std::string::npos) << lines[0];
  EXPECT_TRUE(r.traces.empty());
}

TEST_F(InjectionFailOpenTest, EveryBadValueIsOneLine) {
  RunOptions o;
  o.env = {{"CUTRACE_BUFFER_SIZE", "99M"},     {"CUTRACE_KINDS", "kernel,bogus"},
           {"CUTRACE_QUEUE_BATCHES", "-5"},    {"CUTRACE_FILE_MODE", "0999"},
           {"CUTRACE_LOG", "loud"},            {"CUTRACE_FLUSH_TIMEOUT_MS", "soon"},
           {"CUTRACE_PER_THREAD_BUFFERS", "x"}, {"CUTRACE_BUFFER_COUNT", "100000"}};
  RunResult r = Run("return", o);
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  auto lines = CutraceLines(r.err);
  EXPECT_EQ(lines.size(), o.env.size()) << r.err;
  for (const auto& [name, value] : o.env) {
    bool found = false;
    for (const auto& l : lines) found |= l.rfind("cutrace: " + name + "=" + value + ": ", 0) == 0;
    EXPECT_TRUE(found) << name << " has no line of its own in:\n" << r.err;
  }
  // The defaults stand in: the trace is complete, with its 0600 mode.
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = LoadTrace(r.traces[0]);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->clean_shutdown());
  EXPECT_EQ(t->records.kernels.size(), 8u);
}

TEST_F(InjectionFailOpenTest, WriteErrorPartWayIsOneLineAndTheFileReadsBack) {
  // First, how long the header packet is, so the limit lets it through.
  RunResult whole = Run("return");
  ASSERT_EQ(whole.traces.size(), 1u);
  const std::string bytes = cutrace::testing::Slurp(whole.traces[0]);
  ASSERT_GT(bytes.size(), 2u);
  const uint8_t* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* p = begin + 1;  // past the packet's tag
  uint64_t len = 0;
  ASSERT_TRUE(wire::ReadVarint(p, begin + bytes.size(), &len));
  const size_t header_end = static_cast<size_t>(p - begin) + len;
  ASSERT_LT(header_end + 16, bytes.size()) << "the trace must be longer than its header";
  ::unlink(whole.traces[0].c_str());

  RunOptions o;
  o.file_size_limit = header_end + 8;
  RunResult r = Run("return", o);
  ASSERT_TRUE(WIFEXITED(r.status)) << "status " << r.status;
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "app output return\n");
  auto lines = CutraceLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("is incomplete: cannot write"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("File too large"), std::string::npos) << lines[0];
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = LoadTrace(r.traces[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_FALSE(t->clean_shutdown());
  EXPECT_GE(t->read.packets, 1u);
}

// SIGKILL and abort() run no handler of cutrace's: the file keeps what the
// writer had written (at least the header, written at start) and reads back
// as cut short.
void ExpectCutShort(const RunResult& r, int sig) {
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status;
  EXPECT_EQ(WTERMSIG(r.status), sig);
  EXPECT_TRUE(CutraceLines(r.err).empty()) << r.err;
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = LoadTrace(r.traces[0]);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_FALSE(t->clean_shutdown());
  EXPECT_GE(t->read.packets, 1u);
  EXPECT_LE(t->records.kernels.size(), 8u);
}

TEST_F(InjectionFailOpenTest, SigkillLeavesAReadableTrace) {
  RunResult r = Run("kill");
  EXPECT_EQ(r.out, "app output kill\n");
  ExpectCutShort(r, SIGKILL);
}

TEST_F(InjectionFailOpenTest, AbortLeavesAReadableTrace) {
  RunResult r = Run("abort");
  EXPECT_EQ(r.out, "app output abort\n");
  ExpectCutShort(r, SIGABRT);
}

}  // namespace
}  // namespace cutrace::injection
