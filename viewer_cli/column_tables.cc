// See column_tables.h (column_schema.h has the column types). Each kind's
// columns are declared in Declare*() and filled in Fill*() in the same order
// (a Cursor walks them, checking each column's item size), a batch at a
// time: every column gets a block of the batch's size, then plain loops
// write them.
#include "viewer_cli/column_tables.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <string_view>
#include <utility>

#include "analysis/trace_set.h"
#include "viewer_cli/column_schema.h"

namespace cutrace::cli {

using columns::Column;
using columns::Dtype;
using columns::DtypeText;
using columns::ItemSize;

namespace {

// The enums' texts, by value (analysis/trace_set.h, collector/summary_totals.h);
// a value past the list (a hostile file) gets code -1, a missing value.
template <size_t N>
std::vector<std::string> Texts(const std::array<const char*, N>& names) {
  return {names.begin(), names.end()};
}
template <class E>
std::vector<std::string> Texts(E last, const char* (*label)(E)) {
  std::vector<std::string> out;
  for (size_t v = 0; v <= static_cast<size_t>(last); ++v) out.push_back(label(static_cast<E>(v)));
  return out;
}
const std::vector<std::string> kCopyKinds = Texts(CopyKind::kPtoP, CopyKindLabel);
const std::vector<std::string> kMemoryKinds = Texts(analysis::kMemoryKindNames);
const std::vector<std::string> kRangeKinds = Texts(analysis::kRangeKindNames);
const std::vector<std::string> kApiDomains = Texts(ApiDomain::kOther, ApiDomainLabel);
const std::vector<std::string> kSyncKinds = Texts(analysis::kSyncKindNames);

template <class E>
int32_t EnumCode(E value, const std::vector<std::string>& texts) {
  const auto v = static_cast<size_t>(value);
  return v < texts.size() ? static_cast<int32_t>(v) : -1;
}

int64_t Ns(uint64_t t) { return static_cast<int64_t>(t); }
int64_t Duration(uint64_t start, uint64_t end) {
  return static_cast<int64_t>(analysis::SafeEnd(start, end) - start);
}

}  // namespace

struct ColumnTables::Table {
  std::string name;
  size_t rows = 0;
  size_t file_block = 0;  // the current file's first block (the same in every column)
  std::vector<Column> columns;

