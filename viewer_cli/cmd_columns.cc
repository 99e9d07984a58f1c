// `cutrace columns FILE... [--kinds LIST]`: every event of the files as
// columns of fixed-size numbers on stdout, for the Python package
// (python/cutrace/_columns.py), which reads each column straight into a numpy
// array: no text per event, no Python object per row. Not listed in
// `cutrace --help` (a format between two parts of cutrace, not for people).
//
// The stream: the line "cutrace-columns 1", one line of JSON describing the
// tables, then each table's columns' bytes, table after table, column after
// column, in the order the JSON lists them (native little-endian). The JSON:
//   {"files": [PATH...],
//    "tables": [{"name": "kernels", "rows": N,
//                "columns": [{"name": "start_ns", "dtype": "<i8"}, ...],
//                "categories": {"name": [TEXT...], ...}}, ...]}
// A column with categories holds int32 codes into its list. Times are the
// trace's nanoseconds; duration_ns is end - start (0 for an inverted record,
// as the reports count it: analysis/trace_set.h SafeEnd). `file` is the
// index of the row's file in "files".
//
// Files are read one pass each (collector/trace_pass.h); the columns are
// kept in memory until every file is read, since each column's length must
// be known before its bytes. Errors are every report's (report_common.h):
// one line, exit 1; a truncated file is a warning on stderr.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "analysis/trace_set.h"
#include "collector/trace_pass.h"
#include "collector/trace_reader.h"
#include "viewer_cli/column_tables.h"
#include "viewer_cli/command_registry.h"
#include "viewer_cli/output.h"
#include "viewer_cli/report_common.h"

namespace cutrace::cli::cmd_columns {
namespace {

struct Options {
  std::vector<std::string> files;
  std::string kinds = "kernels,memcpys,memsets,ranges,api_calls,syncs";
};

// The kinds asked for, as RecordKind bits; false with a message for a word
// that names no kind.
bool ParseKinds(const std::string& text, uint32_t* bits, std::string* error) {
  *bits = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string_view word(text.data() + pos, comma - pos);
    bool found = false;
    for (size_t k = 0; k < kRecordKinds; ++k) {
      if (kRecordKindNames[k] == word) {
        *bits |= 1u << k;
        found = true;
      }
    }
    if (!found && !word.empty()) {
      *error = fmt::format("--kinds: '{}' is not one of kernels, memcpys, memsets, ranges, "
                           "api_calls, syncs", word);
      return false;
    }
    pos = comma + 1;
  }
  return true;
}

int Run(const Options& options) {
  uint32_t kinds = 0;
  std::string error;
  if (!ParseKinds(options.kinds, &kinds, &error)) {
    PrintError(error);
    return 2;
  }
  if (options.files.size() > kMaxColumnFiles) {
    PrintError(fmt::format("at most {} files at once", kMaxColumnFiles));
    return 1;
  }
  ColumnTables tables(kinds);
  for (size_t f = 0; f < options.files.size(); ++f) {
    const std::string& path = options.files[f];
    StatusOr<std::unique_ptr<FileBytes>> bytes = FileBytes::Open(path);
    if (!bytes.ok()) {
      PrintOpenError(path, bytes.status().message());
      return 1;
    }
    TraceData info;
    StatusOr<std::unique_ptr<TracePass>> pass = TracePass::Start((*bytes)->bytes(), path, &info);
    if (!pass.ok()) {
      PrintOpenError(path, pass.status().message());
      return 1;
    }
    tables.BeginFile(static_cast<uint16_t>(f));
    RecordBatch batch;
    while ((*pass)->Next(&batch)) {
      tables.Add(batch);
      batch.clear();
    }
    (*pass)->Finish();
    // Names are resolved once the file's strings are all read: a batch may
    // come before the strings it names.
    tables.EndFile(info);
    if (info.read.truncated)
      PrintError(fmt::format("{}: warning: file truncated ({} bytes after the last complete "
                             "packet lost); reporting the readable part",
                             path, info.read.lost_bytes));
  }
  nlohmann::json head = tables.Describe();
  head["files"] = options.files;
  std::fputs("cutrace-columns 1\n", stdout);
  // Names from files may be any bytes: what is not UTF-8 is replaced rather
  // than the whole stream refused.
  const std::string line = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  tables.Write(stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    PrintError("cannot write the columns to stdout");
    return 1;
  }
  return 0;
}

void AddOptions(CLI::App* cmd, Options* options) {
  cmd->description("Every event as binary columns, for the Python package (python/cutrace)");
  cmd->group("");  // not in --help: a format between two parts of cutrace
  cmd->add_option("files", options->files, "Trace files")->required();
  cmd->add_option("--kinds", options->kinds,
                  "Which tables: kernels,memcpys,memsets,ranges,api_calls,syncs");
}

const CommandRegistration kRegistration("columns", 1000, AddOptions, Run);

}  // namespace
}  // namespace cutrace::cli::cmd_columns
