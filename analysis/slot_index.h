// SlotIndex: groups records by a name across files without touching strings
// per record. Each file's ids (name ids, domain, depth...) are resolved to a
// text key once per distinct id; records then find their group ("slot") with
// one array lookup. Groups with the same text in different files, or under
// different ids of one file, share a slot: reports group by what the user
// reads, not by the id a file happened to use.
//
// Files are taken either one after another (BeginFile() before each) or
// interleaved, batch by batch (UseFile(i) before each batch of file i: each
// file keeps its own id cache).
//
// Memory is bounded by distinct names, never by records. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cutrace::analysis {

// Up to three small ids of one file that together name a group.
struct SlotKey {
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t c = 0;
  friend bool operator==(const SlotKey&, const SlotKey&) = default;
};

class SlotIndex {
 public:
  // Starts resolving ids of another file: ids of different files never mix.
  void BeginFile() {
    files_.resize(1);
    files_[0].dense.clear();
    files_[0].sparse.clear();
    current_ = 0;
  }
  // Resolves ids of file `file` (0-based) from now on, keeping every file's
  // cache.
  void UseFile(size_t file) {
    if (file >= files_.size()) files_.resize(file + 1);
    current_ = file;
  }

  // The slot of `key` in the current file; `make_text` (called once per
  // distinct key per file) returns the text that identifies the group.
  template <typename MakeText>
  uint32_t Slot(SlotKey key, MakeText&& make_text) {
    if (current_ >= files_.size()) BeginFile();
    PerFile& file = files_[current_];
    std::vector<uint32_t>& dense = file.dense;
    if (key.b == 0 && key.c == 0 && key.a < kDenseLimit) {
      if (key.a < dense.size() && dense[key.a] != 0) return dense[key.a] - 1;
      uint32_t slot = SlotOfText(make_text());
      if (key.a >= dense.size()) dense.resize(key.a + 1, 0);
      dense[key.a] = slot + 1;
      return slot;
    }
    auto it = file.sparse.find(key);
    if (it != file.sparse.end()) return it->second;
    uint32_t slot = SlotOfText(make_text());
    file.sparse.emplace(key, slot);
    return slot;
  }

  size_t size() const { return texts_.size(); }
  const std::string& text(uint32_t slot) const { return texts_[slot]; }

 private:
  // Interned ids are small and dense; larger ones fall back to the hash map
  // so a hostile id cannot make us allocate gigabytes.
  static constexpr uint32_t kDenseLimit = 1u << 20;

  struct KeyHash {
    size_t operator()(const SlotKey& k) const {
      uint64_t h = (uint64_t{k.a} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{k.b} << 21) ^
                   (uint64_t{k.c} * 0xC2B2AE3D27D4EB4Full);
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };

  uint32_t SlotOfText(std::string text) {
    auto [it, inserted] = by_text_.emplace(text, static_cast<uint32_t>(texts_.size()));
    if (inserted) texts_.push_back(std::move(text));
    return it->second;
  }

  struct PerFile {
    std::vector<uint32_t> dense;  // id -> slot + 1; 0 = not seen in this file
    std::unordered_map<SlotKey, uint32_t, KeyHash> sparse;
  };
  std::vector<PerFile> files_;
  size_t current_ = SIZE_MAX;  // index into files_
  std::unordered_map<std::string, uint32_t> by_text_;
  std::vector<std::string> texts_;
};

}  // namespace cutrace::analysis
