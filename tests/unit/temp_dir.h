// A fresh directory for one test, removed with its contents when the test is
// done: the scratch space of every unit test that writes files.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace cutrace::testing {

// A fresh directory under $TMPDIR (or /tmp); path() is "" when none could be
// made (a test checks that before it writes).
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/cutrace-test-XXXXXX";
    path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace cutrace::testing
