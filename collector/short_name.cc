// Short kernel names: see short_name.h.
#include "collector/short_name.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace cutrace {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one column wide
constexpr std::string_view kAnonymous = "(anonymous namespace)";
constexpr std::string_view kOperator = "operator";

bool IsIdent(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The index of the bracket that closes the one at `open`, counting (), <>,
// [] and {} together (a demangled name nests them properly); npos if none.
size_t Match(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == '>' || c == ']' || c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

bool EndsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string ShortName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  size_t params_at = std::string::npos;  // where the first elided parameter list starts in `out`
  bool template_next = false;            // after "operator< ": a template argument list
  for (size_t i = 0; i < name.size();) {
    const std::string_view rest = name.substr(i);
    if (rest.substr(0, kAnonymous.size()) == kAnonymous) {
      out += kAnonymous;
      i += kAnonymous.size();
      continue;
    }
    if (rest.substr(0, kOperator.size()) == kOperator && (i == 0 || !IsIdent(name[i - 1])) &&
        (rest.size() == kOperator.size() || !IsIdent(rest[kOperator.size()]))) {
      // `operator()`, `operator<<`, `operator[]`: the symbol is part of the name.
      out += kOperator;
      i += kOperator.size();
      if (name.substr(i, 2) == "()") {
        out += "()";
        i += 2;
      } else {
        while (i < name.size() && name[i] != '\0' && std::strchr("<>=!+-*/%^&|~[],", name[i]))
          out += name[i++];
        // "operator< <int>": the space only keeps the demangled text readable.
        if (name.substr(i, 2) == " <") ++i, template_next = true;
      }
      continue;
    }
    const char c = name[i];
    const bool after_name =
        std::exchange(template_next, false) ||
        (!out.empty() && (IsIdent(out.back()) || out.back() == '>' || out.back() == ')' ||
                          out.back() == ']'));
    if ((c == '<' || c == '(') && after_name) {
      const size_t close = Match(name, i);
      if (close == std::string_view::npos) return std::string(name);
      if (c == '(' && params_at == std::string::npos) params_at = out.size();
      if (close == i + 1) {  // "()" or "<>": nothing to elide
        out += name.substr(i, 2);
      } else {
        out += c;
        out += kEllipsis;
        out += name[close];
      }
      i = close + 1;
      continue;
    }
    out += c;
    ++i;
  }
  if (params_at == std::string::npos) return std::string(name);  // not a signature
  // The return type ("void ", "std::enable_if<…>::type "): everything up to
  // the last space outside brackets before the parameter list.
  size_t cut = 0;
  int depth = 0;
  for (size_t i = 0; i < params_at; ++i) {
    const char c = out[i];
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == ' ' && depth == 0) cut = i + 1;
  }
  out.erase(0, cut);
  for (bool again = true; again;) {
    again = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (EndsWith(out, q)) {
        out.resize(out.size() - q.size());
        again = true;
      }
    }
  }
  return out.empty() ? std::string(name) : out;
}

std::string NameTag(std::string_view full, int digits) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char c : full) h = (h ^ c) * 1099511628211ull;
  static const char kHex[] = "0123456789abcdef";
  std::string tag;
  for (int i = 0; i < digits; ++i) tag += kHex[(h >> (60 - 4 * i)) & 0xF];
  return tag;
}

std::map<std::string, std::string> UniqueShortNames(const std::vector<std::string>& names) {
  std::map<std::string, std::vector<std::string>> by_short;  // short -> its full names
  for (const std::string& full : names) by_short[ShortName(full)].push_back(full);
  std::map<std::string, std::string> out;
  for (auto& [short_name, fulls] : by_short) {
    std::sort(fulls.begin(), fulls.end());
    fulls.erase(std::unique(fulls.begin(), fulls.end()), fulls.end());
    if (fulls.size() == 1) {
      out[fulls[0]] = short_name;
      continue;
    }
    // Four hex digits tell names apart unless two of them share those.
    int digits = 4;
    for (; digits < 16; digits += 4) {
      std::vector<std::string> tags;
      for (const std::string& full : fulls) tags.push_back(NameTag(full, digits));
      std::sort(tags.begin(), tags.end());
      if (std::adjacent_find(tags.begin(), tags.end()) == tags.end()) break;
    }
    for (const std::string& full : fulls) out[full] = short_name + " #" + NameTag(full, digits);
  }
  return out;
}

}  // namespace cutrace