  void Add(std::string column, Dtype dtype, columns::Names names = columns::Names::kNone,
           const std::vector<std::string>* fixed = nullptr) {
    Column& c = columns.emplace_back();
    c.name = std::move(column);
    c.dtype = names == columns::Names::kNone ? dtype : Dtype::kI4;
    c.names = names;
    if (fixed != nullptr) c.categories = *fixed;
  }
  // The columns every table starts with.
  void AddTimes() {
    Add("file", Dtype::kU2);
    Add("start_ns", Dtype::kI8);
    Add("end_ns", Dtype::kI8);
    Add("duration_ns", Dtype::kI8);
  }
  // A new block of n rows in every column (none for n = 0).
  void Grow(size_t n) {
    if (n == 0) return;
    for (Column& c : columns)
      c.blocks.push_back({std::unique_ptr<uint8_t[]>(new uint8_t[n * ItemSize(c.dtype)]), n});
    rows += n;
  }
};

namespace {

using Table = ColumnTables::Table;

// The column type of a member type (bool is stored as one byte).
template <class M>
constexpr Dtype DtypeOf() {
  if constexpr (std::is_same_v<M, bool>) return Dtype::kB1;
  else if constexpr (std::is_same_v<M, uint64_t>) return Dtype::kU8;
  else if constexpr (std::is_same_v<M, int64_t>) return Dtype::kI8;
  else if constexpr (std::is_same_v<M, uint32_t>) return Dtype::kU4;
  else if constexpr (std::is_same_v<M, int32_t>) return Dtype::kI4;
  else if constexpr (std::is_same_v<M, uint16_t>) return Dtype::kU2;
  else {
    static_assert(std::is_same_v<M, uint8_t>);
    return Dtype::kU1;
  }
}
template <class M>
using Stored = std::conditional_t<std::is_same_v<M, bool>, uint8_t, M>;

// Each kind's columns in order, as calls on a visitor `v` (Declarer, Filler),
// after the four every table starts with (file, start_ns, end_ns,
// duration_ns):
//   Number(name, &R::m)          a number column of the member's type;
//   Numbers({names}, &R::array)  one such column per element;
//   Name(name, &R::m, names)     a string or domain id, resolved at EndFile;
//   Enum(name, &R::m, texts)     an enum's value as a code into `texts`;
//   Async()                      bit 0 of R::flags, as bool.
template <class V>
void KindColumns(V& v, const KernelRecord*) {
  v.Name("name", &KernelRecord::name_id, columns::Names::kString);
  v.Numbers({"device", "stream", "context"},
            {&KernelRecord::device_id, &KernelRecord::stream_id, &KernelRecord::context_id});
  v.Number("correlation_id", &KernelRecord::correlation_id);
  v.Numbers({"grid_x", "grid_y", "grid_z"}, &KernelRecord::grid);
  v.Numbers({"block_x", "block_y", "block_z"}, &KernelRecord::block);
  v.Numbers({"registers_per_thread", "static_shared_bytes", "dynamic_shared_bytes", "graph_id"},
            {&KernelRecord::registers_per_thread, &KernelRecord::static_shared_bytes,
             &KernelRecord::dynamic_shared_bytes, &KernelRecord::graph_id});
  v.Number("graph_node_id", &KernelRecord::graph_node_id);
}

template <class V>
void KindColumns(V& v, const MemcpyRecord*) {
  v.Number("bytes", &MemcpyRecord::bytes);
  v.Enum("kind", &MemcpyRecord::copy_kind, kCopyKinds);
  v.Enum("src_kind", &MemcpyRecord::src_kind, kMemoryKinds);
  v.Enum("dst_kind", &MemcpyRecord::dst_kind, kMemoryKinds);
  v.Numbers({"device", "src_device", "dst_device", "stream", "context"},
            {&MemcpyRecord::device_id, &MemcpyRecord::src_device_id, &MemcpyRecord::dst_device_id,
             &MemcpyRecord::stream_id, &MemcpyRecord::context_id});
  v.Number("correlation_id", &MemcpyRecord::correlation_id);
  v.Async();
}

template <class V>
void KindColumns(V& v, const MemsetRecord*) {
  v.Number("bytes", &MemsetRecord::bytes);
  v.Number("value", &MemsetRecord::value);
  v.Enum("memory_kind", &MemsetRecord::memory_kind, kMemoryKinds);
  v.Numbers({"device", "stream", "context"},
            {&MemsetRecord::device_id, &MemsetRecord::stream_id, &MemsetRecord::context_id});
  v.Number("correlation_id", &MemsetRecord::correlation_id);
}

template <class V>
void KindColumns(V& v, const RangeRecord*) {
  v.Name("name", &RangeRecord::name_id, columns::Names::kString);
  v.Name("domain", &RangeRecord::domain_id, columns::Names::kDomain);
  v.Enum("kind", &RangeRecord::kind, kRangeKinds);
  v.Number("depth", &RangeRecord::depth);
  v.Number("thread_id", &RangeRecord::thread_id);
  v.Numbers({"device", "color"}, {&RangeRecord::device_id, &RangeRecord::color});
  v.Number("range_id", &RangeRecord::range_id);
}

template <class V>
void KindColumns(V& v, const ApiRecord*) {
  v.Name("name", &ApiRecord::name_id, columns::Names::kString);
  v.Enum("domain", &ApiRecord::domain, kApiDomains);
  v.Numbers({"thread_id", "correlation_id"}, {&ApiRecord::thread_id, &ApiRecord::correlation_id});
  v.Numbers({"return_code", "callback_id"}, {&ApiRecord::return_code, &ApiRecord::callback_id});
}

template <class V>
void KindColumns(V& v, const SyncRecord*) {
  v.Enum("kind", &SyncRecord::kind, kSyncKinds);
  v.Numbers({"device", "stream", "context", "event_id"},
            {&SyncRecord::device_id, &SyncRecord::stream_id, &SyncRecord::context_id,
             &SyncRecord::event_id});
  v.Number("correlation_id", &SyncRecord::correlation_id);
}

// Declares a kind's columns.
struct Declarer {
  Table& t;

  template <class R, class M>
  void Number(const char* name, M R::*) {
    t.Add(name, DtypeOf<M>());
  }
  template <class R, class M, size_t N>
  void Numbers(const char* const (&names)[N], M (R::*)[N]) {
    for (const char* name : names) t.Add(name, DtypeOf<M>());
  }
  template <class R, class M, size_t N>
  void Numbers(const char* const (&names)[N], M R::* const (&)[N]) {
    for (const char* name : names) t.Add(name, DtypeOf<M>());
  }
  template <class R>
  void Name(const char* name, uint32_t R::*, columns::Names names) {
    t.Add(name, Dtype::kI4, names);
  }
  template <class R, class E>
  void Enum(const char* name, E R::*, const std::vector<std::string>& texts) {
    t.Add(name, Dtype::kI4, columns::Names::kFixed, &texts);
  }
  void Async() { t.Add("async", Dtype::kB1); }
};

// Fills a batch's block of each column, in declaration order: one plain
// loop per column.
template <class R>
class Filler {
 public:
  Filler(Table& table, const std::vector<R>& records) : table_(table), v_(records) {}

