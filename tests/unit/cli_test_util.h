// What the CLI tests share: a fresh temporary directory per test, the built
// `cutrace` binary (CUTRACE_BINARY_DIR/bin/cutrace), running it with its
// stdout and stderr captured into files of that directory (and its stdout
// read as JSON), and a JSON row checked against the figures a test knows.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/unit/temp_dir.h"

namespace cutrace::testing {

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every key of `want` has `want`'s value in the JSON object `row`; keys of
// `row` that `want` leaves out are not checked. Numbers compare exactly (a
// double known only to a few ulps is checked with EXPECT_DOUBLE_EQ instead).
inline void ExpectFields(const nlohmann::json& row, const nlohmann::json& want) {
  for (auto it = want.begin(); it != want.end(); ++it) {
    EXPECT_EQ(row.contains(it.key()) ? row.at(it.key()) : nlohmann::json(), it.value()) << it.key();
  }
}

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty()) << "no temporary directory";
    binary_ = std::string(CUTRACE_BINARY_DIR) + "/bin/cutrace";
    struct stat st;
    ASSERT_EQ(::stat(binary_.c_str(), &st), 0) << "build the cutrace target first: " << binary_;
  }

  // `cutrace ARGS...`, each argument quoted for the shell.
  CliResult RunCli(const std::vector<std::string>& args) const {
    std::string command = "'" + binary_ + "'";
    for (const std::string& arg : args) command += " '" + arg + "'";
    const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    const int status = std::system((command + " >'" + out + "' 2>'" + err + "'").c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }

  // `cutrace ARGS...` expected to exit with `expect_exit`; its stdout as JSON
  // (discarded where it is none, which fails a test that expects exit 0).
  nlohmann::json RunJson(const std::vector<std::string>& args, int expect_exit = 0) const {
    CliResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, expect_exit) << r.err;
    nlohmann::json parsed = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    if (expect_exit == 0) {
      EXPECT_FALSE(parsed.is_discarded()) << r.out;
    }
    return parsed;
  }

  testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
  std::string binary_;
};

}  // namespace cutrace::testing
