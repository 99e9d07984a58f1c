// Output helpers shared by every report: the --format option, a plain table
// (aligned columns for terminals, RFC 4180 CSV), a line printer, and
// duration/byte formatting. JSON reports build an nlohmann::json and print it
// with PrintJson().
//
// Text for a terminal leaves through Table::PrintText(), PrintLine() or
// PrintError() only, and all three escape control characters
// (EscapeForTerminal): names, hosts and commands come from trace files,
// which may be hostile, and an escape sequence must not reach the terminal.
// CSV cells go through collector/csv_field.h: text columns (those not marked
// right-aligned, i.e. not numbers) are guarded against formula injection.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "collector/records.h"

namespace cutrace::cli {

enum class Format { kTable, kCsv, kJson };

// Adds `--format table|csv|json` (table by default) to `cmd`.
void AddFormatOption(CLI::App* cmd, Format* format);
// --max-skew DURATION (default 1h) for commands that merge traces.
void AddMaxSkewOption(CLI::App* cmd, std::string* max_skew);
// An option's check that its text is a duration ParseDuration() takes.
CLI::Validator DurationCheck();
// `check` without its description, which --help would print after the
// option's type ("N:POSITIVE").
CLI::Validator Unlabelled(CLI::Validator check);

class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  // Columns marked in `right_aligned` are numbers: aligned right in table
  // form, and never prefixed against formula injection in CSV.
  void SetRightAligned(std::vector<bool> right_aligned);
  // Columns marked in `names` hold kernel names: shown as --names says in
  // table form (display.h ShownNames, unique within the table), and each
  // followed in CSV by its short form ("short_name" after "name",
  // "X_short_name" after "X").
  void SetNameColumns(std::vector<bool> names);
  // Columns marked in `labels` say which row it is (an NVTX range's name,
  // a gap's device and start): in table form they, not the name columns,
  // are kept wide and repeated in every part of a split table (a table
  // without labels so keeps its name columns, else its first); nothing
  // else changes.
  void SetLabelColumns(std::vector<bool> labels);
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  // Aligned columns fitted to display.h's OutputWidth(): while too wide, the
  // widest text column gives up a column (its cells cut in the middle with
  // "…") down to its header's width or 12; a table still too wide (many
  // number columns) is printed as several tables, each repeating the label
  // columns (else the name columns, else the first column) beside as many
  // others as fit; those key columns are as wide in every part.
  void PrintText(std::FILE* out) const;
  void PrintCsv(std::FILE* out) const;
  // Table or CSV by format (JSON is the caller's business).
  void Print(Format format, std::FILE* out) const;

 private:
  // Every cell of the name columns, for their short or shown forms.
  std::vector<std::string> NameCells() const;

  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<bool> names_;
  std::vector<bool> labels_;
  std::vector<std::vector<std::string>> rows_;
};

void PrintJson(const nlohmann::json& json, std::FILE* out);

// {"kernels": N, "memcpys": N, ...}: one key per record kind (kRecordKindNames).
nlohmann::json KindCountsJson(const KindCounts& counts);

// Gives every object of the array `objects` that has a string "name" a
// "short_name" beside it: collector/short_name.h's, unique within the array.
void AddShortNames(nlohmann::json& objects);

// `text` with every byte a terminal could act on made visible: \n, \r and
// \t as those two characters, other C0 controls and DEL as \x1b, C1 controls
// (U+0080..U+009F) as \u009b, and bytes that are not valid UTF-8 as \xff.
// Valid UTF-8 text otherwise passes as is.
std::string EscapeForTerminal(std::string_view text);

// Prints `text` (escaped) and a newline, wrapped at spaces to display.h's
// OutputWidth(): the one way a report's text lines reach a terminal.
void PrintLine(std::FILE* out, std::string_view text);

// A total that saturated (collector/sat_math.h: kSaturated, 2^64 - 1) is
// shown as this in table form; JSON and CSV keep the number 2^64 - 1, which
// no real total reaches (docs/json-reports.md).
inline constexpr const char* kOverflowText = "overflow";

// "1.234 ms", "15.00 us", "812 ns", "414.7 us", "2.500 s" (four significant
// digits): for humans; JSON and CSV keep ns.
std::string FormatDuration(uint64_t ns);
// "53.12 GB/s", "0.005229 GB/s", "4491 GB/s": a rate to four significant
// digits (at most six decimals), as FormatDuration gives times.
std::string FormatRate(double value, const char* unit);
// "+132.083 ms", "+812.250 us", "+75.000123 s": t as an offset from t0 (0
// when t is before it): a point in time, not a length, so to the
// microsecond (the nanosecond below 1 ms), cut down, not rounded: events a
// few microseconds apart read apart, and an offset given back to
// --from/--to keeps the event it was read from. Milliseconds up to 10 s,
// then seconds.
std::string FormatOffset(uint64_t t, uint64_t t0);
// "14:02:00.003": a time on the wall clock (Unix ns), UTC, to the
// millisecond; "-" for 0 (unknown).
std::string FormatWallClock(int64_t realtime_ns);
// "1.50 GiB", "64.0 KiB", "17 B".
std::string FormatBytes(uint64_t bytes);
// Parses "10us", "2ms", "1.5s", "500ns", "250" (ns), "5min", "1h". Returns
// false on junk.
bool ParseDuration(const std::string& text, uint64_t* ns);

// Parses a byte size: "4G", "512M", "64KiB", "100" (bytes); K/M/G/T are
// powers of 1024. Returns false on junk or a size past 2^64.
bool ParseSize(const std::string& text, uint64_t* bytes);

// Prints "cutrace: <message>" on stderr (one line).
void PrintError(const std::string& message);

}  // namespace cutrace::cli
