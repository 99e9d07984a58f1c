// See cupti_search.h.
#include "collector/cupti_search.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cutrace {

namespace {

const char* const kToolkitDirs[] = {
    "/usr/local/cuda/targets/x86_64-linux/lib",
    "/usr/local/cuda/extras/CUPTI/lib64",
};
// Where NVIDIA's wheels put libcupti, under a site-packages directory.
const char* const kWheelDirs[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib"};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Parent(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Join(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  return dir.back() == '/' ? dir + std::string(name) : dir + "/" + std::string(name);
}

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The entries of `dir` whose names start with `prefix`, sorted (so the
// search order does not depend on the file system's).
std::vector<std::string> Entries(const std::string& dir, std::string_view prefix) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.substr(0, prefix.size()) == prefix) names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// The site-packages directories of an environment prefix (paths with the
// root, as listed; the prefix without it).
std::vector<std::string> SiteDirs(const std::string& root, const std::string& prefix) {
  std::vector<std::string> out;
  for (const char* lib : {"/lib", "/local/lib"}) {
    const std::string libdir = root + prefix + lib;
    for (const std::string& py : Entries(libdir, "python3"))
      for (const char* site : {"site-packages", "dist-packages"})
        out.push_back(libdir + "/" + py + "/" + site);
  }
  return out;
}

void AddUnique(std::vector<std::string>* list, std::string value) {
  if (value.empty()) return;
  if (std::find(list->begin(), list->end(), value) == list->end())
    list->push_back(std::move(value));
}

// `name` looked up on PATH as execvp would ("" when not found); names with
// a slash are taken as they are.
std::string OnPath(std::string_view name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string_view::npos) return std::string(name);
  const std::string path = Env("PATH");
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t colon = path.find(':', pos);
    if (colon == std::string::npos) colon = path.size();
    const std::string dir = path.substr(pos, colon - pos);
    pos = colon + 1;
    const std::string file = Join(dir.empty() ? "." : dir, name);
    if (::access(file.c_str(), X_OK) == 0 && IsRegularFile(file)) return file;
  }
  return "";
}

std::string Resolved(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

// The libcupti.so.13 paths in the dynamic loader's cache (what ldconfig
// knows, /etc/ld.so.cache): the cache stores each library's path as a
// NUL-terminated string, so those ending in "/libcupti.so.13" are taken.
std::vector<std::string> LdCacheFiles(const std::string& root) {
  std::vector<std::string> out;
  std::FILE* f = std::fopen((root + "/etc/ld.so.cache").c_str(), "rb");
  if (f == nullptr) return out;
  std::string bytes(std::size_t{16} << 20, '\0');  // real caches are well under 1 MiB
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
  std::fclose(f);
  const std::string tail = std::string("/") + kCuptiSonameForSearch;
  for (size_t at = bytes.find(tail + '\0'); at != std::string::npos;
       at = bytes.find(tail + '\0', at + 1)) {
    const size_t begin = bytes.rfind('\0', at);
    const std::string path = bytes.substr(begin == std::string::npos ? 0 : begin + 1,
                                          at + tail.size() - (begin == std::string::npos ? 0 : begin + 1));
    if (!path.empty() && path[0] == '/') AddUnique(&out, root + path);
  }
  return out;
}

// The "home = DIR" line of PREFIX/pyvenv.cfg, or "".
std::string VenvHome(const std::string& prefix) {
  std::FILE* f = std::fopen((prefix + "/pyvenv.cfg").c_str(), "r");
  if (f == nullptr) return "";
  std::string home;
  char line[4096];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const size_t eq = text.find('=');
    if (eq == std::string::npos) continue;
    std::string key = text.substr(0, eq);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    if (key != "home") continue;
    home = text.substr(eq + 1);
    while (!home.empty() && home.front() == ' ') home.erase(0, 1);
  }
  std::fclose(f);
  return home;
}

}  // namespace

