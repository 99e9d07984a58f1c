// Where libcupti.so.13 is looked for: one search shared by the injected
// library (injection/cupti/cupti_loader.cc, which dlopens it) and `cutrace
// run` (viewer_cli/cmd_run.cc, which points NVTX_INJECTION64_PATH at the same
// file), so that NVTX and cutrace load one libcupti. CUDA-free: file names
// and directory listings only, nothing is loaded here.
//
// In order:
//   1. CUTRACE_CUPTI_PATH (taken as is, existing or not);
//   2. libcupti.so.13 in each LD_LIBRARY_PATH directory;
//   3. $CUDA_HOME (else $CUDA_PATH): lib64, targets/x86_64-linux/lib,
//      extras/CUPTI/lib64;
//   4. the toolkit at /usr/local/cuda: targets/x86_64-linux/lib, extras/CUPTI/lib64;
//   5. NVIDIA's Python wheels (nvidia-cuda-cupti, which PyTorch's CUDA wheels
//      install): nvidia/cu13/lib (CUDA 13 wheels) and nvidia/cuda_cupti/lib
//      (older layout) under the site-packages/dist-packages directories of:
//      the environment cutrace itself is installed in (its binary or library
//      at .../site-packages/cutrace/{bin,lib}/), $VIRTUAL_ENV, $CONDA_PREFIX,
//      the program's interpreter (`cutrace run -- python3 ...`: python3 on
//      PATH, as found and resolved, and a venv's base from its pyvenv.cfg),
//      the running executable's prefix (inside
//      a Python process, the interpreter's), /usr/local and /usr, and the
//      user site ($HOME/.local);
//   6. ldconfig's cache (/etc/ld.so.cache), so that `cutrace run` can name
//      that file too; the library's dlopen of the bare soname would find it.
// The first that exists is the one.
//
// Pure functions of a CuptiSearch (tests build one over a fake tree with
// `root`); CuptiSearchFromEnvironment() reads the environment. Any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cutrace {

inline constexpr const char* kCuptiSonameForSearch = "libcupti.so.13";

struct CuptiSearch {
  std::string override_path;    // CUTRACE_CUPTI_PATH
  std::string ld_library_path;  // LD_LIBRARY_PATH
  std::string cuda_home;        // CUDA_HOME, else CUDA_PATH
  bool toolkit = true;          // step 4
  // Step 4b: a libcupti another part of cutrace already chose (the library
  // takes NVTX_INJECTION64_PATH, which `cutrace run` set from this search
  // with the program's interpreter in view), when it names a libcupti.
  std::string chosen;
  // Step 5: site-packages directories known outright, then environment
  // prefixes whose lib/python3*/{site,dist}-packages and lib/python3/dist-packages
  // are listed (and local/lib/python3*/dist-packages, Debian's pip layout).
  std::vector<std::string> site_dirs;
  std::vector<std::string> python_prefixes;
  bool ld_cache = true;  // step 6
  // Prepended to every path looked at (tests: a fake tree); "" in production.
  std::string root;
};

// `self_path`: the running cutrace binary or library (its site-packages is
// searched first among the wheels); `interpreter`: the program cutrace run
// starts (searched when its name starts with "python"); either may be "".
CuptiSearch CuptiSearchFromEnvironment(std::string_view self_path, std::string_view interpreter);

// Candidate files in search order (directories listed, so not pure of the
// file system). With a root, the paths include it.
std::vector<std::string> CuptiCandidateFiles(const CuptiSearch& search);

// The first candidate that is a regular file, resolved (realpath); the
// override is returned even when it does not exist (so the loader reports
// it); "" when there is none.
std::string FindCuptiFile(const CuptiSearch& search);

// One line naming where the search looked, for "not found" messages:
// "CUTRACE_CUPTI_PATH (unset), LD_LIBRARY_PATH (3 directories), /usr/local/cuda,
// Python wheels nvidia/{cu13,cuda_cupti}/lib in /venv/lib/python3.12/site-packages, ..."
std::string DescribeCuptiSearch(const CuptiSearch& search);

}  // namespace cutrace
