// The whole `cutrace` command line as a function: builds the CLI11 app from
// the registered subcommands (command_registry.h), parses argv, runs the
// chosen command and returns its exit status: 0 ok, 1 bad input, 2 usage.
// main.cc calls it once; tests/fuzz/fuzz_reports.cc calls it many times in
// one process, so it keeps no state between calls beyond what the options
// set (the input cap, set again on every call).
//
// Main thread only.
#pragma once

namespace cutrace::cli {

int RunCli(int argc, const char* const* argv);

}  // namespace cutrace::cli
