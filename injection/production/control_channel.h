// ControlChannel: how an operator reaches a running production session —
// the trigger and capture signals (CUTRACE_TRIGGER_SIGNAL,
// CUTRACE_CAPTURE_SIGNAL), the trigger file (CUTRACE_TRIGGER_FILE), the
// control directory's <pid>.ctl commands (CUTRACE_CONTROL_DIR: "dump",
// "summary", "capture [DURATION]"), and the process's exit status (on_exit),
// which decides whether the flight recorder dumps at the end. It only
// receives and parses; ProductionController acts on what it hands over.
//
// Signals: the handlers only count into atomics (async-signal-safe); the
// control thread takes the counts. A program's own handler for a signal is
// left in place, and that trigger is then off.
//
// Threads: InstallSignals() on the starting thread, before the control
// thread exists; TakeDumpSignals/TakeCaptureSignals/Poll/RegisterExitStatus
// on the control thread; ExitStatus() from Stop() after that thread joined.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cutrace::injection {

// "SIGUSR1", "SIGUSR2", "SIGHUP", else "signal N" (dump reasons, warnings).
std::string SignalName(int sig);

// One control-file command.
struct ControlCommand {
  enum class Kind { kDump, kSummary, kCapture };
  Kind kind = Kind::kDump;
  std::optional<uint64_t> capture_ns;  // kCapture with a duration given
};
// Parses "dump", "summary", "capture", "capture 2s" (trailing spaces and
// line ends ignored; a capture lasts more than 0 and at most an hour);
// nullopt for anything else.
std::optional<ControlCommand> ParseControlCommand(const std::string& text);

class ControlChannel {
 public:
  ControlChannel(std::string trigger_file, std::string control_dir, pid_t pid)
      : trigger_file_(std::move(trigger_file)), control_dir_(std::move(control_dir)), pid_(pid) {}

  // Installs cutrace's handler on each non-zero signal; one the program
  // handles itself, or that cannot be installed, is set to 0 (with a
  // warning for the former).
  static void InstallSignals(int* trigger_signal, int* capture_signal);
  // Trigger and capture signals since the last call (the counts are reset).
  static int TakeDumpSignals();
  static int TakeCaptureSignals();

  // Once, from the control thread: registered after the lifecycle's atexit
  // handler, so it runs before it (handlers run in reverse order).
  static void RegisterExitStatus();
  // Whether exit() ran, and its status.
  static bool ExitSeen();
  static int ExitStatus();

  // Reads the trigger file (removed: one dump each time it appears) and
  // the control file (removed, then each line handed to `command`, which
  // says whether it knew the command; unknown ones are warned about).
  void Poll(const std::function<void()>& trigger, const std::function<bool(const std::string&)>& command) const;

 private:
  std::string trigger_file_;
  std::string control_dir_;
  pid_t pid_;
};

}  // namespace cutrace::injection
