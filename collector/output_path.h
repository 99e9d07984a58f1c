// Output path patterns (CUTRACE_OUTPUT, `cutrace run --output`):
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

}  // namespace cutrace
