// See output_path.h.
#include "collector/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace cutrace {

namespace {

StatusOr<std::string> Expand(std::string_view pattern, std::string_view whole,
                             std::string_view host, int64_t pid, const EnvLookup& env) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= pattern.size()) {
      return Status::Error("lone % at the end of output pattern " + std::string(whole));
    }
    const char spec = pattern[++i];
    switch (spec) {
      case '%':
        out.push_back('%');
        break;
      case 'h':
        out.append(host);
        break;
      case 'p':
        out.append(std::to_string(pid));
        break;
      case 'q': {
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{') {
          return Status::Error("expected %q{VAR} in output pattern " + std::string(whole));
        }
        const size_t close = pattern.find('}', i + 2);
        if (close == std::string_view::npos) {
          return Status::Error("unterminated %q{ in output pattern " + std::string(whole));
        }
        const std::string name(pattern.substr(i + 2, close - i - 2));
        if (name.empty()) {
          return Status::Error("empty %q{} in output pattern " + std::string(whole));
        }
        std::optional<std::string> value = env ? env(name) : std::nullopt;
        if (!value) {
          return Status::Error("environment variable " + name + " is not set (output pattern " +
                               std::string(whole) + ")");
        }
        out.append(*value);
        i = close;
        break;
      }
      default:
        return Status::Error(std::string("unknown %") + spec + " in output pattern " +
                             std::string(whole));
    }
  }
  return out;
}

}  // namespace

Status CheckOutputDirectory(const std::string& file_path) {
  const size_t slash = file_path.rfind('/');
  // "/" chosen here rather than assigned after: GCC 12 -O3 warns -Wrestrict
  // on `dir = "/"` (a false positive of its inlined std::string code).
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0                 ? "/"
                                                       : file_path.substr(0, slash);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Status::Ok();
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return Status::Error("refusing to write a trace into " + dir + ": it is owned by uid " +
                         std::to_string(st.st_uid) + ", not by you (uid " + std::to_string(me) +
                         ")");
  }
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return Status::Error("refusing to write a trace into " + dir +
                         ": it is writable by others and has no sticky bit");
  }
  return Status::Ok();
}

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

StatusOr<std::string> ExpandOutputPattern(std::string_view pattern_or_dir, std::string_view host,
                                          int64_t pid, const EnvLookup& env) {
  if (pattern_or_dir.empty()) return Status::Error("empty output pattern");
  StatusOr<std::string> path = Expand(pattern_or_dir, pattern_or_dir, host, pid, env);
  if (!path.ok()) return path;
  std::string result = std::move(path).value();
  struct stat st;
  const bool is_dir =
      result.back() == '/' || (::stat(result.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
  if (is_dir) {
    if (result.back() != '/') result.push_back('/');
    StatusOr<std::string> name = Expand(kDefaultTraceName, kDefaultTraceName, host, pid, env);
    if (!name.ok()) return name;
    result += name.value();
  }
  return result;
}

}  // namespace cutrace
