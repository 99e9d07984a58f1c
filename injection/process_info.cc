#include "injection/process_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace cutrace::injection {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "scheme://user:password@host..." -> password removed.
std::string RedactUrlPassword(const std::string& arg) {
  size_t scheme = arg.find("://");
  if (scheme == std::string::npos) return arg;
  size_t start = scheme + 3;
  size_t at = arg.find('@', start);
  size_t slash = arg.find('/', start);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return arg;
  size_t colon = arg.find(':', start);
  if (colon == std::string::npos || colon > at) return arg;
  return arg.substr(0, colon + 1) + std::string(kRedacted) + arg.substr(at);
}

bool IsOption(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

// An identifier-like name: what may stand left of '=' in an environment assignment.
bool IsEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

bool LooksSecretName(std::string_view name) {
  std::string u = Upper(name);
  for (const char* word : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD"}) {
    if (u.find(word) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> RedactCommandLine(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  bool redact_next = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (redact_next && !IsOption(arg)) {
      out.emplace_back(kRedacted);
      redact_next = false;
      continue;
    }
    redact_next = false;
    size_t eq = arg.find('=');
    if (IsOption(arg)) {
      std::string_view name = std::string_view(arg).substr(0, eq);
      if (LooksSecretName(name)) {
        if (eq != std::string::npos) {
          out.push_back(arg.substr(0, eq + 1) + std::string(kRedacted));
        } else {
          out.push_back(arg);
          redact_next = true;  // "--token VALUE"
        }
        continue;
      }
    } else if (eq != std::string::npos && i > 0) {
      std::string_view name = std::string_view(arg).substr(0, eq);
      if (IsEnvName(name) && LooksSecretName(name)) {
        out.push_back(arg.substr(0, eq + 1) + std::string(kRedacted));
        continue;
      }
    }
    out.push_back(RedactUrlPassword(arg));
  }
  return out;
}

std::vector<std::string> SplitCmdline(std::string_view blob) {
  std::vector<std::string> args;
  size_t pos = 0;
  while (pos < blob.size()) {
    size_t nul = blob.find('\0', pos);
    if (nul == std::string_view::npos) nul = blob.size();
    args.emplace_back(blob.substr(pos, nul - pos));
    pos = nul + 1;
  }
  return args;
}

std::vector<std::string> ReadCommandLine() {
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string blob;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    blob.append(buf, static_cast<size_t>(n));
    if (blob.size() > (1u << 20)) break;  // a megabyte of arguments is plenty
  }
  ::close(fd);
  return SplitCmdline(blob);
}

std::string RankFromEnv(const EnvGetter& env) {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (auto v = env(name); v && !v->empty()) return *v;
  }
  return "";
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

}  // namespace cutrace::injection
