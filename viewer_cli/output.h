// Output helpers shared by every report: the --format option, a plain table
// (aligned columns for terminals, RFC 4180 CSV), and duration/byte formatting.
// JSON reports build an nlohmann::json and print it with PrintJson().
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace cutrace::cli {

enum class Format { kTable, kCsv, kJson };

// Adds `--format table|csv|json` (table by default) to `cmd`.
void AddFormatOption(CLI::App* cmd, Format* format);

class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  // Columns whose header is in `right_aligned` are numbers: aligned right.
  void SetRightAligned(std::vector<bool> right_aligned);
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  void PrintText(std::FILE* out) const;
  void PrintCsv(std::FILE* out) const;
  // Table or CSV by format (JSON is the caller's business).
  void Print(Format format, std::FILE* out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

void PrintJson(const nlohmann::json& json, std::FILE* out);

// "1.234 ms", "15.0 us", "812 ns", "2.50 s": for humans; JSON and CSV keep ns.
std::string FormatDuration(uint64_t ns);
// "1.50 GiB", "64.0 KiB", "17 B".
std::string FormatBytes(uint64_t bytes);
// Parses "10us", "2ms", "1.5s", "500ns", "250" (ns). Returns false on junk.
bool ParseDuration(const std::string& text, uint64_t* ns);

// Prints "cutrace: <message>" on stderr (one line).
void PrintError(const std::string& message);

}  // namespace cutrace::cli
