// Creating output files safely (no symlinks, no overwriting, mode 0600) and
// expanding output path patterns.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "collector/output_path.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TraceWriterFile, RefusesSymlinks) {
  testing::TempDir dir;
  const std::string target = dir.File("target");
  const std::string link = dir.File("link.trace");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);  // dangling: target does not exist
  StatusOr<std::unique_ptr<TraceWriter>> w = TraceWriter::Create(link);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "refusing to write through symlink " + link);
  EXPECT_NE(access(target.c_str(), F_OK), 0);  // nothing was created through the link

  { std::ofstream(target.c_str()) << "precious"; }
  w = TraceWriter::Create(link);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "refusing to write through symlink " + link);
  EXPECT_EQ(ReadAll(target), "precious");
}

TEST(TraceWriterFile, NeverOverwrites) {
  testing::TempDir dir;
  const std::string path = dir.File("exists.trace");
  { std::ofstream(path.c_str()) << "old"; }
  StatusOr<std::unique_ptr<TraceWriter>> w = TraceWriter::Create(path);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), path + " exists");
  EXPECT_EQ(ReadAll(path), "old");
}

TEST(TraceWriterFile, CannotCreate) {
  StatusOr<std::unique_ptr<TraceWriter>> w = TraceWriter::Create("/nonexistent-dir/x.trace");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "cannot create /nonexistent-dir/x.trace: No such file or directory");
  EXPECT_FALSE(TraceWriter::Create("").ok());
}

TEST(TraceWriterFile, ModeIs0600ByDefaultAndConfigurable) {
  testing::TempDir dir;
  const mode_t old_umask = umask(022);
  {
    auto w = TraceWriter::Create(dir.File("a.trace"));
    ASSERT_TRUE(w.ok());
    struct stat st;
    ASSERT_EQ(stat(dir.File("a.trace").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  {
    TraceWriterOptions options;
    options.mode = 0640;
    auto w = TraceWriter::Create(dir.File("b.trace"), options);
    ASSERT_TRUE(w.ok());
    struct stat st;
    ASSERT_EQ(stat(dir.File("b.trace").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
  }
  umask(old_umask);
}

TEST(TraceWriterFile, ClosedWriterRefusesWrites) {
  testing::TempDir dir;
  auto w = TraceWriter::Create(dir.File("c.trace"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->WriteHeader(testing::SampleHeader()).ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_TRUE((*w)->Close().ok());  // twice is fine
  Status late = (*w)->WriteWarning("late");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.message(), "cannot write " + dir.File("c.trace") + ": already closed");
  StatusOr<TraceData> data = LoadTrace(dir.File("c.trace"));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->read.packets, 1u);
}

// /dev/full fails every write with ENOSPC: the writer reports it once, keeps
// the error, and writes nothing more.
TEST(TraceWriterFile, DiskFullStopsWritingWithAStatus) {
  const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "no /dev/full";
  TraceWriterOptions options;
  options.buffer_bytes = 16;
  std::unique_ptr<TraceWriter> w = TraceWriter::Adopt(fd, "full.trace", options);
  Status s = w->WriteHeader(testing::SampleHeader());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write full.trace: No space left on device");
  EXPECT_EQ(w->bytes_written(), 0u);
  StringInterner interner;
  EXPECT_EQ(w->WriteBatch(testing::SampleBatch(interner), interner).message(), s.message());
  EXPECT_EQ(w->Close().message(), s.message());
}

// --- Output patterns -----------------------------------------------------

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(OutputPattern, Expands) {
  const EnvLookup env = FakeEnv({{"RANK", "3"}, {"EMPTY", ""}});
  auto x = [&](std::string_view p) {
    StatusOr<std::string> r = ExpandOutputPattern(p, "node1", 1234, env);
    return r.ok() ? r.value() : "ERROR: " + r.status().message();
  };
  EXPECT_EQ(x("/out/run-%h-%p.trace"), "/out/run-node1-1234.trace");
  EXPECT_EQ(x("r%q{RANK}.trace"), "r3.trace");
  EXPECT_EQ(x("r%q{EMPTY}x"), "rx");
  EXPECT_EQ(x("100%%-%p"), "100%-1234");
  EXPECT_EQ(x("plain.trace"), "plain.trace");
  EXPECT_EQ(x("/out/%q{RANK}/"), "/out/3/cutrace-node1-1234.trace");
  EXPECT_EQ(x("%z"), "ERROR: unknown %z in output pattern %z");
  EXPECT_EQ(x("a%"), "ERROR: lone % at the end of output pattern a%");
  EXPECT_EQ(x("%q{RANK"), "ERROR: unterminated %q{ in output pattern %q{RANK");
  EXPECT_EQ(x("%qRANK"), "ERROR: expected %q{VAR} in output pattern %qRANK");
  EXPECT_EQ(x("%q{}"), "ERROR: empty %q{} in output pattern %q{}");
  EXPECT_EQ(x("%q{NOPE}.trace"),
            "ERROR: environment variable NOPE is not set (output pattern %q{NOPE}.trace)");
  EXPECT_EQ(x(""), "ERROR: empty output pattern");
}

TEST(OutputPattern, ExistingDirectoryGetsTheDefaultName) {
  testing::TempDir dir;
  StatusOr<std::string> r = ExpandOutputPattern(dir.path(), "h", 7, FakeEnv({}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), dir.path() + "/cutrace-h-7.trace");
  setenv("CUTRACE_TEST_VAR", "v", 1);
  r = ExpandOutputPattern("x-%q{CUTRACE_TEST_VAR}", "h", 7, ProcessEnv());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "x-v");
}

}  // namespace
}  // namespace cutrace
