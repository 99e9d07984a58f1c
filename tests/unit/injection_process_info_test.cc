// Header facts about the process: secret redaction in the command line,
// /proc cmdline splitting, rank from the launcher's environment.
#include <gtest/gtest.h>

#include <map>

#include "injection/process_info.h"

namespace cutrace::injection {
namespace {

using Args = std::vector<std::string>;

TEST(InjectionProcessInfoTest, RedactsSecretOptionValues) {
  Args in = {"python3", "train.py", "--api-key=abc123", "--token", "t0k3n", "--epochs", "3",
             "--db-password=hunter2", "-p", "8080", "--SECRET", "s"};
  Args want = {"python3", "train.py", "--api-key=<redacted>", "--token", "<redacted>",
               "--epochs", "3", "--db-password=<redacted>", "-p", "8080", "--SECRET", "<redacted>"};
  EXPECT_EQ(RedactCommandLine(in), want);
}

TEST(InjectionProcessInfoTest, RedactsEnvAssignmentsAndUrlPasswords) {
  Args in = {"env", "AWS_SECRET_ACCESS_KEY=xyz", "HF_TOKEN=abc", "PATH=/bin", "app",
             "--db=postgres://user:pw@db.example:5432/x", "https://example.com/a:b@c"};
  Args want = {"env", "AWS_SECRET_ACCESS_KEY=<redacted>", "HF_TOKEN=<redacted>", "PATH=/bin", "app",
               "--db=postgres://user:<redacted>@db.example:5432/x", "https://example.com/a:b@c"};
  EXPECT_EQ(RedactCommandLine(in), want);
}

TEST(InjectionProcessInfoTest, SecretFlagFollowedByAnOptionRedactsNothingExtra) {
  Args in = {"app", "--use-key", "--verbose"};
  EXPECT_EQ(RedactCommandLine(in), in);
}

TEST(InjectionProcessInfoTest, ProgramNameIsNeverTreatedAsAnAssignment) {
  Args in = {"KEY=1"};
  EXPECT_EQ(RedactCommandLine(in), in);
}

TEST(InjectionProcessInfoTest, SecretNames) {
  EXPECT_TRUE(LooksSecretName("--api-key"));
  EXPECT_TRUE(LooksSecretName("GITHUB_TOKEN"));
  EXPECT_TRUE(LooksSecretName("--passwd"));
  EXPECT_TRUE(LooksSecretName("client_secret"));
  EXPECT_FALSE(LooksSecretName("--batch-size"));
}

TEST(InjectionProcessInfoTest, SplitsCmdline) {
  std::string blob("a\0bb\0\0c\0", 8);
  EXPECT_EQ(SplitCmdline(blob), (Args{"a", "bb", "", "c"}));
  EXPECT_TRUE(SplitCmdline("").empty());
  Args self = ReadCommandLine();
  ASSERT_FALSE(self.empty());
  EXPECT_NE(self[0].find("injection_tests"), std::string::npos) << self[0];
}

TEST(InjectionProcessInfoTest, RankPrecedence) {
  std::map<std::string, std::string> vars = {{"SLURM_PROCID", "3"}, {"PMI_RANK", "2"}};
  auto env = [&vars](const char* n) -> std::optional<std::string> {
    auto it = vars.find(n);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(RankFromEnv(env), "2");
  vars.emplace("OMPI_COMM_WORLD_RANK", std::string(1, '1'));
  EXPECT_EQ(RankFromEnv(env), "1");
  vars.emplace("RANK", std::string(1, '0'));
  EXPECT_EQ(RankFromEnv(env), "0");
  vars.clear();
  EXPECT_EQ(RankFromEnv(env), "");
}

}  // namespace
}  // namespace cutrace::injection
