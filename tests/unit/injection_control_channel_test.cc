// ControlChannel (injection/production/control_channel.h): the control
// file's command grammar, and the files it reads and removes.
#include "injection/production/control_channel.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace cutrace::injection {
namespace {

TEST(ControlChannelTest, ParsesTheThreeCommands) {
  auto dump = ParseControlCommand("dump\n");
  ASSERT_TRUE(dump);
  EXPECT_EQ(dump->kind, ControlCommand::Kind::kDump);
  auto summary = ParseControlCommand("summary \r\n");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->kind, ControlCommand::Kind::kSummary);
  auto capture = ParseControlCommand("capture");
  ASSERT_TRUE(capture);
  EXPECT_EQ(capture->kind, ControlCommand::Kind::kCapture);
  EXPECT_FALSE(capture->capture_ns);  // the configured length
  auto timed = ParseControlCommand("capture  2s");
  ASSERT_TRUE(timed);
  EXPECT_EQ(timed->capture_ns, 2'000'000'000ull);
}

TEST(ControlChannelTest, RefusesUnknownCommandsAndCapturesOfNoneOrOverAnHour) {
  for (const char* refused : {"reboot", " dump", "capture forever", "capture 0s", "capture 3601s"}) {
    EXPECT_FALSE(ParseControlCommand(refused)) << refused;
  }
  EXPECT_TRUE(ParseControlCommand("capture 3600s"));
}

TEST(ControlChannelTest, NamesTheTriggerSignals) {
  EXPECT_EQ(SignalName(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(SignalName(SIGUSR2), "SIGUSR2");
  EXPECT_EQ(SignalName(SIGHUP), "SIGHUP");
  EXPECT_EQ(SignalName(SIGWINCH), "signal " + std::to_string(SIGWINCH));
}

TEST(ControlChannelTest, PollTakesTheTriggerFileAndEachLineOfTheControlFileOnce) {
  char dir_template[] = "/tmp/cutrace-ctl-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string trigger = dir + "/dump-now";
  const std::string control = dir + "/4242.ctl";
  std::ofstream(trigger) << "";
  std::ofstream(control) << "dump\n\nsummary\n";
  ControlChannel channel(trigger, dir, 4242);
  int triggers = 0;
  std::vector<std::string> lines;
  auto poll = [&] {
    channel.Poll([&] { ++triggers; }, [&](const std::string& line) {
      lines.push_back(line);
      return true;
    });
  };
  poll();
  EXPECT_EQ(triggers, 1);
  EXPECT_EQ(lines, (std::vector<std::string>{"dump", "summary"}));
  struct stat st;
  EXPECT_NE(::stat(trigger.c_str(), &st), 0);  // both files removed
  EXPECT_NE(::stat(control.c_str(), &st), 0);
  poll();  // nothing new
  EXPECT_EQ(triggers, 1);
  EXPECT_EQ(lines.size(), 2u);
  ::rmdir(dir.c_str());
}

void ProgramHandler(int) {}

TEST(ControlChannelTest, ASignalTheProgramHandlesItselfIsLeftToTheProgram) {
  struct sigaction mine = {};
  mine.sa_handler = &ProgramHandler;
  struct sigaction old = {};
  ASSERT_EQ(::sigaction(SIGUSR1, &mine, &old), 0);
  int trigger = SIGUSR1;
  int capture = 0;
  ::testing::internal::CaptureStderr();
  ControlChannel::InstallSignals(&trigger, &capture);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(trigger, 0);  // the trigger is off
  EXPECT_NE(said.find("the program handles SIGUSR1 itself"), std::string::npos) << said;
  struct sigaction now = {};
  ASSERT_EQ(::sigaction(SIGUSR1, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, &ProgramHandler);
  ::sigaction(SIGUSR1, &old, nullptr);
}

TEST(ControlChannelTest, TriggerAndCaptureSignalsAreCountedAndTakenOnce) {
  int trigger = SIGUSR2;
  int capture = SIGHUP;
  ControlChannel::InstallSignals(&trigger, &capture);
  ASSERT_EQ(trigger, SIGUSR2);
  ASSERT_EQ(capture, SIGHUP);
  static_cast<void>(ControlChannel::TakeDumpSignals());
  static_cast<void>(ControlChannel::TakeCaptureSignals());
  ASSERT_EQ(::raise(SIGUSR2), 0);  // the default action would end this test
  ASSERT_EQ(::raise(SIGUSR2), 0);
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_EQ(ControlChannel::TakeDumpSignals(), 2);
  EXPECT_EQ(ControlChannel::TakeDumpSignals(), 0);
  EXPECT_EQ(ControlChannel::TakeCaptureSignals(), 1);
  EXPECT_EQ(ControlChannel::TakeCaptureSignals(), 0);
  ::signal(SIGUSR2, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
}

}  // namespace
}  // namespace cutrace::injection
