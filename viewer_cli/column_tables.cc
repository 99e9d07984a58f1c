// See column_tables.h (column_schema.h has the column types). Each kind's
// columns are declared in Declare*() and filled in Fill*() in the same order
// (a Cursor walks them, checking each column's item size), a batch at a
// time: every column gets a block of the batch's size, then plain loops
// write them.
#include "viewer_cli/column_tables.h"

#include <cstring>
#include <stdexcept>
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

// The enums' texts, by value; a value past the list (a hostile file) gets
// code -1, a missing value.
const std::vector<std::string> kCopyKinds = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                             "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
const std::vector<std::string> kMemoryKinds = {"unknown", "pageable", "pinned",        "device",
                                               "array",   "managed",  "device_static", "managed_static"};
const std::vector<std::string> kRangeKinds = {"push_pop", "start_end", "mark", "gpu"};
const std::vector<std::string> kApiDomains = {"runtime", "driver", "other"};
const std::vector<std::string> kSyncKinds = {"unknown",           "event_synchronize",
                                             "stream_wait_event", "stream_synchronize",
                                             "context_synchronize", "fence"};

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

// Walks a table's columns in declaration order, handing out each one's
// newest block (Grow()'s) as the type the caller fills it with.
class Cursor {
 public:
  explicit Cursor(Table& table) : table_(table) {}
  template <class T>
  T* Next() {
    if (next_ >= table_.columns.size()) throw std::logic_error("column_tables: too few columns");
    Column& c = table_.columns[next_++];
    if (ItemSize(c.dtype) != sizeof(T)) throw std::logic_error("column_tables: " + c.name);
    return reinterpret_cast<T*>(c.blocks.back().data.get());
  }
  // The four columns of AddTimes().
  template <class R>
  void Times(const std::vector<R>& records, uint16_t file) {
    uint16_t* f = Next<uint16_t>();
    int64_t* start = Next<int64_t>();
    int64_t* end = Next<int64_t>();
    int64_t* duration = Next<int64_t>();
    for (size_t i = 0; i < records.size(); ++i) {
      f[i] = file;
      start[i] = Ns(records[i].start_ns);
      end[i] = Ns(records[i].end_ns);
      duration[i] = Duration(records[i].start_ns, records[i].end_ns);
    }
  }

 private:
  Table& table_;
  size_t next_ = 0;
};

void DeclareKernels(Table& t) {
  t.AddTimes();
  t.Add("name", Dtype::kI4, columns::Names::kString);
  for (const char* c : {"device", "stream", "context"}) t.Add(c, Dtype::kU4);
  t.Add("correlation_id", Dtype::kU8);
  for (const char* c : {"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                        "registers_per_thread", "static_shared_bytes", "dynamic_shared_bytes",
                        "graph_id"})
    t.Add(c, Dtype::kU4);
  t.Add("graph_node_id", Dtype::kU8);
}

void FillKernels(Table& t, const std::vector<KernelRecord>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Cursor c(t);
  c.Times(v, file);
  int32_t* name = c.Next<int32_t>();
  uint32_t* device = c.Next<uint32_t>();
  uint32_t* stream = c.Next<uint32_t>();
  uint32_t* context = c.Next<uint32_t>();
  uint64_t* correlation = c.Next<uint64_t>();
  uint32_t* shape[10];
  for (uint32_t*& s : shape) s = c.Next<uint32_t>();
  uint64_t* node = c.Next<uint64_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const KernelRecord& r = v[i];
    name[i] = static_cast<int32_t>(r.name_id);  // a string id until EndFile
    device[i] = r.device_id;
    stream[i] = r.stream_id;
    context[i] = r.context_id;
    correlation[i] = r.correlation_id;
    const uint32_t values[10] = {r.grid[0],  r.grid[1],  r.grid[2],
                                 r.block[0], r.block[1], r.block[2],
                                 r.registers_per_thread, r.static_shared_bytes,
                                 r.dynamic_shared_bytes, r.graph_id};
    for (int k = 0; k < 10; ++k) shape[k][i] = values[k];
    node[i] = r.graph_node_id;
  }
}

