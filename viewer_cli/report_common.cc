// Loading, per-file/aggregate rendering and printing: see report_common.h.
#include "viewer_cli/report_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/core.h>

#include "analysis/kernel_metrics.h"
#include "analysis/rank_imbalance.h"
#include "collector/sat_math.h"
#include "collector/trace_loader.h"

namespace cutrace::cli {

bool LoadTraces(const std::vector<std::string>& paths, LoadedTraces* out) {
  out->traces.clear();
  out->all.clear();
  out->traces.reserve(paths.size());
  for (const std::string& path : paths) {
    StatusOr<TraceData> loaded = LoadTrace(path);
    if (!loaded.ok()) {
      PrintOpenError(path, loaded.status().message());
      return false;
    }
    TraceData& trace = out->traces.emplace_back(std::move(loaded).value());
    if (trace.read.truncated)
      PrintError(fmt::format("{}: warning: file truncated ({} bytes after the last complete "
                             "packet lost); reporting the readable part",
                             path, trace.read.lost_bytes));
  }
  for (const TraceData& trace : out->traces) out->all.push_back(&trace);
  return true;
}

namespace {

// Whether the file starts as a Chrome/Kineto trace does: '{' or '[' after
// white space, or gzip's magic (a .json.gz).
bool LooksLikeJson(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char head[64];
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return true;
  for (size_t i = 0; i < n; ++i) {
    if (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t') continue;
    return head[i] == '{' || head[i] == '[';
  }
  return false;
}

}  // namespace

void PrintOpenError(const std::string& path, const std::string& message) {
  if (message.find("not a cutrace trace") != std::string::npos && LooksLikeJson(path)) {
    std::string out = path;
    for (const char* ext : {".json.gz", ".json", ".gz"}) {
      const std::string e = ext;
      if (out.size() > e.size() && out.compare(out.size() - e.size(), e.size(), e) == 0) {
        out.resize(out.size() - e.size());
        break;
      }
    }
    PrintError(path + ": a Chrome/Kineto JSON trace, not a cutrace trace; convert it first: "
               "cutrace import " + path + " -o " + out + ".trace");
    return;
  }
  // The reader's messages mostly start with the path already; keep the
  // "cutrace: PATH: REASON" shape either way.
  PrintError(message.rfind(path + ":", 0) == 0 ? message : path + ": " + message);
}

void TableSection::AddColumns(const Cells& c, std::initializer_list<TableColumn> columns) {
  InsertColumns(headers.size(), c, columns);
}

void TableSection::InsertColumns(size_t at, const Cells& c,
                                 std::initializer_list<TableColumn> columns) {
  right.resize(headers.size(), false);
  names.resize(headers.size(), false);
  labels.resize(headers.size(), false);
  for (const TableColumn& column : columns) {
    const auto pos = static_cast<ptrdiff_t>(at++);
    headers.insert(headers.begin() + pos, c.human() ? column.human : column.key);
    right.insert(right.begin() + pos, column.holds == TableColumn::kNumbers);
    names.insert(names.begin() + pos, column.holds == TableColumn::kNames);
    labels.insert(labels.begin() + pos, column.label);
  }
}

Table TableSection::ToTable() const {
  Table table(headers);
  table.SetRightAligned(right);
  table.SetNameColumns(names);
  table.SetLabelColumns(labels);
  for (const auto& row : rows) table.AddRow(row);
  return table;
}

namespace {

void PrintSection(const TableSection& section, std::FILE* out) {
  if (!section.title.empty()) PrintLine(out, section.title);
  if (section.rows.empty() && !section.empty_note.empty()) {
    PrintLine(out, "  " + section.empty_note);
    return;
  }
  section.ToTable().PrintText(out);
}

void PrintText(const Rendered& rendered, std::FILE* out) {
  for (const std::string& line : rendered.lines) PrintLine(out, line);
  for (size_t t = 0; t < rendered.tables.size(); ++t) {
    if (t > 0 || !rendered.lines.empty()) fmt::print(out, "\n");
    PrintSection(rendered.tables[t], out);
  }
}

// CSV of several renderings of the same report: one table per section, the
// rows of every rendering, each led by its label.
void PrintCsv(const std::vector<std::pair<std::string, Rendered>>& parts, std::FILE* out) {
  bool labelled = parts.size() > 1;
  size_t sections = parts.empty() ? 0 : parts.front().second.tables.size();
  for (size_t s = 0; s < sections; ++s) {
    const TableSection& first = parts.front().second.tables[s];
    // A report of several tables (summary) separates them with a blank line
    // and names each, so a reader can split the stream.
    if (sections > 1) fmt::print(out, "{}# {}\n", s ? "\n" : "", first.title);
    std::vector<std::string> headers = first.headers;
    std::vector<bool> right = first.right;
    right.resize(first.headers.size(), false);
    std::vector<bool> names = first.names;
    names.resize(first.headers.size(), false);
    if (labelled) {
      headers.insert(headers.begin(), "file");
      right.insert(right.begin(), false);
      names.insert(names.begin(), false);
    }
    Table table(headers);
    table.SetRightAligned(std::move(right));  // numbers are never formula-guarded
    table.SetNameColumns(std::move(names));
    for (const auto& [label, rendered] : parts) {
      if (s >= rendered.tables.size()) continue;
      for (std::vector<std::string> row : rendered.tables[s].rows) {
        if (labelled) row.insert(row.begin(), label);
        table.AddRow(std::move(row));
      }
    }
    table.PrintCsv(out);
  }
}

}  // namespace

void PrintReport(const LoadedTraces& loaded, Format format, const RenderFn& render,
                 std::FILE* out) {
  // A run's chunks (analysis/rank_imbalance.h RanksOf()) are one trace: side
  // by side in chunk order, one section, labelled "FIRST (+N chunks)".
  const analysis::Ranks runs = analysis::RanksOf(loaded.all);
  std::vector<const TraceData*> ordered;
  std::vector<std::pair<size_t, size_t>> sections;  // [first, first + count) of `ordered`
  for (uint32_t r = 0; r < runs.size(); ++r) {
    const size_t first = ordered.size();
    for (size_t f = 0; f < loaded.all.size(); ++f)
      if (runs.of_file[f] == r) ordered.push_back(loaded.all[f]);
    std::stable_sort(ordered.begin() + first, ordered.end(),
                     [](const TraceData* a, const TraceData* b) {
                       return a->header.chunk_index() < b->header.chunk_index();
                     });
    sections.emplace_back(first, ordered.size() - first);
  }
  analysis::TraceSet all(ordered);
  Rendered aggregate = render(all, format);
  if (sections.size() == 1) {
    if (format == Format::kJson)
      PrintJson(aggregate.json, out);
    else if (format == Format::kCsv)
      PrintCsv({{runs.labels[0], std::move(aggregate)}}, out);
    else
      PrintText(aggregate, out);
    return;
  }

  std::vector<std::pair<std::string, Rendered>> parts;
  for (size_t i = 0; i < sections.size(); ++i)
    parts.emplace_back(runs.labels[i],
                       render(all.subspan(sections[i].first, sections[i].second), format));

  if (format == Format::kJson) {
    nlohmann::json files = nlohmann::json::array();
    for (size_t i = 0; i < parts.size(); ++i) {
      nlohmann::json file = std::move(parts[i].second.json);
      const auto [first, count] = sections[i];
      file["path"] = ordered[first]->path;
      if (count > 1) {
        nlohmann::json chunks = nlohmann::json::array();
        for (size_t c = first; c < first + count; ++c) chunks.push_back(ordered[c]->path);
        file["chunks"] = std::move(chunks);
      }
      files.push_back(std::move(file));
    }
    aggregate.json["files"] = std::move(files);
    PrintJson(aggregate.json, out);
  } else if (format == Format::kCsv) {
    parts.emplace_back("all", std::move(aggregate));
    PrintCsv(parts, out);
  } else {
    for (const auto& [path, rendered] : parts) {
      PrintLine(out, "== " + path + " ==");  // a file name may hold anything
      PrintText(rendered, out);
      fmt::print(out, "\n");
    }
    if (parts.size() == ordered.size())
      fmt::print(out, "== all {} files ==\n", parts.size());
    else
      fmt::print(out, "== all {} runs ({} files) ==\n", parts.size(), ordered.size());
    PrintText(aggregate, out);
  }
}

int RunReport(const std::vector<std::string>& paths, Format format, const RenderFn& render) {
  LoadedTraces loaded;
  if (!LoadTraces(paths, &loaded)) return 1;
  PrintReport(loaded, format, render, stdout);
  return 0;
}

std::string Cells::Duration(uint64_t ns) const {
  return human_ ? FormatDuration(ns) : std::to_string(ns);
}

std::string Cells::Duration(double ns) const {
  return Duration(ToU64(ns));  // an unknown (overflowed) average is +inf: shown as such
}

std::string Cells::Bytes(uint64_t bytes) const {
  return human_ ? FormatBytes(bytes) : std::to_string(bytes);
}

std::string Cells::Count(uint64_t n) const { return std::to_string(n); }

std::string Cells::Percent(double pct) const {
  return human_ ? fmt::format("{:.1f}%", pct) : fmt::format("{:.3f}", pct);
}

std::string Cells::Real(double value, int decimals) const {
  return fmt::format("{:.{}f}", value, decimals);
}

bool RangesWithoutProjection(analysis::TraceSet traces) {
  for (const TraceData* t : traces) {
    const auto& kinds = t->header.enabled_kinds();
    if (kinds.empty()) continue;
    auto has = [&](const char* k) { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); };
    // The library lists "runtime"/"driver"; the Kineto importer lists "api"
    // for the cuda_runtime/cuda_driver events it read.
    if (has("nvtx") && !has("runtime") && !has("driver") && !has("api")) return true;
  }
  return false;
}

void AddUntimedCountedNote(analysis::TraceSet traces, Format format, Rendered* r) {
  uint64_t untimed = 0;
  for (const TraceData* t : traces) untimed += analysis::CountedLaunchesOf(*t).untimed.size();
  if (untimed == 0) return;
  if (format == Format::kJson) r->json["counted_untimed"] = untimed;
  if (format == Format::kTable)
    r->lines.push_back(fmt::format("note: {} kernel launches were counted with hardware counters, "
                                   "which CUPTI does not time: device time leaves them out "
                                   "(`cutrace kernels` lists them)",
                                   untimed));
}

std::string Shorten(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars || max_chars < 8) return text;
  size_t head = (max_chars - 3) / 2;
  size_t tail = max_chars - 3 - head;
  return text.substr(0, head) + "..." + text.substr(text.size() - tail);
}

}  // namespace cutrace::cli
