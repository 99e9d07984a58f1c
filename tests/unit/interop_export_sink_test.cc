// FileSink (interop/export/export_sink.h): the bytes go to a temporary file
// beside the path, which gets the path only on Commit(); never over an
// existing file unless asked to replace it; nothing left behind by a failure
// or by a signal that ends the process halfway.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interop/export/export_sink.h"

namespace cutrace::interop {
namespace {

class FileSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cutrace-sink-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The names in the folder, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir_;
};

TEST_F(FileSinkTest, ThePathHoldsTheFileOnlyOnceCommitted) {
  const std::string path = dir_ + "/out.json";
  auto sink = FileSink::Create(path);
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  ASSERT_TRUE((*sink)->Write("whole").ok());
  EXPECT_FALSE(std::filesystem::exists(path));  // written beside it so far
  ASSERT_EQ(Names().size(), 1u);
  EXPECT_EQ(Names()[0].rfind(".out.json.cutrace-", 0), 0u) << Names()[0];
  ASSERT_TRUE((*sink)->Commit().ok());
  EXPECT_EQ(Slurp(path), "whole");
  EXPECT_EQ(Names(), std::vector<std::string>{"out.json"});
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(FileSinkTest, NeverOverAFileUnlessReplacingAndThenOnlyOnCommit) {
  const std::string path = dir_ + "/out.json";
  std::ofstream(path) << "old";
  auto refused = FileSink::Create(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("exists: cutrace never overwrites"), std::string::npos);
  // A file that appears between Create() and Commit() is not overwritten.
  const std::string late = dir_ + "/late.json";
  auto sink = FileSink::Create(late);
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Write("new").ok());
  std::ofstream(late) << "someone else's";
  Status s = (*sink)->Commit();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Slurp(late), "someone else's");
  sink->reset();
  // Replacing: the old file until the new one is committed, and after a
  // failure (a sink dropped uncommitted) still the old one.
  auto dropped = FileSink::Create(path, /*replace=*/true);
  ASSERT_TRUE(dropped.ok());
  ASSERT_TRUE((*dropped)->Write("half").ok());
  dropped->reset();
  EXPECT_EQ(Slurp(path), "old");
  auto replacing = FileSink::Create(path, /*replace=*/true);
  ASSERT_TRUE(replacing.ok());
  ASSERT_TRUE((*replacing)->Write("new").ok());
  EXPECT_EQ(Slurp(path), "old");
  ASSERT_TRUE((*replacing)->Commit().ok());
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_EQ(Names(), (std::vector<std::string>{"late.json", "out.json"}));
  // A symlink is replaced itself, not written through.
  const std::string target = dir_ + "/target";
  std::ofstream(target) << "target";
  const std::string link = dir_ + "/link.json";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_FALSE(FileSink::Create(link).ok());
  auto over_link = FileSink::Create(link, /*replace=*/true);
  ASSERT_TRUE(over_link.ok());
  ASSERT_TRUE((*over_link)->Write("x").ok());
  ASSERT_TRUE((*over_link)->Commit().ok());
  EXPECT_EQ(Slurp(target), "target");
  EXPECT_EQ(Slurp(link), "x");
  EXPECT_FALSE(std::filesystem::is_symlink(link));
  // A directory is refused, with or without replacing.
  EXPECT_FALSE(FileSink::Create(dir_, true).ok());
}

TEST_F(FileSinkTest, ASignalMidWriteLeavesTheOldFileAndNoTemporaryOne) {
  const std::string path = dir_ + "/out.json";
  std::ofstream(path) << "old";
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto sink = FileSink::Create(path, /*replace=*/true);
      if (!sink.ok() || !(*sink)->Write("half of a file").ok()) _exit(10);
      raise(sig);
      _exit(11);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << sig << ": " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(Slurp(path), "old") << sig;
    EXPECT_EQ(Names(), std::vector<std::string>{"out.json"}) << sig;
  }
}

}  // namespace
}  // namespace cutrace::interop
