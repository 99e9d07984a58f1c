#include "viewer_cli/output.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include <fmt/core.h>

#include "collector/csv_field.h"
#include "collector/sat_math.h"
#include "collector/short_name.h"
#include "viewer_cli/display.h"
#include "viewer_cli/option_words.h"

namespace cutrace::cli {

void AddFormatOption(CLI::App* cmd, Format* format) {
  EnumWords<Format>(cmd->add_option("--format", *format, "Output format"),
                    {{"table", Format::kTable}, {"csv", Format::kCsv}, {"json", Format::kJson}})
      ->default_str("table");
}

CLI::Validator DurationCheck() {
  return CLI::Validator(
      [](std::string& text) {
        uint64_t ns;
        return ParseDuration(text, &ns) ? std::string() : "not a duration: " + text;
      },
      "");  // no ":DURATION" after the option's type in --help
}

CLI::Validator Unlabelled(CLI::Validator check) {
  check.description("");
  return check;
}

void AddMaxSkewOption(CLI::App* cmd, std::string* max_skew) {
  cmd->add_option("--max-skew", *max_skew,
                  "Refuse inputs whose time ranges lie further apart than this (1h, 30min, 90s); "
                  "inputs that do not overlap at all get a warning")
      ->check(DurationCheck())
      ->type_name("T")
      ->default_str("1h");
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)),
      right_(headers_.size(), false),
      names_(headers_.size(), false),
      labels_(headers_.size(), false) {}

void Table::SetNameColumns(std::vector<bool> names) {
  names.resize(headers_.size(), false);
  names_ = std::move(names);
}

void Table::SetLabelColumns(std::vector<bool> labels) {
  labels.resize(headers_.size(), false);
  labels_ = std::move(labels);
}

void Table::SetRightAligned(std::vector<bool> right_aligned) {
  right_aligned.resize(headers_.size(), false);
  right_ = std::move(right_aligned);
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::vector<std::string> Table::NameCells() const {
  std::vector<std::string> names;
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c)
      if (names_[c]) names.push_back(row[c]);
  return names;
}

void Table::PrintCsv(std::FILE* out) const {
  const std::map<std::string, std::string> short_names = UniqueShortNames(NameCells());
  auto print_row = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += ',';
      AppendCsvField(line, row[c], right_[c] ? CsvKind::kNumber : CsvKind::kText);
      if (!names_[c]) continue;
      line += ',';
      if (header) {
        AppendCsvField(line, row[c] == "name" ? "short_name" : row[c] + "_short_name",
                       CsvKind::kText);
      } else {
        auto it = short_names.find(row[c]);
        AppendCsvField(line, it == short_names.end() ? row[c] : it->second, CsvKind::kText);
      }
    }
    fmt::print(out, "{}\n", line);
  };
  print_row(headers_, true);
  for (const auto& row : rows_) print_row(row, false);
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

nlohmann::json KindCountsJson(const KindCounts& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t k = 0; k < kRecordKinds; ++k)
    j[std::string(kRecordKindNames[k])] = counts.of(static_cast<RecordKind>(k));
  return j;
}

void AddShortNames(nlohmann::json& objects) {
  if (!objects.is_array()) return;
  std::vector<std::string> names;
  for (const nlohmann::json& o : objects)
    if (o.is_object() && o.contains("name") && o["name"].is_string()) names.push_back(o["name"]);
  const std::map<std::string, std::string> short_names = UniqueShortNames(names);
  for (nlohmann::json& o : objects)
    if (o.is_object() && o.contains("name") && o["name"].is_string())
      o["short_name"] = short_names.at(o["name"].get<std::string>());
}

