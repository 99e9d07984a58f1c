// A trace that claims huge counts, ids or lengths cannot make the reader
// allocate more than the file's size warrants. This binary replaces the
// global operator new/delete with counting versions, so it measures every
// allocation LoadTraceFromBytes makes (its own, the decoders', libprotobuf's)
// and asserts the peak of live bytes stays below a bound proportional to the
// input: a legitimate event costs at least one byte on disk and at most
// sizeof(KernelRecord) plus bookkeeping in memory.
//
// It lives in its own test binary (area `reader`) because the counting
// operator new applies to the whole program.
#include <malloc.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "collector/records.h"
#include "collector/trace_loader.h"
#include "collector/trace_writer.h"
#include "proto/cutrace.pb.h"

namespace {

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void* Counted(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  const size_t live = g_live.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
  size_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}

void Uncounted(void* p) {
  if (p == nullptr) return;
  g_live.fetch_sub(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

void* operator new(size_t n) { return Counted(n); }
void* operator new[](size_t n) { return Counted(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return Counted(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return Counted(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { Uncounted(p); }
void operator delete[](void* p) noexcept { Uncounted(p); }
void operator delete(void* p, size_t) noexcept { Uncounted(p); }
void operator delete[](void* p, size_t) noexcept { Uncounted(p); }

namespace cutrace {
namespace {

// Bytes of memory one byte of trace may legitimately become: a kernel event
// can take as little as one byte on disk and is a KernelRecord in memory.
constexpr size_t kBytesPerInputByte = 4 * sizeof(KernelRecord);
constexpr size_t kSlack = 8u << 20;  // libprotobuf's descriptors, the first packet's buffers

// Loads `bytes` and returns the peak of live heap bytes the load added.
size_t PeakWhileLoading(const std::string& bytes, bool* loaded) {
  const size_t base = g_live.load();
  g_peak.store(base);
  StatusOr<TraceData> t = LoadTraceFromBytes(bytes, "hostile.trace");
  *loaded = t.ok();
  return g_peak.load() - base;
}

void ExpectBounded(const std::string& bytes, const char* what) {
  bool loaded = false;
  const size_t peak = PeakWhileLoading(bytes, &loaded);
  const size_t bound = kBytesPerInputByte * bytes.size() + kSlack;
  EXPECT_LE(peak, bound) << what << ": " << bytes.size() << " input bytes made the reader hold "
                         << peak << " bytes at once";
}

std::string Header() {
  HeaderInfo h;
  h.producer = "reader_allocation_test";
  h.pid = 1;
  TraceEncoder enc;
  std::string out;
  enc.EncodeHeader(h, &out);
  return out;
}

std::string Frame(const proto::TracePacket& packet) {
  proto::Trace t;
  *t.add_packet() = packet;
  return t.SerializeAsString();
}

// Appends a varint.
void Varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

TEST(ReaderAllocation, CountersSeeTheLoad) {
  // The harness itself: a large legitimate trace does allocate, so a zero
  // peak below would mean the counting operator new is not in use.
  proto::TracePacket p;
  auto* k = p.mutable_events()->mutable_kernels();
  k->set_count(100000);
  for (int i = 0; i < 100000; ++i) k->add_start_delta_ns(1);
  bool loaded = false;
  const size_t peak = PeakWhileLoading(Header() + Frame(p), &loaded);
  EXPECT_TRUE(loaded);
  EXPECT_GE(peak, 100000 * sizeof(KernelRecord) / 2);
}

TEST(ReaderAllocation, HugeEventCountsWithFewValues) {
  std::string bytes = Header();
  proto::TracePacket p;
  auto* e = p.mutable_events();
  e->mutable_kernels()->set_count(0xFFFFFFFFu);
  e->mutable_kernels()->add_start_delta_ns(1);
  e->mutable_memcpys()->set_count(0xFFFFFFFFu);
  e->mutable_memsets()->set_count(0x7FFFFFFFu);
  e->mutable_ranges()->set_count(0xFFFFFFF0u);
  e->mutable_api_calls()->set_count(0xFFFFFFFFu);
  e->mutable_syncs()->set_count(0xFFFFFFFFu);
  for (int i = 0; i < 64; ++i) bytes += Frame(p);
  ExpectBounded(bytes, "count 2^32-1 with one value");
}

TEST(ReaderAllocation, HugeIdsAndShapes) {
  std::string bytes = Header();
  proto::TracePacket interned;
  auto* s = interned.mutable_interned()->add_strings();
  s->set_id(0xFFFFFFFEu);
  s->set_value("k");
  auto* shape = interned.mutable_interned()->add_kernel_shapes();
  shape->set_id(0xFFFFFFFEu);
  shape->set_name_id(0xFFFFFFFEu);
  bytes += Frame(interned);
  proto::TracePacket p;
  auto* k = p.mutable_events()->mutable_kernels();
  k->set_count(4);
  for (uint32_t id : {0xFFFFFFFFu, 0x7FFFFFFFu, 0x10000u, 3u}) {
    k->add_start_delta_ns(1);
    k->add_shape_id(id);
  }
  auto* r = p.mutable_events()->mutable_ranges();
  r->set_count(2);
  r->add_start_delta_ns(1);
  r->add_start_delta_ns(1);
  r->add_name_id(0xFFFFFFFFu);
  r->add_name_id(0xFFFFFFF0u);
  bytes += Frame(p);
  proto::TracePacket d;
  d.mutable_device()->set_id(0xFFFFFFFFu);
  bytes += Frame(d);
  ExpectBounded(bytes, "ids near 2^32");
}

TEST(ReaderAllocation, HugeLengthsClaimed) {
  const std::string header = Header();
  for (uint64_t len : {uint64_t{1} << 31, uint64_t{1} << 40, ~uint64_t{0} >> 1}) {
    std::string bytes = header;
    bytes.push_back(0x0A);  // Trace.packet
    Varint(len, &bytes);
    bytes.append(64, '\x22');
    ExpectBounded(bytes, "packet length");
    // A packet whose inner field (a string in a Warning) claims the huge length.
    std::string inner = header;
    std::string body;
    body.push_back(0x42);  // TracePacket.warning (8), length-delimited
    Varint(len, &body);
    body.append(32, 'x');
    inner.push_back(0x0A);
    Varint(body.size(), &inner);
    inner += body;
    ExpectBounded(inner, "inner length");
  }
}

TEST(ReaderAllocation, ManyPacketsOfOneEventEach) {
  // Legitimate but adversarial: each packet carries one kernel, so per-packet
  // bookkeeping must stay proportional too.
  std::string bytes = Header();
  proto::TracePacket p;
  p.mutable_events()->mutable_kernels()->set_count(1);
  p.mutable_events()->mutable_kernels()->add_start_delta_ns(5);
  const std::string one = Frame(p);
  for (int i = 0; i < 20000; ++i) bytes += one;
  ExpectBounded(bytes, "20000 one-kernel packets");
}

TEST(ReaderAllocation, CounterSamplesClaimingManyValues) {
  std::string bytes = Header();
  proto::TracePacket p;
  auto* c = p.mutable_counters();
  for (int i = 0; i < 1000; ++i) c->add_metric_name_ids(0xFFFFFFFFu - i);
  auto* sample = c->add_samples();
  sample->set_range_name_id(0xFFFFFFFFu);
  sample->add_values(1.0);
  for (int i = 0; i < 16; ++i) bytes += Frame(p);
  ExpectBounded(bytes, "counter batches");
}

}  // namespace
}  // namespace cutrace