void DeclareMemcpys(Table& t) {
  t.AddTimes();
  t.Add("bytes", Dtype::kU8);
  t.Add("kind", Dtype::kI4, columns::Names::kFixed, &kCopyKinds);
  t.Add("src_kind", Dtype::kI4, columns::Names::kFixed, &kMemoryKinds);
  t.Add("dst_kind", Dtype::kI4, columns::Names::kFixed, &kMemoryKinds);
  for (const char* c : {"device", "src_device", "dst_device", "stream", "context"})
    t.Add(c, Dtype::kU4);
  t.Add("correlation_id", Dtype::kU8);
  t.Add("async", Dtype::kB1);
}

void FillMemcpys(Table& t, const std::vector<MemcpyRecord>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Cursor c(t);
  c.Times(v, file);
  uint64_t* bytes = c.Next<uint64_t>();
  int32_t* kind = c.Next<int32_t>();
  int32_t* src_kind = c.Next<int32_t>();
  int32_t* dst_kind = c.Next<int32_t>();
  uint32_t* ids[5];
  for (uint32_t*& s : ids) s = c.Next<uint32_t>();
  uint64_t* correlation = c.Next<uint64_t>();
  uint8_t* async = c.Next<uint8_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const MemcpyRecord& r = v[i];
    bytes[i] = r.bytes;
    kind[i] = EnumCode(r.copy_kind, kCopyKinds);
    src_kind[i] = EnumCode(r.src_kind, kMemoryKinds);
    dst_kind[i] = EnumCode(r.dst_kind, kMemoryKinds);
    const uint32_t values[5] = {r.device_id, r.src_device_id, r.dst_device_id, r.stream_id,
                                r.context_id};
    for (int k = 0; k < 5; ++k) ids[k][i] = values[k];
    correlation[i] = r.correlation_id;
    async[i] = (r.flags & 1) != 0;
  }
}

void DeclareMemsets(Table& t) {
  t.AddTimes();
  t.Add("bytes", Dtype::kU8);
  t.Add("value", Dtype::kU4);
  t.Add("memory_kind", Dtype::kI4, columns::Names::kFixed, &kMemoryKinds);
  for (const char* c : {"device", "stream", "context"}) t.Add(c, Dtype::kU4);
  t.Add("correlation_id", Dtype::kU8);
}

void FillMemsets(Table& t, const std::vector<MemsetRecord>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Cursor c(t);
  c.Times(v, file);
  uint64_t* bytes = c.Next<uint64_t>();
  uint32_t* value = c.Next<uint32_t>();
  int32_t* memory_kind = c.Next<int32_t>();
  uint32_t* device = c.Next<uint32_t>();
  uint32_t* stream = c.Next<uint32_t>();
  uint32_t* context = c.Next<uint32_t>();
  uint64_t* correlation = c.Next<uint64_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const MemsetRecord& r = v[i];
    bytes[i] = r.bytes;
    value[i] = r.value;
    memory_kind[i] = EnumCode(r.memory_kind, kMemoryKinds);
    device[i] = r.device_id;
    stream[i] = r.stream_id;
    context[i] = r.context_id;
    correlation[i] = r.correlation_id;
  }
}

void DeclareRanges(Table& t) {
  t.AddTimes();
  t.Add("name", Dtype::kI4, columns::Names::kString);
  t.Add("domain", Dtype::kI4, columns::Names::kDomain);
  t.Add("kind", Dtype::kI4, columns::Names::kFixed, &kRangeKinds);
  t.Add("depth", Dtype::kU4);
  t.Add("thread_id", Dtype::kU8);
  t.Add("device", Dtype::kU4);
  t.Add("color", Dtype::kU4);
  t.Add("range_id", Dtype::kU8);
}

void FillRanges(Table& t, const std::vector<RangeRecord>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Cursor c(t);
  c.Times(v, file);
  int32_t* name = c.Next<int32_t>();
  int32_t* domain = c.Next<int32_t>();
  int32_t* kind = c.Next<int32_t>();
  uint32_t* depth = c.Next<uint32_t>();
  uint64_t* thread = c.Next<uint64_t>();
  uint32_t* device = c.Next<uint32_t>();
  uint32_t* color = c.Next<uint32_t>();
  uint64_t* range_id = c.Next<uint64_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const RangeRecord& r = v[i];
    name[i] = static_cast<int32_t>(r.name_id);
    domain[i] = static_cast<int32_t>(r.domain_id);
    kind[i] = EnumCode(r.kind, kRangeKinds);
    depth[i] = r.depth;
    thread[i] = r.thread_id;
    device[i] = r.device_id;
    color[i] = r.color;
    range_id[i] = r.range_id;
  }
}

