// How text output is laid out for a person: the width every table and line
// fits, and how C++ kernel names are shown.
//
//   width   --width N (20..1000), else $COLUMNS (clamped into that range),
//           else the terminal's width when stdout is one, else 100.
//   names   --names short (default) or full. Short names are
//           collector/short_name.h's, made unique among the names of one
//           table.
//
// RunCli adds --width and --names to every report command (AddDisplayOptions)
// and the table printer (output.h Table::PrintText) and PrintLine read the
// settings. CSV and JSON always carry full names (plus a short_name). Main
// thread only.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace cutrace::cli {

inline constexpr size_t kMinWidth = 20;
inline constexpr size_t kMaxWidth = 1000;
inline constexpr size_t kDefaultWidth = 100;

enum class NameStyle { kShort, kFull };

// Adds --width and --names to `cmd` (a command without a --width of its own).
void AddDisplayOptions(CLI::App* cmd);

// The width text output fits, in columns (see above).
size_t OutputWidth();
NameStyle Names();
// For tests: set what the options would (width 0: back to the default rule).
void SetDisplay(size_t width, NameStyle names);

// Shown names for a set of names that appear together (one table): with
// --names short, UniqueShortNames' (collector/short_name.h); with --names
// full, the names themselves. The map is full name -> shown name.
std::map<std::string, std::string> ShownNames(const std::vector<std::string>& names);
// One name on its own (a line of text): its short name, or itself.
std::string ShownName(const std::string& full);

// Columns `text` takes on a terminal (UTF-8 code points; the text is
// already escaped, so every one is printable).
size_t TextWidth(std::string_view text);
// `text` in at most `columns` columns: its start and end around "…".
std::string FitText(std::string_view text, size_t columns);
// `text` broken at spaces into lines of at most `columns` columns; lines
// after the first are indented two more than the first's leading spaces. A
// word longer than a line is cut.
std::vector<std::string> WrapText(std::string_view text, size_t columns);

}  // namespace cutrace::cli
