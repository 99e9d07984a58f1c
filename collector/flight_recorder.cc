// See flight_recorder.h.
#include "collector/flight_recorder.h"

#include <algorithm>

namespace cutrace {
namespace {

// Keeps the last `keep` records of `v` (the newest, in delivery order).
template <typename T>
void KeepLast(std::vector<T>* v, size_t keep) {
  if (v->size() <= keep) return;
  v->erase(v->begin(), v->end() - static_cast<ptrdiff_t>(keep));
}

}  // namespace

uint64_t FlightRecorder::records() const {
  uint64_t n = 0;
  for (const Entry& e : ring_) n += e.batch.size();
  return n;
}

void FlightRecorder::Add(const RecordBatch& batch, int64_t now_ns) {
  if (batch.empty()) return;
  Entry e;
  e.batch = batch;
  e.received_ns = now_ns;
  e.bytes = e.batch.bytes();
  if (options_.max_bytes != 0 && e.bytes > options_.max_bytes) {
    // Too big on its own: keep each kind's newest records, in proportion.
    const double share = static_cast<double>(options_.max_bytes) / static_cast<double>(e.bytes);
    const uint64_t before = e.batch.size();
    ForEachKind([&](auto, auto& v) { KeepLast(&v, static_cast<size_t>(v.size() * share)); },
                e.batch);
    evicted_records_ += before - e.batch.size();
    e.bytes = e.batch.bytes();
  }
  bytes_ += e.bytes;
  ring_.push_back(std::move(e));
  Evict(now_ns);
}

void FlightRecorder::Evict(int64_t now_ns) {
  while (!ring_.empty()) {
    const Entry& oldest = ring_.front();
    const bool too_old = options_.max_age_ns != 0 &&
                         now_ns - oldest.received_ns > static_cast<int64_t>(options_.max_age_ns);
    const bool too_big = options_.max_bytes != 0 && bytes_ > options_.max_bytes;
    if (!too_old && !too_big) break;
    bytes_ -= oldest.bytes;
    evicted_records_ += oldest.batch.size();
    ring_.pop_front();
  }
}

Status FlightRecorder::Dump(SideTrace* out, const StringInterner& source) const {
  for (const Entry& e : ring_) {
    if (Status s = out->Write(e.batch, source); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace cutrace
