// StringInterner: maps strings (kernel names, NVTX messages and domains, API
// names, metric names) to small ids so records carry ids, not strings.
// Ids start at 1 and never change; 0 means "no string".
//
// Threads: every method is thread-safe (one internal mutex). Intern() may be
// called from any thread (the CUPTI buffer thread, NVTX callbacks); it
// allocates only the first time it sees a string. TakeNew() is called by the
// writer thread before it encodes a batch, so every id a batch uses has been
// written to the file before the batch (ids are assigned before records that
// carry them are pushed, so this ordering holds).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cutrace {

struct InternedEntry {
  uint32_t id = 0;
  std::string value;
};

class StringInterner {
 public:
  StringInterner() = default;
  StringInterner(const StringInterner&) = delete;
  StringInterner& operator=(const StringInterner&) = delete;

  // The id of `s`, assigning the next one if `s` is new. The empty string
  // is a string like any other (it gets an id), so that a present-but-empty
  // name is distinguishable from "none".
  uint32_t Intern(std::string_view s);

  // The id of `s` if it was interned, else 0. Never assigns.
  uint32_t Find(std::string_view s) const;

  // The string of `id`, or "" for 0 / unknown ids (a copy: the table may grow).
  std::string Lookup(uint32_t id) const;

  // Strings interned since the previous call, in id order.
  std::vector<InternedEntry> TakeNew();

  // Makes every string new again, so the next TakeNew() returns all of them
  // (used when a new output file starts, e.g. after rotation).
  void MarkAllNew();

  size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex mu_;
  // Strings live in a deque so the map's string_view keys stay valid as it grows.
  std::deque<std::string> strings_;  // strings_[id - 1]
  std::unordered_map<std::string_view, uint32_t, Hash, std::equal_to<>> ids_;
  size_t taken_ = 0;  // strings_[0, taken_) were returned by TakeNew()
};

// The demangled form of a mangled C++ symbol ("_Z..."), or "" when `name` is
// not mangled or does not demangle. Uses abi::__cxa_demangle.
std::string Demangle(std::string_view name);

}  // namespace cutrace
