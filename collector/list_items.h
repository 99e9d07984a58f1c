// ForEachListItem: the items of a comma-separated list ("kernel, memcpy",
// "speed-of-light,dram__bytes_read.sum"), for every option that takes one.
// Spaces and tabs around an item are trimmed and empty items skipped. `fn`
// gets each item as a std::string_view into `list` and returns false to stop;
// ForEachListItem returns false if it stopped early. Pure; any thread.
#pragma once

#include <string_view>

namespace cutrace {

template <typename Fn>
bool ForEachListItem(std::string_view list, Fn&& fn) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty() && !fn(item)) return false;
  }
  return true;
}

}  // namespace cutrace
