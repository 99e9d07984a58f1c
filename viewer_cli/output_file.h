// `-o PATH` for every command that writes a file (export, import, merge):
//
//   -o -      the bytes go to stdout (the command's own report lines then go
//             to stderr, so a pipe gets only the data);
//   -o PATH   a new file (mode 0600), written under a temporary name beside
//             PATH and renamed to it once whole (interop/export/export_sink.h
//             FileSink): an existing file or symlink is refused, unless
//             --force, which replaces it then, never earlier (a failed
//             command, or an output that is also an input, loses nothing),
//             never a directory, never through a link.
//
// Checked before any input is read, so a mistake costs nothing. Main thread.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "interop/export/export_sink.h"

namespace cutrace::cli {

struct OutputOption {
  std::string path;
  bool force = false;
  bool ToStdout() const { return path == "-"; }
  // Where the command's own lines go: stderr when the data goes to stdout.
  std::FILE* Messages() const { return ToStdout() ? stderr : stdout; }
};

// Adds the required `-o,--output PATH` (help: `what`) and `--force`.
void AddOutputOptions(CLI::App* cmd, OutputOption* output, const std::string& what);

// Before the work: refuses a directory, and an existing PATH without
// --force. False after printing the one-line error.
bool PrepareOutput(const OutputOption& output);

// Writes `bytes` to stdout whole. False after printing the error.
bool WriteStdout(const std::string& bytes);

// An exporter's sink for `-o -`.
class StdoutSink : public interop::ByteSink {
 public:
  Status Write(std::string_view bytes) override {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
      return Status::Error("cannot write to stdout");
    return Status::Ok();
  }
  Status Finish() {
    return std::fflush(stdout) == 0 ? Status::Ok() : Status::Error("cannot write to stdout");
  }
};

}  // namespace cutrace::cli
