// How fast the writer side turns kernel records into trace bytes, on one
// core: the target (DESIGN.md) is at least 10 M records/s converted and
// encoded. Each benchmark reports records/s and bytes per record.
//
//   build/bin/collector_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collector/batch_encoder.h"
#include "collector/string_interner.h"
#include "collector/trace_writer.h"

namespace cutrace {
namespace {

constexpr size_t kBatch = 4096;  // about one 1 MiB CUPTI buffer of kernel records

// Stands in for CUpti_ActivityKernel9: the fields the converter reads, laid
// out as CUPTI's record is (the real conversion lives in injection/).
struct FakeActivityKernel {
  uint32_t kind;
  uint8_t cache_config;
  uint8_t shared_memory_config;
  uint16_t registers_per_thread;
  uint32_t partitioned_cache_requested;
  uint32_t partitioned_cache_executed;
  uint64_t start;
  uint64_t end;
  uint64_t completed;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  int32_t grid_x, grid_y, grid_z;
  int32_t block_x, block_y, block_z;
  int32_t static_shared_memory;
  int32_t dynamic_shared_memory;
  uint32_t local_memory_per_thread;
  uint32_t local_memory_total;
  uint32_t correlation_id;
  int64_t grid_id;
  const char* name;
  uint64_t graph_node_id;
  uint32_t graph_id;
  uint32_t channel_id;
  uint8_t launch_type;
};

std::vector<FakeActivityKernel> Activities(size_t n, size_t names) {
  static const char* kNames[] = {"_Z6kernelPfi", "_Z4gemmPKfS0_Pf", "_Z7softmaxPfi",
                                 "_Z9layernormPfS_i"};
  std::vector<FakeActivityKernel> v(n);
  uint64_t t = 1'700'000'000'000'000'000ull;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    FakeActivityKernel& a = v[i];
    t += 4800 + x % 400;
    a.start = t;
    a.end = t + 1900 + (x >> 20) % 200;
    a.correlation_id = static_cast<uint32_t>(1000 + i);
    a.device_id = 0;
    a.context_id = 1;
    a.stream_id = 7;
    a.grid_x = a.grid_y = a.grid_z = 1;
    a.block_x = 128;
    a.block_y = a.block_z = 1;
    a.registers_per_thread = 32;
    a.name = kNames[names == 1 ? 0 : (x >> 33) % names];
  }
  return v;
}

// What the injection's converter does per record: copy fields, intern the
// name (cached by pointer, as CUPTI reuses name pointers).
void Convert(const std::vector<FakeActivityKernel>& in, StringInterner& interner,
             RecordBatch* out) {
  const char* last_name = nullptr;
  uint32_t last_id = 0;
  out->kernels.resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const FakeActivityKernel& a = in[i];
    KernelRecord& k = out->kernels[i];
    k.start_ns = a.start;
    k.end_ns = a.end;
    k.correlation_id = a.correlation_id;
    k.graph_node_id = a.graph_node_id;
    k.device_id = a.device_id;
    k.context_id = a.context_id;
    k.stream_id = a.stream_id;
    k.graph_id = a.graph_id;
    k.grid[0] = static_cast<uint32_t>(a.grid_x);
    k.grid[1] = static_cast<uint32_t>(a.grid_y);
    k.grid[2] = static_cast<uint32_t>(a.grid_z);
    k.block[0] = static_cast<uint32_t>(a.block_x);
    k.block[1] = static_cast<uint32_t>(a.block_y);
    k.block[2] = static_cast<uint32_t>(a.block_z);
    k.registers_per_thread = a.registers_per_thread;
    k.static_shared_bytes = static_cast<uint32_t>(a.static_shared_memory);
    k.dynamic_shared_bytes = static_cast<uint32_t>(a.dynamic_shared_memory);
    k.local_bytes_per_thread = a.local_memory_per_thread;
    k.channel_id = a.channel_id;
    k.launch_type = a.launch_type;
    if (a.name != last_name) {
      last_name = a.name;
      last_id = interner.Intern(a.name);
    }
    k.name_id = last_id;
  }
}

void Report(benchmark::State& state, size_t records, size_t bytes) {
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(records),
                                                   benchmark::Counter::kIsRate);
  state.counters["bytes/record"] =
      static_cast<double>(bytes) / static_cast<double>(records ? records : 1);
  state.SetItemsProcessed(static_cast<int64_t>(records));
}

// Encoding alone: RecordBatch -> EventBatch body.
void BM_EncodeKernels(benchmark::State& state) {
  StringInterner interner;
  RecordBatch batch;
  Convert(Activities(kBatch, static_cast<size_t>(state.range(0))), interner, &batch);
  BatchEncoder encoder;
  std::string out;
  size_t records = 0, bytes = 0;
  for (auto _ : state) {
    out.clear();
    ProtoWriter w(&out);
    encoder.Encode(batch, &w);
    benchmark::DoNotOptimize(out.data());
    records += batch.size();
    bytes += out.size();
  }
  Report(state, records, bytes);
}
BENCHMARK(BM_EncodeKernels)->Arg(1)->Arg(4);

// The writer thread's whole job but the write(): convert, intern, encode,
// frame (TraceEncoder), into a buffer that is reused.
void BM_ConvertAndEncodeKernels(benchmark::State& state) {
  StringInterner interner;
  const std::vector<FakeActivityKernel> activities =
      Activities(kBatch, static_cast<size_t>(state.range(0)));
  RecordBatch batch;
  TraceEncoder encoder;
  std::string out;
  size_t records = 0, bytes = 0;
  for (auto _ : state) {
    out.clear();
    Convert(activities, interner, &batch);
    encoder.EncodeBatch(batch, interner, &out);
    benchmark::DoNotOptimize(out.data());
    records += batch.size();
    bytes += out.size();
  }
  Report(state, records, bytes);
}
BENCHMARK(BM_ConvertAndEncodeKernels)->Arg(1)->Arg(4);

}  // namespace
}  // namespace cutrace

BENCHMARK_MAIN();