std::string FormatDuration(uint64_t ns) {
  if (ns == kSaturated) return kOverflowText;
  if (ns < 1000) return fmt::format("{} ns", ns);
  // Four significant digits ("8.771 us", "87.71 us", "414.7 us"), as
  // profilers' tables show, so that a row of times fits a terminal; past
  // 1000 s, every whole second and three decimals.
  const double v = static_cast<double>(ns);
  const char* unit = ns < 1000000 ? "us" : ns < 1000000000 ? "ms" : "s";
  const double scaled = ns < 1000000 ? v / 1e3 : ns < 1000000000 ? v / 1e6 : v / 1e9;
  if (scaled >= 1000) return fmt::format("{:.3f} {}", scaled, unit);
  const int decimals = scaled < 10 ? 3 : scaled < 100 ? 2 : 1;
  return fmt::format("{:.{}f} {}", scaled, decimals, unit);
}

std::string FormatRate(double value, const char* unit) {
  if (!(value > 0)) return fmt::format("0 {}", unit);  // 0, and NaN from hostile input
  const int magnitude = static_cast<int>(std::floor(std::log10(value)));
  const int decimals = std::clamp(3 - magnitude, 0, 6);
  return fmt::format("{:.{}f} {}", value, decimals, unit);
}

std::string FormatOffset(uint64_t t, uint64_t t0) {
  const uint64_t ns = t >= t0 ? t - t0 : 0;
  if (ns < 1000) return fmt::format("+{} ns", ns);
  if (ns < 1'000'000) return fmt::format("+{}.{:03} us", ns / 1000, ns % 1000);
  const uint64_t us = ns / 1000;
  if (ns < 10'000'000'000) return fmt::format("+{}.{:03} ms", us / 1000, us % 1000);
  return fmt::format("+{}.{:06} s", us / 1'000'000, us % 1'000'000);
}

std::string FormatWallClock(int64_t realtime_ns) {
  if (realtime_ns <= 0) return "-";
  const int64_t ms = realtime_ns / 1'000'000;
  const int64_t day = ms % 86'400'000;
  return fmt::format("{:02}:{:02}:{:02}.{:03}", day / 3'600'000, day / 60'000 % 60, day / 1000 % 60,
                     day % 1000);
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes == kSaturated) return kOverflowText;
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
  // "+132.084 ms", as tables print offsets, reads as 132.084ms.
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  double scale;
  if (unit.empty() || unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "min")
    scale = 60e9;
  else if (unit == "h")
    scale = 3600e9;
  else
    return false;
  double result = value * scale;
  if (result > 9.2e18) return false;
  *ns = ToU64(result);
  return true;
}

bool ParseSize(const std::string& text, uint64_t* bytes) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 19) return false;
  uint64_t value = std::stoull(text.substr(0, digits));
  std::string unit = text.substr(digits);
  static const std::map<std::string, int> kShift = {
      {"", 0},   {"B", 0},    {"K", 10},   {"KiB", 10}, {"M", 20},
      {"MiB", 20}, {"G", 30}, {"GiB", 30}, {"T", 40},   {"TiB", 40}};
  auto it = kShift.find(unit);
  if (it == kShift.end()) return false;
  if (it->second > 0 && value > (~uint64_t{0} >> it->second)) return false;
  *bytes = value << it->second;
  return true;
}

namespace {

// The length of the valid UTF-8 sequence at text[i] (2..4), or 0.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  size_t n;
  uint32_t cp;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2, cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3, cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4, cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
      ++i;
    } else if (b == '\n') {
      out += "\\n", ++i;
    } else if (b == '\r') {
      out += "\\r", ++i;
    } else if (b == '\t') {
      out += "\\t", ++i;
    } else if (b < 0x80) {
      out += fmt::format("\\x{:02x}", b), ++i;
    } else if (size_t n = Utf8Length(text, i); n == 0) {
      out += fmt::format("\\x{:02x}", b), ++i;
    } else if (n == 2 && b == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      // U+0080..U+009F: C1 controls (CSI is U+009B).
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1])), i += 2;
    } else {
      out.append(text.substr(i, n)), i += n;
    }
  }
  return out;
}

void PrintLine(std::FILE* out, std::string_view text) {
  for (const std::string& line : WrapText(EscapeForTerminal(text), OutputWidth()))
    fmt::print(out, "{}\n", line);
}

void PrintError(const std::string& message) {
  fmt::print(stderr, "cutrace: {}\n", EscapeForTerminal(message));
}

}  // namespace cutrace::cli