  void Times(uint16_t file) {
    Fill<uint16_t>([file](const R&) { return file; });
    Fill<int64_t>([](const R& r) { return Ns(r.start_ns); });
    Fill<int64_t>([](const R& r) { return Ns(r.end_ns); });
    Fill<int64_t>([](const R& r) { return Duration(r.start_ns, r.end_ns); });
  }
  template <class M>
  void Number(const char*, M R::*m) {
    Fill<Stored<M>>([m](const R& r) { return r.*m; });
  }
  template <class M, size_t N>
  void Numbers(const char* const (&)[N], M (R::*m)[N]) {
    for (size_t k = 0; k < N; ++k) Fill<M>([m, k](const R& r) { return (r.*m)[k]; });
  }
  template <class M, size_t N>
  void Numbers(const char* const (&)[N], M R::* const (&m)[N]) {
    for (M R::*each : m) Number("", each);
  }
  void Name(const char*, uint32_t R::*m, columns::Names) {
    // A string id until EndFile.
    Fill<int32_t>([m](const R& r) { return static_cast<int32_t>(r.*m); });
  }
  template <class E>
  void Enum(const char*, E R::*m, const std::vector<std::string>& texts) {
    Fill<int32_t>([m, &texts](const R& r) { return EnumCode(r.*m, texts); });
  }
  void Async() {
    Fill<uint8_t>([](const R& r) { return static_cast<uint8_t>((r.flags & 1) != 0); });
  }

 private:
  // The next column's newest block (Grow()'s), checked to hold T.
  template <class T, class Get>
  void Fill(Get get) {
    if (next_ >= table_.columns.size()) throw std::logic_error("column_tables: too few columns");
    Column& c = table_.columns[next_++];
    if (ItemSize(c.dtype) != sizeof(T)) throw std::logic_error("column_tables: " + c.name);
    T* out = reinterpret_cast<T*>(c.blocks.back().data.get());
    for (size_t i = 0; i < v_.size(); ++i) out[i] = static_cast<T>(get(v_[i]));
  }

  Table& table_;
  const std::vector<R>& v_;
  size_t next_ = 0;
};

template <class R>
void Declare(Table& t) {
  t.AddTimes();
  Declarer d{t};
  KindColumns(d, static_cast<const R*>(nullptr));
}

template <class R>
void Fill(Table& t, const std::vector<R>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Filler<R> f(t, v);
  f.Times(file);
  KindColumns(f, static_cast<const R*>(nullptr));
}

// Turns the current file's string ids of `column` (its blocks from
// `first`) into codes of the column's shared list.
void ResolveNames(Column& column, size_t first, const TraceData& trace) {
  std::unordered_map<uint32_t, int32_t> by_id;
  for (size_t b = first; b < column.blocks.size(); ++b) {
    auto* codes = reinterpret_cast<int32_t*>(column.blocks[b].data.get());
    for (size_t i = 0; i < column.blocks[b].rows; ++i) {
      const auto id = static_cast<uint32_t>(codes[i]);
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        const std::string text = column.names == columns::Names::kDomain ? analysis::DomainName(trace, id)
                                                                : trace.strings.Display(id);
        it = by_id.emplace(id, column.Code(text)).first;
      }
      codes[i] = it->second;
    }
  }
}

}  // namespace

ColumnTables::ColumnTables(uint32_t kinds) : kinds_(kinds) {
  tables_.resize(kRecordKinds);
  RecordBatch none;
  ForEachKind(
      [&](auto kind, const auto& v) {
        const size_t k = static_cast<size_t>(decltype(kind)::value);
        if ((kinds_ & (1u << k)) == 0) return;
        tables_[k] = std::make_unique<Table>();
        tables_[k]->name = std::string(kRecordKindNames[k]);
        Declare<typename std::decay_t<decltype(v)>::value_type>(*tables_[k]);
      },
      none);
}

ColumnTables::~ColumnTables() = default;

void ColumnTables::BeginFile(uint16_t file) {
  file_ = file;
  for (auto& t : tables_)
    if (t) t->file_block = t->columns.empty() ? 0 : t->columns[0].blocks.size();
}

void ColumnTables::Add(const RecordBatch& batch) {
  ForEachKind(
      [&](auto kind, const auto& v) {
        const std::unique_ptr<Table>& t = tables_[static_cast<size_t>(decltype(kind)::value)];
        if (t) Fill(*t, v, file_);
      },
      batch);
}

void ColumnTables::EndFile(const TraceData& trace) {
  for (auto& t : tables_) {
    if (!t) continue;
    for (Column& c : t->columns)
      if (c.names == columns::Names::kString || c.names == columns::Names::kDomain)
        ResolveNames(c, t->file_block, trace);
  }
}

nlohmann::json ColumnTables::Describe() const {
  nlohmann::json tables = nlohmann::json::array();
  for (const auto& t : tables_) {
    if (!t) continue;
    nlohmann::json columns = nlohmann::json::array();
    nlohmann::json categories = nlohmann::json::object();
    for (const Column& c : t->columns) {
      columns.push_back({{"name", c.name}, {"dtype", DtypeText(c.dtype)}});
      if (c.names != columns::Names::kNone) categories[c.name] = c.categories;
    }
    tables.push_back(
        {{"name", t->name}, {"rows", t->rows}, {"columns", columns}, {"categories", categories}});
  }
  return nlohmann::json{{"tables", std::move(tables)}};
}

void ColumnTables::Write(std::FILE* out) const {
  for (const auto& t : tables_) {
    if (!t) continue;
    for (const Column& c : t->columns)
      for (const Column::Block& b : c.blocks) std::fwrite(b.data.get(), ItemSize(c.dtype), b.rows, out);
  }
}

}  // namespace cutrace::cli
