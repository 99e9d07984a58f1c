// --comm-pattern: see comm_options.h.
#include "viewer_cli/comm_options.h"

#include <string>

namespace cutrace::cli {

void AddCommOption(CLI::App* cmd, std::shared_ptr<const analysis::CommClassifier>* out) {
  cmd->add_option_function<std::string>(
         "--comm-pattern",
         [out](const std::string& text) {
           auto made = analysis::CommClassifier::WithPattern(text);
           if (made.ok()) *out = std::move(made).value();
         },
         "Kernels whose name matches this regex are communication too, beside "
         "NCCL/RCCL (ncclKernel*, ncclDevKernel*) and NVSHMEM (nvshmem*)")
      ->check(CLI::Validator(
          [](std::string& text) {
            auto made = analysis::CommClassifier::WithPattern(text);
            return made.ok() ? std::string() : made.status().message();
          },
          ""))
      ->type_name("REGEX");
}

}  // namespace cutrace::cli
