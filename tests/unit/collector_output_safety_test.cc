// Where and how trace files are created: the directory must be the user's
// (or root's) and not writable by others without a sticky bit; the file mode
// is exactly the one asked for, whatever the umask.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "collector/output_path.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace {
namespace {

TEST(OutputDirectory, OwnPrivateDirectoryIsFine) {
  testing::TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  EXPECT_TRUE(CheckOutputDirectory(dir.File("x.trace")).ok());
  ASSERT_EQ(chmod(dir.path().c_str(), 0770), 0);  // a group-shared directory of one's own
  EXPECT_TRUE(CheckOutputDirectory(dir.File("x.trace")).ok());
}

TEST(OutputDirectory, WorldWritableWithoutStickyBitIsRefused) {
  testing::TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  Status s = CheckOutputDirectory(dir.File("x.trace"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "refusing to write a trace into " + dir.path() +
                             ": it is writable by others and has no sticky bit");
  // With the sticky bit (as /tmp has), others cannot rename or remove our file.
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  EXPECT_TRUE(CheckOutputDirectory(dir.File("x.trace")).ok());
}

TEST(OutputDirectory, TmpAndRelativePathsAreFine) {
  struct stat st;
  if (stat("/tmp", &st) == 0 && st.st_uid == 0 && (st.st_mode & S_ISVTX)) {
    EXPECT_TRUE(CheckOutputDirectory("/tmp/cutrace-x.trace").ok());
  }
  // The current directory, the root and missing directories pass: for the last,
  // creating the file gives the precise reason.
  EXPECT_TRUE(CheckOutputDirectory("x.trace").ok());
  EXPECT_TRUE(CheckOutputDirectory("/nonexistent-dir/x.trace").ok());
}

TEST(OutputDirectory, AnotherUsersDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  testing::TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  ASSERT_EQ(chown(dir.path().c_str(), 65534, 65534), 0);
  Status s = CheckOutputDirectory(dir.File("x.trace"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "refusing to write a trace into " + dir.path() +
                             ": it is owned by uid 65534, not by you (uid 0)");
}

TEST(TraceFileMode, ExactlyTheModeAskedForWhateverTheUmask) {
  testing::TempDir dir;
  const mode_t old_umask = umask(077);
  for (mode_t mode : {0600, 0640, 0644, 0400}) {
    // append: GCC 12 -O3 warns -Wrestrict on "m" + std::to_string() (a false positive
    // of its inlined std::string code).
    const std::string path = dir.File(std::string("m").append(std::to_string(mode)) + ".trace");
    TraceWriterOptions options;
    options.mode = mode;
    auto w = TraceWriter::Create(path, options);
    ASSERT_TRUE(w.ok()) << w.status().message();
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode) << path;
  }
  umask(old_umask);
}

}  // namespace
}  // namespace cutrace
