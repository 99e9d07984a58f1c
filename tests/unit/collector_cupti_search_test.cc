// The libcupti search (collector/cupti_search.h) over a fake file tree: the
// toolkit first, then NVIDIA's Python wheels in the CUDA 13 layout
// (nvidia/cu13/lib) and the older one (nvidia/cuda_cupti/lib), found from a
// venv, from the interpreter's prefix and from cutrace's own site-packages;
// and the one line that says where it looked.
#include "collector/cupti_search.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace cutrace {
namespace {

namespace fs = std::filesystem;

class CuptiSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cutrace-cupti-search-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  // Creates root/PATH (a regular file) and returns root/PATH.
  std::string Touch(const std::string& path) {
    const fs::path full = fs::path(root_) / path.substr(1);
    fs::create_directories(full.parent_path());
    std::ofstream(full) << "x";
    return full.string();
  }

  CuptiSearch Search() const {
    CuptiSearch s;
    s.root = root_;
    s.ld_cache = false;
    return s;
  }

  std::string root_;
};

TEST_F(CuptiSearchTest, NothingThereFindsNothing) {
  CuptiSearch s = Search();
  s.python_prefixes = {"/usr", "/venv"};
  EXPECT_EQ(FindCuptiFile(s), "");
}

TEST_F(CuptiSearchTest, CudaThirteenWheelInAVenv) {
  const std::string wheel = Touch("/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  CuptiSearch s = Search();
  s.python_prefixes = {"/venv"};
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(wheel).string());
}

TEST_F(CuptiSearchTest, OlderWheelLayoutInDistPackages) {
  // Ubuntu's system Python with `pip install --break-system-packages`.
  const std::string wheel =
      Touch("/usr/local/lib/python3.12/dist-packages/nvidia/cuda_cupti/lib/libcupti.so.13");
  CuptiSearch s = Search();
  s.python_prefixes = {"/usr/local", "/usr"};
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(wheel).string());
  // Debian's pip layout, reached from the /usr prefix as well.
  CuptiSearch from_usr = Search();
  from_usr.python_prefixes = {"/usr"};
  EXPECT_EQ(FindCuptiFile(from_usr), fs::canonical(wheel).string());
}

TEST_F(CuptiSearchTest, OrderToolkitThenOwnSiteThenPrefixes) {
  const std::string toolkit = Touch("/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13");
  const std::string own = Touch("/env/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  const std::string venv = Touch("/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcupti.so.13");
  const std::string old = Touch("/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13");
  CuptiSearch s = Search();
  s.site_dirs = {"/env/lib/python3.12/site-packages"};
  s.python_prefixes = {"/venv"};
  const auto candidates = CuptiCandidateFiles(s);
  auto at = [&](const std::string& path) {
    return std::find(candidates.begin(), candidates.end(), path) - candidates.begin();
  };
  ASSERT_LT(at(toolkit), static_cast<long>(candidates.size()));
  EXPECT_LT(at(toolkit), at(own));
  EXPECT_LT(at(own), at(venv));
  EXPECT_LT(at(venv), at(old));  // cu13 before cuda_cupti within one site-packages
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(toolkit).string());
  s.toolkit = false;  // the toolkit hidden
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(own).string());
}

TEST_F(CuptiSearchTest, LdLibraryPathAndCudaHomeComeFirst) {
  const std::string ld = Touch("/opt/ld/libcupti.so.13");
  const std::string home = Touch("/opt/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13");
  Touch("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  CuptiSearch s = Search();
  s.cuda_home = "/opt/cuda-13.0";
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(home).string());
  s.ld_library_path = "/nowhere::/opt/ld";
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(ld).string());
  s.override_path = "/my/own/libcupti.so.13";  // taken as is, even where absent
  EXPECT_EQ(FindCuptiFile(s), "/my/own/libcupti.so.13");
}

