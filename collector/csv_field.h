// The one CSV quoter of the project, used by the CLI's CSV reports
// (viewer_cli/output.cc) and by `cutrace export --format csv`
// (interop/export/csv_export.cc), so both write the same cells:
//
// - RFC 4180: a field holding ',', '"', CR or LF is quoted, '"' doubled.
// - Formula injection (OWASP's "CSV injection" advice): a TEXT field that
//   begins with '=', '+', '-', '@', TAB or CR gets a leading single quote, so
//   a spreadsheet shows it as text instead of evaluating it. Names come from
//   the traced program and from trace files, which may be hostile. Number
//   fields are never prefixed: "-5" must stay a number. Whether a field is
//   text is the caller's knowledge of its column, never guessed from the
//   field (a kernel named "-5" is still a name).
//
// Header-only, no state.
#pragma once

#include <string>
#include <string_view>

namespace cutrace {

enum class CsvKind { kText, kNumber };

inline void AppendCsvField(std::string& out, std::string_view field, CsvKind kind) {
  const bool formula = kind == CsvKind::kText && !field.empty() &&
                       std::string_view("=+-@\t\r").find(field.front()) != std::string_view::npos;
  const bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos;
  if (quote) out += '"';
  if (formula) out += '\'';
  for (char c : field) {
    if (quote && c == '"') out += '"';
    out += c;
  }
  if (quote) out += '"';
}

inline std::string CsvField(std::string_view field, CsvKind kind) {
  std::string out;
  AppendCsvField(out, field, kind);
  return out;
}

}  // namespace cutrace
