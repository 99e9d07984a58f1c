// Output width, name style and text fitting: see display.h.
#include "viewer_cli/display.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "collector/short_name.h"
#include "viewer_cli/option_words.h"

namespace cutrace::cli {
namespace {

struct Settings {
  size_t width = 0;  // 0: not given
  NameStyle names = NameStyle::kShort;
};

Settings& Current() {
  static Settings settings;
  return settings;
}

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The byte offset after the first `columns` code points of `text`.
size_t BytesOf(std::string_view text, size_t columns) {
  size_t i = 0;
  for (size_t seen = 0; i < text.size(); ++i) {
    if (IsContinuation(text[i])) continue;
    if (seen == columns) break;
    ++seen;
  }
  return i;
}

}  // namespace

void AddDisplayOptions(CLI::App* cmd) {
  Settings& s = Current();
  cmd->add_option("--width", s.width,
                  "Fit tables and lines to N columns, 20..1000 (default: $COLUMNS, the "
                  "terminal's width, or 100)")
      ->type_name("N")
      ->check(CLI::Range(kMinWidth, kMaxWidth).description(""));
  EnumWords<NameStyle>(cmd->add_option("--names", s.names,
                                       "Kernel names in tables: short (template arguments and "
                                       "parameters elided) or full"),
                       {{"short", NameStyle::kShort}, {"full", NameStyle::kFull}})
      ->default_str("short");
}

size_t OutputWidth() {
  const Settings& s = Current();
  if (s.width != 0) return s.width;
  // $COLUMNS is whatever the environment says: junk or 0 means unset, a
  // number out of range is clamped (strtoull saturates huge ones).
  const char* columns = std::getenv("COLUMNS");
  const unsigned long long env =
      columns && *columns != '-' ? std::strtoull(columns, nullptr, 10) : 0;
  if (env != 0) return static_cast<size_t>(std::clamp<unsigned long long>(env, kMinWidth, kMaxWidth));
  struct winsize size = {};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return std::clamp<size_t>(size.ws_col, kMinWidth, kMaxWidth);
  return kDefaultWidth;
}

NameStyle Names() { return Current().names; }

void SetDisplay(size_t width, NameStyle names) {
  Current().width = width;
  Current().names = names;
}

std::map<std::string, std::string> ShownNames(const std::vector<std::string>& names) {
  if (Names() == NameStyle::kShort) return UniqueShortNames(names);
  std::map<std::string, std::string> out;
  for (const std::string& n : names) out[n] = n;
  return out;
}

std::string ShownName(const std::string& full) {
  return Names() == NameStyle::kShort ? ShortName(full) : full;
}

size_t TextWidth(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += !IsContinuation(c);
  return n;
}

std::string FitText(std::string_view text, size_t columns) {
  const size_t width = TextWidth(text);
  if (width <= columns) return std::string(text);
  if (columns == 0) return "";
  // Keep more of the start (a name's namespace and identifier) than of
  // the end (its tag and parameter list).
  const size_t tail = (columns - 1) * 2 / 5;
  const size_t head = columns - 1 - tail;
  std::string out(text.substr(0, BytesOf(text, head)));
  out += "\xE2\x80\xA6";  // U+2026
  out += text.substr(BytesOf(text, width - tail));
  return out;
}

std::vector<std::string> WrapText(std::string_view text, size_t columns) {
  std::vector<std::string> lines;
  if (TextWidth(text) <= columns) {
    lines.emplace_back(text);
    return lines;
  }
  size_t lead = 0;
  while (lead < text.size() && text[lead] == ' ') ++lead;
  // A continuation's indent, kept well inside the line.
  const std::string indent(std::min(lead + 2, columns / 2), ' ');
  // Words, a unit kept with the number before it ("13.00 us") and a label
  // with what follows it ("pid: 1250").
  static const char* const kUnits[] = {"ns", "us", "ms", "s", "B", "KiB", "MiB", "GiB", "TiB",
                                       "GB/s", "%"};
  std::vector<std::string> words;
  for (size_t i = lead; i < text.size();) {
    size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    i = end < text.size() ? end + 1 : end;
    if (word.empty()) continue;
    std::string_view bare = word;
    while (!bare.empty() && (bare.back() == ',' || bare.back() == ';' || bare.back() == ')'))
      bare.remove_suffix(1);
    const bool unit = std::find(std::begin(kUnits), std::end(kUnits), bare) != std::end(kUnits);
    // A label joins a value short enough that the pair never needs cutting
    // (a long path goes whole to the next line instead).
    const bool after_label = !words.empty() && words.back().back() == ':' &&
                             TextWidth(words.back()) + 1 + TextWidth(word) <= columns / 2;
    if ((unit || after_label) && !words.empty())
      words.back() += " " + std::string(word);
    else
      words.emplace_back(word);
  }
  std::string line(text.substr(0, lead));
  bool line_has_word = false;
  for (const std::string& whole : words) {
    std::string_view word = whole;
    for (;;) {
      const size_t room = columns - std::min(columns, TextWidth(line) + (line_has_word ? 1 : 0));
      if (TextWidth(word) <= room) {
        if (line_has_word) line += ' ';
        line += word;
        line_has_word = true;
        break;
      }
      if (line_has_word) {  // the word starts the next line
        lines.push_back(std::move(line));
        line = indent;
        line_has_word = false;
        continue;
      }
      // A word longer than a whole line: cut it.
      const size_t cut = BytesOf(word, std::max<size_t>(room, 1));
      line += word.substr(0, cut);
      word.remove_prefix(cut);
      lines.push_back(std::move(line));
      line = indent;
      if (word.empty()) break;
    }
  }
  if (line_has_word) lines.push_back(std::move(line));
  return lines;
}

}  // namespace cutrace::cli
