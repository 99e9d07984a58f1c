// DlCuptiApi: the production CuptiApi, backed by a libcupti loaded with
// dlopen() at InitializeInjection time (never at load time, so a program that
// never touches the GPU never loads CUPTI).
//
// Search order (FindCuptiLibrary): collector/cupti_search.h's, shared with
// `cutrace run` (CUTRACE_CUPTI_PATH, LD_LIBRARY_PATH, $CUDA_HOME, the toolkit
// at /usr/local/cuda, NVIDIA's Python wheels nvidia-cuda-cupti in the
// program's Python environment); then dlopen("libcupti.so.13") lets the
// dynamic loader's cache have a say. The same search names the library for
// NVTX_INJECTION64_PATH, so NVTX and cutrace share one libcupti.
//
// Threads: Load() once, from the initialising thread; the object is then
// immutable and every call is thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/status.h"
#include "injection/cupti/cupti_api.h"

namespace cutrace::injection {

inline constexpr const char* kCuptiSoname = "libcupti.so.13";

// Candidate files from the override, LD_LIBRARY_PATH and the toolkit, in
// search order (pure: for tests; FindCuptiLibrary adds $CUDA_HOME and the
// Python wheels).
std::vector<std::string> CuptiCandidates(std::string_view override_path,
                                         std::string_view ld_library_path);

// The first candidate that exists as a regular file (stat only, no dlopen),
// or nullopt. An override that does not exist is returned anyway, so the
// loader reports it instead of silently loading another library.
std::optional<std::string> FindCuptiLibrary(std::string_view override_path);

// Loads libcupti and resolves its entry points. Errors are one line:
// "cannot load libcupti (...): REASON; set CUTRACE_CUPTI_PATH", or
// "libcupti at PATH lacks SYMBOL".
StatusOr<std::unique_ptr<CuptiApi>> LoadCupti(std::string_view override_path,
                                              std::string* loaded_path);

}  // namespace cutrace::injection
