// Replays a fuzz target's corpus without libFuzzer: every regular file under
// the directories (or the files) named on the command line is fed once to
// LLVMFuzzerTestOneInput. A crash, a sanitizer report or an abort() in the
// target fails the test; an empty corpus fails too (a replay of nothing
// proves nothing).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(argv[i], ec)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.emplace_back(argv[i]);
    } else {
      std::fprintf(stderr, "fuzz_replay: %s: no such file or directory\n", argv[i]);
      return 1;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no corpus files given\n");
    return 1;
  }
  for (const fs::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  // stderr: a target may send stdout to /dev/null (fuzz_reports does).
  std::fprintf(stderr, "fuzz_replay: %zu inputs, no failure\n", files.size());
  return 0;
}
