// ColumnTables: the events of one or more trace files as columns of
// fixed-size numbers, one table per record kind, for `cutrace columns`
// (cmd_columns.cc; its header describes the stream and docs/python.md the
// columns). Names (kernels, NVTX ranges and domains, API calls) become
// categories: int32 codes into one list of texts per column, shared by all
// files; the small enums (copy kind, memory kinds, range kind, API domain,
// sync kind) are categories with fixed lists.
//
// Use: for each file BeginFile(), Add() every batch of its pass, EndFile()
// with the pass's TraceData (its strings); then Describe() and Write().
// Single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/records.h"
#include "collector/trace_data.h"

namespace cutrace::cli {

// The `file` column is uint16.
inline constexpr size_t kMaxColumnFiles = 65535;

class ColumnTables {
 public:
  // `kinds`: bit k set for RecordKind k's table.
  explicit ColumnTables(uint32_t kinds);
  ~ColumnTables();
  ColumnTables(const ColumnTables&) = delete;
  ColumnTables& operator=(const ColumnTables&) = delete;

  void BeginFile(uint16_t file);
  void Add(const RecordBatch& batch);
  // Resolves the name columns of the file's rows through its strings.
  void EndFile(const TraceData& trace);

  // {"tables": [{"name", "rows", "columns": [{"name", "dtype"}], "categories"}]}
  nlohmann::json Describe() const;
  // Every table's columns' bytes, in Describe()'s order.
  void Write(std::FILE* out) const;

  struct Table;

 private:
  uint32_t kinds_;
  uint16_t file_ = 0;
  std::vector<std::unique_ptr<Table>> tables_;  // by RecordKind; null when not asked for
};

}  // namespace cutrace::cli
