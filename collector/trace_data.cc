// StringTable (declared in collector/trace_data.h).
#include "collector/trace_data.h"

namespace cutrace {

void StringTable::Set(uint32_t id, std::string value, std::string demangled) {
  Entry& e = entries_[id];
  e.value = std::move(value);
  e.demangled = std::move(demangled);
}

std::string_view StringTable::Raw(uint32_t id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return {};
  return it->second.value;
}

std::string StringTable::Display(uint32_t id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return "<unknown:" + std::to_string(id) + ">";
  return it->second.demangled.empty() ? it->second.value : it->second.demangled;
}

}  // namespace cutrace
