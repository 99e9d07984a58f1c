// What every report command shares: loading several trace files, rendering a
// report for each file and for the aggregate, and printing the result in the
// chosen format (docs/json-reports.md):
//
//   one file     the report itself.
//   several      table: a section per file ("== PATH ==") then "== all N files ==";
//                JSON: the aggregate's keys at the top level plus
//                "files": [{"path": ..., <the same keys for that file>}];
//                CSV: each table once, with a leading "file" column
//                (the path, or "all" for the aggregate).
//
// Errors: a file that cannot be read prints "cutrace: PATH: REASON" and the
// command exits 1; a truncated file prints a warning and reports what was
// readable. Called on the main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/trace_set.h"
#include "collector/trace_data.h"
#include "viewer_cli/output.h"

namespace cutrace::cli {

class Cells;

// A column of a TableSection: its header in table form and in CSV (the JSON
// key), what it holds: numbers (right-aligned; never formula-guarded in
// CSV), text, or kernel names (text shown as --names says); and whether it
// is the row's label (output.h SetLabelColumns: an NVTX range's or API
// call's name, a gap's device and start), which a table split into parts
// repeats beside every part.
struct TableColumn {
  enum Holds : uint8_t { kNumbers, kText, kNames };
  std::string human;
  std::string key;
  Holds holds = kNumbers;
  bool label = false;
};

// One table of a report, as plain cells (so several files' tables can be
// joined for CSV before printing).
struct TableSection {
  std::string title;  // printed above the table in table form; "" for none
  std::vector<std::string> headers;
  std::vector<bool> right;  // per column: numbers align right
  std::vector<bool> names;  // per column: kernel names (output.h SetNameColumns)
  std::vector<bool> labels;  // per column: the row's label (output.h SetLabelColumns)
  std::vector<std::vector<std::string>> rows;
  std::string empty_note;  // printed instead of an empty table in table form

  // Adds columns at the end, or before column `at`, with the headers `c`
  // shows (headers, right and names kept in step).
  void AddColumns(const Cells& c, std::initializer_list<TableColumn> columns);
  void InsertColumns(size_t at, const Cells& c, std::initializer_list<TableColumn> columns);
  // The table as output.h prints it.
  Table ToTable() const;
};

// A report rendered for one set of traces. Only what `format` needs is filled.
struct Rendered {
  nlohmann::json json = nlohmann::json::object();  // kJson
  std::vector<std::string> lines;                   // kTable: text before the tables
  std::vector<TableSection> tables;                 // kTable and kCsv
};

using RenderFn = std::function<Rendered(analysis::TraceSet traces, Format format)>;

struct LoadedTraces {
  std::vector<TraceData> traces;
  std::vector<const TraceData*> all;  // pointers into `traces`, in argument order
};

// Prints why `path` could not be opened as a trace ("cutrace: PATH: REASON");
// a Chrome/Kineto JSON (or .json.gz) gets the `cutrace import` line to run
// instead. The one place every command reports an unreadable trace.
void PrintOpenError(const std::string& path, const std::string& message);

// Loads every path. On the first unreadable file prints "cutrace: PATH:
// REASON" and returns false. Truncated files load with a warning on stderr.
bool LoadTraces(const std::vector<std::string>& paths, LoadedTraces* out);

// Loads, renders (per file and aggregate) and prints. Returns the exit status.
// The chunks of one run (analysis/rank_imbalance.h RanksOf()) are one
// trace: rendered together in chunk order as one section ("FIRST (+N
// chunks)"; JSON: "path" and "chunks"), and a set that is one run prints as
// one trace, with no sections.
int RunReport(const std::vector<std::string>& paths, Format format, const RenderFn& render);

// Prints already-loaded traces (RunReport without the loading); for tests.
void PrintReport(const LoadedTraces& loaded, Format format, const RenderFn& render,
                 std::FILE* out);

// Cell helpers: human units in table form, raw integers in CSV.
class Cells {
 public:
  explicit Cells(Format format) : human_(format != Format::kCsv) {}
  bool human() const { return human_; }
  // The column header: human text in table form, the JSON key in CSV.
  std::string Header(const char* human_text, const char* key) const {
    return human_ ? human_text : key;
  }
  std::string Duration(uint64_t ns) const;
  std::string Duration(double ns) const;
  std::string Bytes(uint64_t bytes) const;
  std::string Count(uint64_t n) const;
  std::string Percent(double pct) const;  // "12.3%" in table form, "12.345" in CSV
  std::string Real(double value, int decimals) const;
  // A cell with no value: "-" in table form, empty in CSV.
  std::string None() const { return human_ ? "-" : ""; }

 private:
  bool human_;
};

// Whether some trace of the set says (its header's enabled kinds) that it
// recorded NVTX ranges but no API records, so its ranges have no GPU
// projection: continuous mode's default (injection/modes.h). Traces that do
// not list their kinds are not judged.
bool RangesWithoutProjection(analysis::TraceSet traces);
inline constexpr const char* kNoProjectionNote =
    "no GPU projection: the trace has no API records (continuous mode leaves them out unless "
    "CUTRACE_KINDS names them)";

// Kernel launches CUPTI did not time because they were counted (every
// launch counted, analysis/kernel_metrics.h CountedLaunchesOf()): device
// busy, idle, gaps and timelines leave them out. Adds a line saying so
// (table) or "counted_untimed" (JSON) when the set has any.
void AddUntimedCountedNote(analysis::TraceSet traces, Format format, Rendered* r);

// Shortens a long name for table form only, keeping its start and its end
// around a "...": the end of a template name tells as much as its start.
std::string Shorten(const std::string& text, size_t max_chars);

}  // namespace cutrace::cli
