// What the trace header says about the traced process: host, pid, ppid, the
// command line with secrets redacted, and the MPI/launcher rank.
//
// Redaction (RedactCommandLine): an argument or environment assignment whose
// name contains TOKEN, KEY, SECRET, PASSWORD or PASSWD (any case) keeps its
// name and loses its value: "--api-key=abc" -> "--api-key=<redacted>",
// "--password hunter2" -> "--password <redacted>", "AWS_SECRET_ACCESS_KEY=x"
// -> "AWS_SECRET_ACCESS_KEY=<redacted>"; a URL's password is removed too
// ("https://u:pw@host" -> "https://u:<redacted>@host"). Over-redacting is
// preferred to leaking.
//
// Pure functions apart from ReadCommandLine/HostName; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "injection/config.h"

namespace cutrace::injection {

inline constexpr std::string_view kRedacted = "<redacted>";

bool LooksSecretName(std::string_view name);
std::vector<std::string> RedactCommandLine(const std::vector<std::string>& args);

// /proc/self/cmdline split at NULs (empty if unreadable).
std::vector<std::string> ReadCommandLine();
// Splits a /proc/PID/cmdline blob (pure, for tests).
std::vector<std::string> SplitCmdline(std::string_view blob);

// RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID: the first that is set, else "".
std::string RankFromEnv(const EnvGetter& env);

std::string HostName();

}  // namespace cutrace::injection
