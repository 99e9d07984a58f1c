// libFuzzer target for everything the CLI does with a trace: the input is
// written as a trace file and every report runs on it in every format
// (table, CSV, JSON), then diff of the file with itself, export to Chrome
// JSON, Perfetto and CSV, merge of the file with itself (and a summary of
// the merged file), and the Python package's column stream. It goes through
// the real command dispatch (viewer_cli/cli_app.h) so that it keeps covering
// the commands through any internal refactor. Each command must end with status 0 or 1 (bad input,
// one line on stderr); anything else (2 would mean this target's arguments
// are wrong), a crash, a sanitizer report or a hang is a finding.
//
// Report output goes to /dev/null; files go to a private temporary
// directory made once per process and emptied after every input.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "viewer_cli/cli_app.h"

namespace {

namespace fs = std::filesystem;

// Every command that reads a trace and takes --format table|csv|json.
const char* const kReports[] = {"summary", "kernels", "memcpy",   "gaps",    "overlap",
                                "nvtx",    "api",     "timeline", "diagnose", "metrics", "info"};
const char* const kFormats[] = {"table", "csv", "json"};

// A plain buffer, not a static std::string: the exit handler that removes
// the directory runs after static objects may have been destroyed.
char g_dir[4096];

const char* WorkDir() {
  if (g_dir[0] == '\0') {
    const std::string pattern =
        (fs::temp_directory_path() / "cutrace-fuzz-reports-XXXXXX").string();
    if (pattern.size() >= sizeof g_dir) std::abort();
    pattern.copy(g_dir, pattern.size());
    if (::mkdtemp(g_dir) == nullptr) std::abort();
    // Reports print a lot; only their exit status matters here.
    std::fflush(stdout);
    if (!std::freopen("/dev/null", "w", stdout)) std::abort();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(g_dir, ec);
    });
  }
  return g_dir;
}

void Run(std::vector<std::string> args) {
  args.insert(args.begin(), "cutrace");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  const int rc = cutrace::cli::RunCli(static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  if (rc != 0 && rc != 1) {
    std::string line;
    for (const std::string& a : args) line += a + " ";
    std::fprintf(stderr, "fuzz_reports: exit status %d from: %s\n", rc, line.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path dir = WorkDir();
  const std::string in = (dir / "in.trace").string();
  {
    std::ofstream out(in, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();
  }
  for (const char* report : kReports)
    for (const char* format : kFormats) {
      // summary refuses CSV (several tables are no one CSV): a usage error by design.
      if (std::string_view(report) == "summary" && std::string_view(format) == "csv") continue;
      Run({report, in, "--format", format});
    }
  for (const char* format : kFormats) Run({"diff", in, in, "--format", format});
  Run({"timeline", in, "--width", "20"});
  Run({"timeline", in, "--bins", "1000", "--format", "json"});
  // The Python package's column stream (viewer_cli/cmd_columns.cc), over one
  // file and over two (names shared between files).
  Run({"columns", in});
  Run({"columns", in, in, "--kinds", "kernels,ranges,api_calls"});

  const std::string chrome = (dir / "out.json").string();
  const std::string perfetto = (dir / "out.pftrace").string();
  const std::string csv = (dir / "csv").string();
  const std::string merged = (dir / "merged.trace").string();
  Run({"export", in, "--format", "chrome", "-o", chrome});
  Run({"export", in, "--format", "perfetto", "-o", perfetto});
  Run({"export", in, "--format", "csv", "-o", csv});
  Run({"export", in, in, "--format", "chrome", "-o", (dir / "two.json").string()});
  Run({"merge", in, in, "-o", merged});
  if (fs::exists(merged)) Run({"summary", merged, "--format", "json"});
  // What the exports wrote must import back (or be refused in one line).
  if (fs::exists(chrome)) Run({"import", chrome, "-o", (dir / "back.trace").string()});

  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path() != in) fs::remove_all(entry.path(), ec);
  return 0;
}
