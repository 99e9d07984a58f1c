// The `cutrace` command: the process-wide set-up (a SIGBUS handler for
// mapped trace files) around RunCli() (cli_app.h), which builds the CLI from
// the registered subcommands and maps outcomes to exit statuses: 0 ok,
// 1 bad input, 2 usage.
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "collector/trace_reader.h"
#include "interop/export/export_sink.h"
#include "viewer_cli/cli_app.h"

namespace {

// Trace files are memory-mapped (collector/trace_reader.h): one truncated
// while a report reads it raises SIGBUS on the lost pages. That is bad input,
// not a crash: one line naming the file, exit 1. Async-signal-safe: write(),
// unlink() and _exit() only. A SIGBUS anywhere else keeps its default action.
void OnSigbus(int sig, siginfo_t* info, void*) {
  const char* path = cutrace::FileBytes::MappedPathAt(info->si_addr);
  if (path == nullptr) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  auto put = [](const char* text) { static_cast<void>(::write(2, text, std::strlen(text))); };
  put("cutrace: ");
  put(path);
  put(": file shrank while being read\n");
  cutrace::interop::RemoveTemporaryFiles();  // an export or merge under way leaves nothing
  ::_exit(1);
}

void HandleSigbus() {
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  HandleSigbus();
  return cutrace::cli::RunCli(argc, argv);
}
