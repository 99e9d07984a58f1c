// Table::PrintText: aligned columns fitted to the output width (output.h,
// display.h).
#include <algorithm>
#include <numeric>

#include <fmt/core.h>

#include "viewer_cli/display.h"
#include "viewer_cli/output.h"

namespace cutrace::cli {
namespace {

// A text column is never cut narrower than this (or its header); a key
// column (labels, else names) keeps more, the table being split into parts sooner than the
// names cut past reading.
constexpr size_t kMinTextColumn = 12;
constexpr size_t kMinNameColumn = 32;
constexpr size_t kGap = 2;  // spaces between columns; 1 where that avoids a split

size_t LineWidth(const std::vector<size_t>& width, const std::vector<size_t>& columns,
                 size_t gap = kGap) {
  size_t total = 0;
  for (size_t c : columns) total += width[c];
  return total + (columns.empty() ? 0 : gap * (columns.size() - 1));
}

}  // namespace

void Table::PrintText(std::FILE* out) const {
  // Names shown as --names says, unique within this table.
  const std::map<std::string, std::string> shown = ShownNames(NameCells());
  // Escaped before measuring, so the columns line up on what is shown.
  auto escape = [&](const std::vector<std::string>& row, bool header) {
    std::vector<std::string> cells;
    cells.reserve(row.size());
    for (size_t c = 0; c < row.size(); ++c) {
      auto it = header || !names_[c] ? shown.end() : shown.find(row[c]);
      cells.push_back(EscapeForTerminal(it == shown.end() ? row[c] : it->second));
    }
    return cells;
  };
  const std::vector<std::string> headers = escape(headers_, true);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size());
  for (const auto& row : rows_) rows.push_back(escape(row, false));

  const size_t n = headers.size();
  // The key columns say which row it is: the labels, else the names. They
  // keep more of their width and are repeated in every part.
  const bool labelled = std::find(labels_.begin(), labels_.end(), true) != labels_.end();
  std::vector<bool> key(n);
  for (size_t c = 0; c < n; ++c) key[c] = labelled ? labels_[c] : names_[c];
  std::vector<size_t> width(n), floor(n);
  for (size_t c = 0; c < n; ++c) width[c] = TextWidth(headers[c]);
  for (const auto& row : rows)
    for (size_t c = 0; c < n; ++c) width[c] = std::max(width[c], TextWidth(row[c]));
  for (size_t c = 0; c < n; ++c)
    floor[c] = right_[c] ? width[c]
                         : std::min(width[c], std::max(TextWidth(headers[c]),
                                                       key[c] ? kMinNameColumn : kMinTextColumn));

  const size_t limit = OutputWidth();
  const std::vector<size_t> natural = width;
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  // A table a few columns too wide (the idle causes' 81 at 80) closes up to
  // one space between columns where that fits it whole, rather than cut a
  // cell or leave a column or two alone in a second part.
  const size_t gap = LineWidth(width, all) > limit && LineWidth(width, all, 1) <= limit ? 1 : kGap;
  // Narrow a text column, one column at a time, until the line fits: the
  // widest of the names that are not keys first (identifiers, cut in the
  // middle, read well cut: "kernel:prep…uts(…)"), then the widest of the
  // other text (a gap's cause cut reads badly), the keys last.
  auto rank = [&](size_t c) { return key[c] ? 2 : names_[c] ? 0 : 1; };
  for (size_t total = LineWidth(width, all, gap); total > limit;) {
    size_t widest = n;
    for (size_t c = 0; c < n; ++c)
      if (width[c] > floor[c] &&
          (widest == n || rank(c) < rank(widest) ||
           (rank(c) == rank(widest) && width[c] > width[widest])))
        widest = c;
    if (widest == n) break;
    --width[widest];
    --total;
  }

  // Panels: the key columns (else the first) beside as many of the
  // others as fit, in their order.
  std::vector<size_t> keys;
  for (size_t c = 0; c < n; ++c)
    if (key[c]) keys.push_back(c);
  if (keys.empty() && n > 0) {
    keys.push_back(0);
    key[0] = true;
  }
  std::vector<std::vector<size_t>> panels;
  if (LineWidth(width, all, gap) <= limit) {
    panels.push_back(all);
  } else {
    // The key columns share all of the line but 40 columns (at least half
    // of it); the others, in parts beside them, keep their widths (text
    // ones at their floor).
    width = natural;
    const size_t key_share = std::max(limit / 2, limit > 40 ? limit - 40 : 0) / keys.size();
    for (size_t c = 0; c < n; ++c) {
      const bool key = std::find(keys.begin(), keys.end(), c) != keys.end();
      if (right_[c]) continue;
      const size_t least = std::min(width[c], std::max(TextWidth(headers[c]), kMinTextColumn));
      width[c] = key ? std::max(least, std::min(width[c], key_share)) : floor[c];
    }
    std::vector<size_t> panel = keys;
    size_t added = 0;
    for (size_t c = 0; c < n; ++c) {
      if (std::find(keys.begin(), keys.end(), c) != keys.end()) continue;
      std::vector<size_t> wider = panel;
      wider.push_back(c);
      if (added > 0 && LineWidth(width, wider) > limit) {
        panels.push_back(panel);
        panel = keys;
        wider = keys;
        wider.push_back(c);
        added = 0;
      }
      panel = std::move(wider);
      ++added;
    }
    if (added > 0 || panels.empty()) panels.push_back(panel);
    for (auto& p : panels) std::sort(p.begin(), p.end());
  }

  auto print_row = [&](const std::vector<std::string>& row, const std::vector<size_t>& columns) {
    std::string line;
    for (size_t i = 0; i < columns.size(); ++i) {
      const size_t c = columns[i];
      if (i) line.append(gap, ' ');
      const std::string cell = FitText(row[c], width[c]);
      const size_t pad = width[c] - TextWidth(cell);
      if (right_[c]) line.append(pad, ' ');
      line += cell;
      if (!right_[c] && i + 1 < columns.size()) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    fmt::print(out, "{}\n", line);
  };
  // Room the parts leave goes back to their text columns: the key columns
  // first, by the room of the fullest part, so that they are as wide (a
  // name cut the same way) in every part; then each part's others.
  size_t key_room = limit;
  for (const std::vector<size_t>& p : panels)
    key_room = std::min(key_room, limit - std::min(limit, LineWidth(width, p, gap)));
  for (size_t c : keys) {
    if (right_[c]) continue;
    const size_t more = std::min(key_room, natural[c] - width[c]);
    width[c] += more;
    key_room -= more;
  }
  const std::vector<size_t> keyed = width;
  for (size_t p = 0; p < panels.size(); ++p) {
    width = keyed;
    size_t room = limit - std::min(limit, LineWidth(width, panels[p], gap));
    for (size_t c : panels[p]) {
      if (right_[c] || key[c]) continue;
      const size_t more = std::min(room, natural[c] - width[c]);
      width[c] += more;
      room -= more;
    }
    if (p) fmt::print(out, "\n");
    print_row(headers, panels[p]);
    std::vector<std::string> rule;
    for (size_t c = 0; c < n; ++c) rule.emplace_back(width[c], '-');
    print_row(rule, panels[p]);
    for (const auto& row : rows) print_row(row, panels[p]);
  }
}

}  // namespace cutrace::cli
