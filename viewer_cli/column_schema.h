// The column types of ColumnTables (column_tables.h), private to
// column_tables.cc: a column's numpy type, how its codes get their texts,
// and its blocks of rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace cutrace::cli::columns {

enum class Dtype : uint8_t { kI8, kU8, kU4, kI4, kU2, kU1, kB1 };

inline size_t ItemSize(Dtype d) {
  switch (d) {
    case Dtype::kI8:
    case Dtype::kU8: return 8;
    case Dtype::kU4:
    case Dtype::kI4: return 4;
    case Dtype::kU2: return 2;
    case Dtype::kU1:
    case Dtype::kB1: return 1;
  }
  return 1;
}

// numpy's type strings (little-endian: the machines cutrace runs on).
inline const char* DtypeText(Dtype d) {
  switch (d) {
    case Dtype::kI8: return "<i8";
    case Dtype::kU8: return "<u8";
    case Dtype::kU4: return "<u4";
    case Dtype::kI4: return "<i4";
    case Dtype::kU2: return "<u2";
    case Dtype::kU1: return "|u1";
    case Dtype::kB1: return "|b1";
  }
  return "|u1";
}

// How a column's int32 codes get their texts.
enum class Names : uint8_t {
  kNone,    // not a category
  kString,  // a string id of the file, resolved at EndFile (StringTable::Display)
  kDomain,  // an NVTX domain id ("default" for 0), resolved at EndFile
  kFixed,   // an enum's value, with a fixed list of texts
};

struct Column {
  std::string name;
  Dtype dtype = Dtype::kI8;
  Names names = Names::kNone;
  std::vector<std::string> categories;
  std::unordered_map<std::string, int32_t> index;  // text -> code (kString, kDomain)
  // One block per batch, never moved or zero-filled: a column of millions of
  // rows that grew by doubling spent most of its time copying itself.
  struct Block {
    std::unique_ptr<uint8_t[]> data;
    size_t rows = 0;
  };
  std::vector<Block> blocks;

  int32_t Code(const std::string& text) {
    auto [it, added] = index.try_emplace(text, static_cast<int32_t>(categories.size()));
    if (added) categories.push_back(text);
    return it->second;
  }
};

}  // namespace cutrace::cli::columns