CuptiSearch CuptiSearchFromEnvironment(std::string_view self_path, std::string_view interpreter) {
  CuptiSearch s;
  s.override_path = Env("CUTRACE_CUPTI_PATH");
  s.ld_library_path = Env("LD_LIBRARY_PATH");
  s.cuda_home = Env("CUDA_HOME");
  if (s.cuda_home.empty()) s.cuda_home = Env("CUDA_PATH");
  // cutrace installed from its wheel: .../site-packages/cutrace/{bin,lib}/FILE.
  if (!self_path.empty()) {
    const std::string site = Parent(Parent(Parent(std::string(self_path))));
    if (EndsWith(site, "-packages")) AddUnique(&s.site_dirs, site);
  }
  AddUnique(&s.python_prefixes, Env("VIRTUAL_ENV"));
  AddUnique(&s.python_prefixes, Env("CONDA_PREFIX"));
  const size_t slash = interpreter.rfind('/');
  const std::string_view name =
      slash == std::string_view::npos ? interpreter : interpreter.substr(slash + 1);
  const std::string base = name.substr(0, 6) == "python" ? OnPath(interpreter) : std::string();
  if (!base.empty()) {
    // A venv's bin/python is a link to the base interpreter: the venv's
    // prefix is where the link is, the base's where it leads.
    AddUnique(&s.python_prefixes, Parent(Parent(base)));
    // A venv made from another venv's python: its pyvenv.cfg's "home" is
    // that python's bin directory.
    if (std::string home = VenvHome(Parent(Parent(base))); !home.empty())
      AddUnique(&s.python_prefixes, Parent(home));
    if (std::string real = Resolved(base); !real.empty())
      AddUnique(&s.python_prefixes, Parent(Parent(real)));
  }
  if (std::string exe = Resolved("/proc/self/exe"); !exe.empty())
    AddUnique(&s.python_prefixes, Parent(Parent(exe)));
  AddUnique(&s.python_prefixes, "/usr/local");
  AddUnique(&s.python_prefixes, "/usr");
  if (std::string home = Env("HOME"); !home.empty()) AddUnique(&s.python_prefixes, home + "/.local");
  return s;
}

std::vector<std::string> CuptiCandidateFiles(const CuptiSearch& s) {
  std::vector<std::string> out;
  if (!s.override_path.empty()) out.push_back(s.override_path);
  size_t pos = 0;
  while (pos < s.ld_library_path.size()) {
    size_t colon = s.ld_library_path.find(':', pos);
    if (colon == std::string::npos) colon = s.ld_library_path.size();
    const std::string dir = s.ld_library_path.substr(pos, colon - pos);
    pos = colon + 1;
    if (!dir.empty()) out.push_back(Join(s.root + dir, kCuptiSonameForSearch));
  }
  if (!s.cuda_home.empty())
    for (const char* sub : {"lib64", "targets/x86_64-linux/lib", "extras/CUPTI/lib64"})
      out.push_back(Join(Join(s.root + s.cuda_home, sub), kCuptiSonameForSearch));
  if (s.toolkit)
    for (const char* dir : kToolkitDirs) out.push_back(Join(s.root + dir, kCuptiSonameForSearch));
  if (!s.chosen.empty()) out.push_back(s.root + s.chosen);
  std::vector<std::string> sites;
  for (const std::string& site : s.site_dirs) AddUnique(&sites, s.root + site);
  for (const std::string& prefix : s.python_prefixes)
    for (std::string& site : SiteDirs(s.root, prefix)) AddUnique(&sites, std::move(site));
  for (const std::string& site : sites)
    for (const char* wheel : kWheelDirs)
      out.push_back(Join(Join(site, wheel), kCuptiSonameForSearch));
  if (s.ld_cache)
    for (std::string& path : LdCacheFiles(s.root)) out.push_back(std::move(path));
  return out;
}

std::string FindCuptiFile(const CuptiSearch& s) {
  if (!s.override_path.empty()) return s.override_path;
  for (const std::string& path : CuptiCandidateFiles(s)) {
    if (!IsRegularFile(path)) continue;
    const std::string real = Resolved(path);
    return real.empty() ? path : real;
  }
  return "";
}

std::string DescribeCuptiSearch(const CuptiSearch& s) {
  std::string line = "LD_LIBRARY_PATH";
  if (s.ld_library_path.empty()) line += " (unset)";
  if (!s.cuda_home.empty()) line += ", " + s.cuda_home + " ($CUDA_HOME)";
  if (s.toolkit) line += ", /usr/local/cuda";
  line += ", Python wheels (nvidia/cu13/lib, nvidia/cuda_cupti/lib) in ";
  std::vector<std::string> places = s.site_dirs;
  for (const std::string& prefix : s.python_prefixes) places.push_back(prefix);
  for (size_t i = 0; i < places.size(); ++i) line += (i ? ", " : "") + places[i];
  if (places.empty()) line += "no Python environment";
  if (s.ld_cache) line += ", ldconfig's cache";
  return line;
}

}  // namespace cutrace