void DeclareApiCalls(Table& t) {
  t.AddTimes();
  t.Add("name", Dtype::kI4, columns::Names::kString);
  t.Add("domain", Dtype::kI4, columns::Names::kFixed, &kApiDomains);
  t.Add("thread_id", Dtype::kU8);
  t.Add("correlation_id", Dtype::kU8);
  t.Add("return_code", Dtype::kU4);
  t.Add("callback_id", Dtype::kU4);
}

void FillApiCalls(Table& t, const std::vector<ApiRecord>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Cursor c(t);
  c.Times(v, file);
  int32_t* name = c.Next<int32_t>();
  int32_t* domain = c.Next<int32_t>();
  uint64_t* thread = c.Next<uint64_t>();
  uint64_t* correlation = c.Next<uint64_t>();
  uint32_t* rc = c.Next<uint32_t>();
  uint32_t* callback = c.Next<uint32_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const ApiRecord& r = v[i];
    name[i] = static_cast<int32_t>(r.name_id);
    domain[i] = EnumCode(r.domain, kApiDomains);
    thread[i] = r.thread_id;
    correlation[i] = r.correlation_id;
    rc[i] = r.return_code;
    callback[i] = r.callback_id;
  }
}

void DeclareSyncs(Table& t) {
  t.AddTimes();
  t.Add("kind", Dtype::kI4, columns::Names::kFixed, &kSyncKinds);
  for (const char* c : {"device", "stream", "context", "event_id"}) t.Add(c, Dtype::kU4);
  t.Add("correlation_id", Dtype::kU8);
}

void FillSyncs(Table& t, const std::vector<SyncRecord>& v, uint16_t file) {
  if (v.empty()) return;
  t.Grow(v.size());
  Cursor c(t);
  c.Times(v, file);
  int32_t* kind = c.Next<int32_t>();
  uint32_t* device = c.Next<uint32_t>();
  uint32_t* stream = c.Next<uint32_t>();
  uint32_t* context = c.Next<uint32_t>();
  uint32_t* event = c.Next<uint32_t>();
  uint64_t* correlation = c.Next<uint64_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const SyncRecord& r = v[i];
    kind[i] = EnumCode(r.kind, kSyncKinds);
    device[i] = r.device_id;
    stream[i] = r.stream_id;
    context[i] = r.context_id;
    event[i] = r.event_id;
    correlation[i] = r.correlation_id;
  }
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
  using Declare = void (*)(Table&);
  const Declare declare[kRecordKinds] = {DeclareKernels, DeclareMemcpys,  DeclareMemsets,
                                         DeclareRanges,  DeclareApiCalls, DeclareSyncs};
  tables_.resize(kRecordKinds);
  for (size_t k = 0; k < kRecordKinds; ++k) {
    if ((kinds_ & (1u << k)) == 0) continue;
    tables_[k] = std::make_unique<Table>();
    tables_[k]->name = std::string(kRecordKindNames[k]);
    declare[k](*tables_[k]);
  }
}

ColumnTables::~ColumnTables() = default;

void ColumnTables::BeginFile(uint16_t file) {
  file_ = file;
  for (auto& t : tables_)
    if (t) t->file_block = t->columns.empty() ? 0 : t->columns[0].blocks.size();
}

void ColumnTables::Add(const RecordBatch& batch) {
  if (tables_[0]) FillKernels(*tables_[0], batch.kernels, file_);
  if (tables_[1]) FillMemcpys(*tables_[1], batch.memcpys, file_);
  if (tables_[2]) FillMemsets(*tables_[2], batch.memsets, file_);
  if (tables_[3]) FillRanges(*tables_[3], batch.ranges, file_);
  if (tables_[4]) FillApiCalls(*tables_[4], batch.api_calls, file_);
  if (tables_[5]) FillSyncs(*tables_[5], batch.syncs, file_);
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
