// FindRunOutputs (viewer_cli/run_chunks.h): the chunks of a run are found
// beside the manifest's path, in chunk order, without other runs' files.
#include <gtest/gtest.h>
#include <utime.h>

#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/collector_test_util.h"
#include "viewer_cli/run_chunks.h"

namespace cutrace::cli {
namespace {

using cutrace::testing::TempDir;

void Touch(const std::string& path, int64_t age_s = 0) {
  std::ofstream(path) << "x";
  if (age_s > 0) {
    struct utimbuf t;
    t.actime = t.modtime = static_cast<time_t>(std::time(nullptr) - age_s);
    ::utime(path.c_str(), &t);
  }
}

TEST(RunChunksTest, FindsEveryChunkInOrderAndLeavesOthersOut) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const int64_t started = std::time(nullptr);
  for (const char* name : {"run.trace", "run.1.trace", "run.3.trace", "run.10.trace",
                           // not chunks of run.trace:
                           "run.01.trace", "run.x.trace", "run.trace.1", "other.1.trace",
                           "run..trace", "run.1.json"})
    Touch(dir.File(name));
  Touch(dir.File("run.2.trace"), 3600);  // a previous run's chunk
  std::vector<RunOutput> out = FindRunOutputs({dir.File("run.trace")}, started);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].files, (std::vector<std::string>{dir.File("run.trace"), dir.File("run.1.trace"),
                                                    dir.File("run.3.trace"), dir.File("run.10.trace")}));
  EXPECT_EQ(out[0].last_index, 10u);
  EXPECT_EQ(WroteLine(out[0]),
            "wrote 4 chunks: " + dir.File("run.trace") + " … " + dir.File("run.10.trace"));
}

TEST(RunChunksTest, TheFirstChunkMayBeGone) {
  // The disk cap deleted chunk 0 (or capture ranges' placeholder went):
  // the later chunks are still the run's output.
  TempDir dir;
  const int64_t started = std::time(nullptr);
  Touch(dir.File("a.4.trace"));
  Touch(dir.File("a.5.trace"));
  Touch(dir.File("noext.2"));
  std::vector<RunOutput> out = FindRunOutputs({dir.File("a.trace"), dir.File("noext"),
                                               dir.File("missing.trace")}, started);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].files, (std::vector<std::string>{dir.File("a.4.trace"), dir.File("a.5.trace")}));
  EXPECT_EQ(out[1].files, (std::vector<std::string>{dir.File("noext.2")}));
  EXPECT_EQ(WroteLine(out[1]), "wrote " + dir.File("noext.2"));
  EXPECT_TRUE(out[2].files.empty());
}

}  // namespace
}  // namespace cutrace::cli
