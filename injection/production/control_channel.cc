// ControlChannel (control_channel.h): the signals, files and commands an
// operator uses to reach a running production session.
#include "injection/production/control_channel.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "injection/log.h"
#include "injection/modes.h"
#include "injection/process_state.h"

namespace cutrace::injection {
namespace {

void OnTriggerSignal(int sig) {
  if (sig == ControlSignals().trigger_signal.load()) ControlSignals().dump_requests.fetch_add(1);
  if (sig == ControlSignals().capture_signal.load()) ControlSignals().capture_requests.fetch_add(1);
}

void OnExitStatus(int status, void*) {
  ControlSignals().exit_status.store(status);
  ControlSignals().exit_seen.store(true);
}

}  // namespace

std::string SignalName(int sig) {
  if (sig == SIGUSR1) return "SIGUSR1";
  if (sig == SIGUSR2) return "SIGUSR2";
  if (sig == SIGHUP) return "SIGHUP";
  return "signal " + std::to_string(sig);
}

std::optional<ControlCommand> ParseControlCommand(const std::string& text) {
  std::string c = text;
  while (!c.empty() && (c.back() == '\n' || c.back() == ' ' || c.back() == '\r')) c.pop_back();
  if (c == "dump") return ControlCommand{ControlCommand::Kind::kDump, std::nullopt};
  if (c == "summary") return ControlCommand{ControlCommand::Kind::kSummary, std::nullopt};
  if (c.rfind("capture", 0) == 0) {
    std::string arg = c.substr(7);
    while (!arg.empty() && arg.front() == ' ') arg.erase(0, 1);
    if (arg.empty()) return ControlCommand{ControlCommand::Kind::kCapture, std::nullopt};
    auto d = ParseDurationNs(arg);
    if (!d || *d == 0 || *d > 3600'000'000'000ull) return std::nullopt;
    return ControlCommand{ControlCommand::Kind::kCapture, *d};
  }
  return std::nullopt;
}

void ControlChannel::InstallSignals(int* trigger_signal, int* capture_signal) {
  for (int* sig : {trigger_signal, capture_signal}) {
    if (*sig == 0) continue;
    struct sigaction current;
    if (sigaction(*sig, nullptr, &current) != 0) continue;
    // cutrace's own handler (an earlier session: a forked child's) is not the program's.
    const bool program_handler =
        (current.sa_flags & SA_SIGINFO)
            ? current.sa_sigaction != nullptr
            : (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN &&
               current.sa_handler != &OnTriggerSignal);
    if (program_handler) {
      Log(LogLevel::kWarn, "the program handles %s itself: cutrace's trigger on it is off (set "
          "CUTRACE_TRIGGER_SIGNAL or CUTRACE_CAPTURE_SIGNAL to another signal)",
          SignalName(*sig).c_str());
      *sig = 0;
      continue;
    }
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = &OnTriggerSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(*sig, &action, nullptr) != 0) *sig = 0;
  }
  ControlSignals().trigger_signal.store(*trigger_signal);
  ControlSignals().capture_signal.store(*capture_signal);
}

int ControlChannel::TakeDumpSignals() { return ControlSignals().dump_requests.exchange(0); }
int ControlChannel::TakeCaptureSignals() { return ControlSignals().capture_requests.exchange(0); }

void ControlChannel::RegisterExitStatus() { ::on_exit(&OnExitStatus, nullptr); }
bool ControlChannel::ExitSeen() { return ControlSignals().exit_seen.load(); }
int ControlChannel::ExitStatus() { return ControlSignals().exit_status.load(); }

void ControlChannel::Poll(const std::function<void()>& trigger,
                          const std::function<bool(const std::string&)>& command) const {
  if (!trigger_file_.empty()) {
    struct stat st;
    if (::stat(trigger_file_.c_str(), &st) == 0) {
      ::unlink(trigger_file_.c_str());
      trigger();
    }
  }
  if (control_dir_.empty()) return;
  const std::string path = control_dir_ + "/" + std::to_string(pid_) + ".ctl";
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  ::unlink(path.c_str());
  std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
  // One command per line.
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    if (!command(line)) Log(LogLevel::kWarn, "%s: unknown command \"%s\"", path.c_str(), line.c_str());
  }
}

}  // namespace cutrace::injection
