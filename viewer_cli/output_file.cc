// -o and --force for every writer: see output_file.h.
#include "viewer_cli/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "viewer_cli/output.h"

namespace cutrace::cli {

void AddOutputOptions(CLI::App* cmd, OutputOption* output, const std::string& what) {
  cmd->add_option("-o,--output", output->path,
                  what + "; - for stdout; an existing file is kept unless --force")
      ->type_name("PATH")
      ->required();
  cmd->add_flag("--force", output->force, "Replace an existing output file");
}

bool PrepareOutput(const OutputOption& output) {
  if (output.ToStdout()) return true;
  struct stat st;
  if (::lstat(output.path.c_str(), &st) != 0) return true;  // nothing there
  if (S_ISDIR(st.st_mode)) {
    PrintError(output.path + " is a directory: choose a file for -o");
    return false;
  }
  if (!output.force) {
    PrintError(output.path + (S_ISLNK(st.st_mode) ? " is a symlink" : " exists") +
               ": cutrace never overwrites without --force; remove it, choose another -o, or "
               "add --force");
    return false;
  }
  // --force: the file is replaced when the new one is whole (FileSink).
  return true;
}

bool WriteStdout(const std::string& bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
      std::fflush(stdout) != 0) {
    PrintError(std::string("cannot write to stdout: ") + std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace cutrace::cli