TEST_F(CuptiSearchTest, ChosenFileAfterTheToolkitBeforeTheWheels) {
  const std::string chosen = Touch("/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  const std::string other = Touch("/usr/lib/python3/dist-packages/nvidia/cu13/lib/libcupti.so.13");
  CuptiSearch s = Search();
  s.python_prefixes = {"/usr"};
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(other).string());
  s.chosen = "/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13";
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(chosen).string());
}

TEST_F(CuptiSearchTest, VenvOfAVenvFindsTheBaseVenvsWheels) {
  // /work/venv made by /opt/venv/bin/python3: its pyvenv.cfg says home = /opt/venv/bin.
  const fs::path cfg = fs::path(root_) / "work/venv/pyvenv.cfg";
  fs::create_directories(cfg.parent_path() / "bin");
  std::ofstream(cfg) << "home = " << root_ << "/opt/venv/bin\ninclude-system-site-packages = true\n";
  const std::string python = (cfg.parent_path() / "bin/python3").string();
  std::ofstream(python) << "#!/bin/sh\n";
  fs::permissions(python, fs::perms::owner_all);
  const CuptiSearch s = CuptiSearchFromEnvironment("", python);
  EXPECT_NE(std::find(s.python_prefixes.begin(), s.python_prefixes.end(), root_ + "/opt/venv"),
            s.python_prefixes.end());
  EXPECT_NE(std::find(s.python_prefixes.begin(), s.python_prefixes.end(), root_ + "/work/venv"),
            s.python_prefixes.end());
}

TEST_F(CuptiSearchTest, LoaderCacheIsTheLastResort) {
  // ld.so.cache stores each path as a NUL-terminated string.
  const std::string lib = Touch("/usr/lib/x86_64-linux-gnu/libcupti.so.13");
  const fs::path cache = fs::path(root_) / "etc/ld.so.cache";
  fs::create_directories(cache.parent_path());
  std::ofstream(cache, std::ios::binary)
      << std::string("glibc-ld.so.cache1.1\0libcupti.so.13\0/usr/lib/x86_64-linux-gnu/libcupti.so.13\0"
                     "libz.so.1\0/usr/lib/x86_64-linux-gnu/libz.so.1\0", 97);
  CuptiSearch s = Search();
  EXPECT_EQ(FindCuptiFile(s), "");
  s.ld_cache = true;
  EXPECT_EQ(FindCuptiFile(s), fs::canonical(lib).string());
}

TEST_F(CuptiSearchTest, OwnSitePackagesFromTheInstalledBinary) {
  ::setenv("VIRTUAL_ENV", "/some/venv", 1);
  const CuptiSearch s = CuptiSearchFromEnvironment(
      "/env/lib/python3.12/site-packages/cutrace/bin/cutrace", "no-python-here");
  ::unsetenv("VIRTUAL_ENV");
  ASSERT_FALSE(s.site_dirs.empty());
  EXPECT_EQ(s.site_dirs[0], "/env/lib/python3.12/site-packages");
  ASSERT_FALSE(s.python_prefixes.empty());
  EXPECT_EQ(s.python_prefixes[0], "/some/venv");
  // A build tree's binary is no site-packages.
  EXPECT_TRUE(CuptiSearchFromEnvironment("/work/build/bin/cutrace", "").site_dirs.empty());
}

TEST_F(CuptiSearchTest, NotFoundLineNamesWhereItLooked) {
  CuptiSearch s = Search();
  s.cuda_home = "/opt/cuda";
  s.site_dirs = {"/env/lib/python3.12/site-packages"};
  s.python_prefixes = {"/venv", "/usr"};
  s.ld_cache = true;
  const std::string line = DescribeCuptiSearch(s);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  for (const char* part : {"LD_LIBRARY_PATH (unset)", "/opt/cuda ($CUDA_HOME)", "/usr/local/cuda",
                           "nvidia/cu13/lib", "nvidia/cuda_cupti/lib",
                           "/env/lib/python3.12/site-packages", "/venv", "ldconfig"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " in: " << line;
}

}  // namespace
}  // namespace cutrace
