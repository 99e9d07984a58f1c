#include "viewer_cli/output.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/core.h>

namespace cutrace::cli {

void AddFormatOption(CLI::App* cmd, Format* format) {
  static const std::map<std::string, Format> kFormats = {
      {"table", Format::kTable}, {"csv", Format::kCsv}, {"json", Format::kJson}};
  cmd->add_option("--format", *format, "Output format: table, csv or json")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case))
      ->default_str("table");
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), right_(headers_.size(), false) {}

void Table::SetRightAligned(std::vector<bool> right_aligned) {
  right_aligned.resize(headers_.size(), false);
  right_ = std::move(right_aligned);
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::PrintText(std::FILE* out) const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      size_t pad = width[c] - row[c].size();
      if (right_[c]) line.append(pad, ' ');
      line += row[c];
      if (!right_[c] && c + 1 < row.size()) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print(out, "{}\n", line);
  };
  print_row(headers_);
  std::vector<std::string> rule;
  for (size_t c = 0; c < headers_.size(); ++c) rule.emplace_back(width[c], '-');
  print_row(rule);
  for (const auto& row : rows_) print_row(row);
}

static std::string CsvCell(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char ch : cell) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  quoted += '"';
  return quoted;
}

void Table::PrintCsv(std::FILE* out) const {
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += ',';
      line += CsvCell(row[c]);
    }
    fmt::print(out, "{}\n", line);
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

void Table::Print(Format format, std::FILE* out) const {
  if (format == Format::kCsv)
    PrintCsv(out);
  else
    PrintText(out);
}

void PrintJson(const nlohmann::json& json, std::FILE* out) {
  // Replace invalid UTF-8 (names come from hostile files) instead of throwing.
  fmt::print(out, "{}\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string FormatDuration(uint64_t ns) {
  double v = static_cast<double>(ns);
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.3f} us", v / 1e3);
  if (ns < 1000000000) return fmt::format("{:.3f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string FormatBytes(uint64_t bytes) {
  double v = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1ull << 20)) return fmt::format("{:.1f} KiB", v / 1024);
  if (bytes < (1ull << 30)) return fmt::format("{:.1f} MiB", v / (1 << 20));
  return fmt::format("{:.2f} GiB", v / (1ull << 30));
}

bool ParseDuration(const std::string& text, uint64_t* ns) {
  if (text.empty()) return false;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0) return false;
  std::string unit(end);
  double scale;
  if (unit.empty() || unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else
    return false;
  double result = value * scale;
  if (result > 9.2e18) return false;
  *ns = static_cast<uint64_t>(std::llround(result));
  return true;
}

void PrintError(const std::string& message) { fmt::print(stderr, "cutrace: {}\n", message); }

}  // namespace cutrace::cli
