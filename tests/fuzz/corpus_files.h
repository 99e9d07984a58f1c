// What the corpus generators (make_trace_reader_corpus, make_hostile_traces)
// share: their one argument, the directory to write into, and writing one
// file there.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

namespace cutrace::testing {

// The directory `argv` names; "" after a usage line on stderr when there is
// not exactly one argument.
inline std::string CorpusDir(int argc, char** argv, const char* program) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", program);
    return {};
  }
  return argv[1];
}

// Writes `bytes` as DIR/NAME; false, after a line on stderr, when it cannot.
inline bool WriteCorpusFile(const char* program, const std::string& dir, const std::string& name,
                            const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::fprintf(stderr, "%s: cannot write %s/%s\n", program, dir.c_str(), name.c_str());
  return static_cast<bool>(out);
}

}  // namespace cutrace::testing
