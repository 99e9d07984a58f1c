// The files of a run, chunks included: see run_chunks.h.
#include "viewer_cli/run_chunks.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

namespace cutrace::cli {
namespace {

// Whether `path` exists as a regular file modified at or after `since_s`.
bool FreshFile(const std::string& path, int64_t since_s) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since_s;
}

}  // namespace

std::vector<RunOutput> FindRunOutputs(const std::vector<std::string>& manifest_paths,
                                      int64_t started_s) {
  // File systems keep whole seconds at worst: a second's slack.
  const int64_t since = started_s - 1;
  std::vector<RunOutput> outputs;
  for (const std::string& first : manifest_paths) {
    RunOutput out;
    out.first = first;
    std::vector<std::pair<uint32_t, std::string>> found;
    if (FreshFile(first, since)) found.emplace_back(0, first);
    // ChunkPath(): "dir/stem.N.ext" for "dir/stem.ext", "dir/name.N" without
    // an extension (or for a name that starts with its only dot).
    const size_t slash = first.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : first.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? first : first.substr(slash + 1);
    const size_t dot = base.rfind('.');
    const bool has_ext = dot != std::string::npos && dot != 0;
    const std::string stem = (has_ext ? base.substr(0, dot) : base) + ".";
    const std::string ext = has_ext ? base.substr(dot) : "";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() <= stem.size() + ext.size() || name.compare(0, stem.size(), stem) != 0 ||
          name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
        continue;
      const std::string digits = name.substr(stem.size(), name.size() - stem.size() - ext.size());
      if (digits.empty() || digits.size() > 9 || digits[0] == '0' ||
          !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
        continue;
      const std::string path = slash == std::string::npos ? name : dir + name;
      if (FreshFile(path, since)) found.emplace_back(static_cast<uint32_t>(std::stoul(digits)), path);
    }
    std::sort(found.begin(), found.end());
    for (auto& [index, path] : found) {
      out.last_index = index;
      out.files.push_back(std::move(path));
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::string WroteLine(const RunOutput& out) {
  if (out.files.size() == 1) return "wrote " + out.files.front();
  return fmt::format("wrote {} chunks: {} … {}", out.files.size(), out.files.front(),
                     out.files.back());
}

}  // namespace cutrace::cli
