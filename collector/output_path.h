// Output path patterns (CUTRACE_OUTPUT, `cutrace run --output`), and the
// check that the directory a trace goes into is safe to create files in.
//
// Patterns (CUTRACE_OUTPUT, `cutrace run --output`):
//   %h host name, %p process id, %q{VAR} the environment variable VAR,
//   %% a literal '%'.
// A directory (an existing one, or a path ending in '/') gets the default
// file name kDefaultTraceName inside it. Pure apart from one stat() of the
// result; call from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "collector/status.h"

namespace cutrace {

inline constexpr std::string_view kDefaultTraceName = "cutrace-%h-%p.trace";

// Looks an environment variable up; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv).
EnvLookup ProcessEnv();

// Errors: "unknown %X in output pattern P", "unterminated %q{ in output
// pattern P", "environment variable VAR is not set (output pattern P)",
// "empty output pattern".
StatusOr<std::string> ExpandOutputPattern(std::string_view pattern_or_dir, std::string_view host,
                                          int64_t pid, const EnvLookup& env);

// Whether the directory that will hold `file_path` is one to create a trace
// in: it must belong to the calling user (effective uid) or to root, and must
// not be writable by other users unless it has the sticky bit (like /tmp).
// Anyone who owns or may rename entries in the directory could swap the
// trace for a link or read it before its mode is set; O_EXCL|O_NOFOLLOW
// guard the file itself, this guards where it is made. A directory that does
// not exist or cannot be examined passes: creating the file then fails with
// the precise reason. Errors (one line):
//   "refusing to write a trace into DIR: it is owned by uid N, not by you (uid M)"
//   "refusing to write a trace into DIR: it is writable by others and has no sticky bit"
Status CheckOutputDirectory(const std::string& file_path);

}  // namespace cutrace
