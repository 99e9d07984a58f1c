// Kinds and its parser: see trace_kinds.h.
#include "collector/trace_kinds.h"

#include <cctype>

#include "collector/list_items.h"

namespace cutrace {

std::vector<std::string> Kinds::Names() const {
  std::vector<std::string> names;
  if (kernel) names.push_back("kernel");
  if (memcpy) names.push_back("memcpy");
  if (memset) names.push_back("memset");
  if (nvtx) names.push_back("nvtx");
  if (runtime_api) names.push_back("runtime");
  if (driver_api) names.push_back("driver");
  if (sync) names.push_back("sync");
  if (overhead) names.push_back("overhead");
  return names;
}

Kinds& Kinds::operator|=(const Kinds& other) {
  kernel |= other.kernel;
  memcpy |= other.memcpy;
  memset |= other.memset;
  nvtx |= other.nvtx;
  runtime_api |= other.runtime_api;
  driver_api |= other.driver_api;
  sync |= other.sync;
  overhead |= other.overhead;
  return *this;
}

std::optional<Kinds> ParseKinds(std::string_view text, std::string* error) {
  Kinds kinds = Kinds::None();
  bool any = false;
  const bool known = ForEachListItem(text, [&](std::string_view item) {
    std::string token(item);
    for (char& c : token) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    any = true;
    if (token == "all") {
      kinds = Kinds{};
      kinds.sync = true;
    } else if (token == "default") {
      // What an unset CUTRACE_KINDS records; "default,sync" adds sync records.
      kinds |= Kinds{};
    } else if (token == "none") {
      // Explicitly nothing: the library stays loaded but enables no kind.
    } else if (token == "kernel" || token == "kernels") {
      kinds.kernel = true;
    } else if (token == "memcpy") {
      kinds.memcpy = true;
    } else if (token == "memset") {
      kinds.memset = true;
    } else if (token == "nvtx") {
      kinds.nvtx = true;
    } else if (token == "api") {
      kinds.runtime_api = kinds.driver_api = true;
    } else if (token == "runtime") {
      kinds.runtime_api = true;
    } else if (token == "driver") {
      kinds.driver_api = true;
    } else if (token == "sync") {
      kinds.sync = true;
    } else if (token == "overhead") {
      kinds.overhead = true;
    } else {
      if (error) {
        *error = "unknown kind \"" + token +
                 "\" (known: kernel, memcpy, memset, nvtx, api, runtime, driver, sync, overhead, default, all, none)";
      }
      return false;
    }
    return true;
  });
  if (!known) return std::nullopt;
  if (!any) {
    if (error) *error = "empty list";
    return std::nullopt;
  }
  return kinds;
}

}  // namespace cutrace
