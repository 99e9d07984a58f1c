// ForEachListItem: the items of a comma-separated list ("kernel, memcpy",
// "speed-of-light,dram__bytes_read.sum"), for every option that takes one.
// White space around an item (spaces, tabs, newlines: a variable set from a
// file or a here-document may end in one) is trimmed and empty items
// skipped. `fn` gets each item as a std::string_view into `list` and returns
// false to stop; ForEachListItem returns false if it stopped early. Pure;
// any thread.
#pragma once

#include <string_view>

namespace cutrace {

constexpr bool IsListSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

template <typename Fn>
bool ForEachListItem(std::string_view list, Fn&& fn) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    while (!item.empty() && IsListSpace(item.front())) item.remove_prefix(1);
    while (!item.empty() && IsListSpace(item.back())) item.remove_suffix(1);
    if (!item.empty() && !fn(item)) return false;
  }
  return true;
}

}  // namespace cutrace
