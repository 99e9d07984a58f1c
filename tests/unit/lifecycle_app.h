// The stand-in CUDA program (injection/testing/lifecycle_app.cc) run the way
// the driver runs a traced program, without a GPU: the real
// libcutrace_injection.so loaded through CUDA_INJECTION64_PATH against the
// stand-in libcupti (injection/testing/fake_libcupti.cc), its output
// captured, and the trace files it left. Shared by the lifecycle and the
// fail-open tests.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/cli_test_util.h"

namespace cutrace::testing {

inline const std::string kBinaryDir = CUTRACE_BINARY_DIR;

struct AppRun {
  int status = -1;  // as waitpid() gives it
  std::string out;
  std::string err;
  std::vector<std::string> traces;  // regular files in the output dir (full paths)
};

struct AppOptions {
  std::vector<std::string> args;           // after the mode
  std::map<std::string, std::string> env;  // added to / replacing the defaults
  mode_t umask = 022;
  rlim_t file_size_limit = RLIM_INFINITY;  // RLIMIT_FSIZE of the program
};

// For SetUp: fails the test unless the program and both libraries are built.
inline void ExpectLifecycleAppBuilt() {
  for (const char* file : {"/bin/injection_lifecycle_app", "/lib/libcutrace_injection.so",
                           "/lib/libcutrace_fake_cupti.so"}) {
    ASSERT_EQ(::access((kBinaryDir + file).c_str(), R_OK), 0) << kBinaryDir + file
                                                              << " is not built";
  }
}

// Runs `injection_lifecycle_app MODE ARGS...` with its trace going to
// `out_dir` and its stdout and stderr to files in `dir`.
inline AppRun RunLifecycleApp(const std::string& dir, const std::string& out_dir,
                              const std::string& mode, const AppOptions& o = {}) {
  std::map<std::string, std::string> vars = {
      {"PATH", "/usr/bin:/bin"},
      {"CUDA_INJECTION64_PATH", kBinaryDir + "/lib/libcutrace_injection.so"},
      {"CUTRACE_CUPTI_PATH", kBinaryDir + "/lib/libcutrace_fake_cupti.so"},
      {"CUTRACE_OUTPUT", out_dir + "/"},
      // Under ASan (scripts/sanitize.sh) the app's leak check at exit would
      // stop the world in a forked child that inherited the allocator's lock
      // mid-use, and hang there; the session it leaks on purpose is not a
      // leak to judge. Ignored by a build without ASan.
      {"ASAN_OPTIONS", "detect_leaks=0"},
  };
  for (const auto& [k, v] : o.env) vars[k] = v;
  std::vector<std::string> strings;
  for (const auto& [k, v] : vars) strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string app = kBinaryDir + "/bin/injection_lifecycle_app";
  std::vector<std::string> argv_strings = {app, mode};
  argv_strings.insert(argv_strings.end(), o.args.begin(), o.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";

  AppRun r;
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::umask(o.umask);
    struct rlimit no_core = {0, 0};  // the crash tests leave no core files behind
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (o.file_size_limit != RLIM_INFINITY) {
      // A write past the limit fails with EFBIG, as a full disk fails one
      // with ENOSPC; SIGXFSZ ignored so the program is not killed by it.
      ::signal(SIGXFSZ, SIG_IGN);
      struct rlimit limit = {o.file_size_limit, o.file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::execve(app.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::waitpid(pid, &r.status, 0);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  if (DIR* d = ::opendir(out_dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      struct stat st;
      const std::string path = out_dir + "/" + e->d_name;
      if (e->d_name[0] != '.' && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        r.traces.push_back(path);
      }
    }
    ::closedir(d);
  }
  return r;
}

}  // namespace cutrace::testing
