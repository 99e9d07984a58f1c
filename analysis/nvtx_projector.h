// NvtxProjector: the GPU projection of NVTX ranges (nvtx_stats.h) in one
// pass over time-ordered events (analysis/time_order.h), holding only what
// is still in flight instead of every call and operation of the trace.
//
// In time order a range opens before the calls inside it, and a call comes
// before the work it launched. So each thread keeps its open ranges; a call
// with a correlation id, made while some are open, remembers that set under
// its id; an operation with that id extends the projection of every range in
// the set. A range is reported once it has ended and no remembered call
// refers to it any more.
//
// Calls are remembered in a ring of kRing slots by correlation id (ids are
// dense and increasing, so a slot is reused some kRing calls later). The
// ring starts at kRingFirst slots and doubles, re-placing what it holds,
// whenever a call would push out another before it has kRing slots: so it
// holds exactly what a ring of kRing would, and a file with few calls in
// ranges (one of 1000 small rank traces) costs a few KiB, not 256. A call
// pushed out of the ring before any work arrived for it, or one that
// launched a CUDA graph (whose nodes share its id), moves to an overflow
// table if it is a launch, copy or memset call (ApiRole::kLaunch), so its
// work still counts however late it runs; the overflow keeps the newest
// kOverflow such calls. The projection differs from joining the whole trace
// by correlation id only when work starts more than kRing correlation ids
// after a call that is not a launch call, or after kOverflow later launches
// whose work has not started either; the launch queue of a GPU holds a few
// thousand operations, far below both. Work that starts before its call
// (impossible on one clock) is not joined.
//
// Each file has its own ids and threads (TimedItem::file, ::a = thread slot).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "analysis/gap_causes.h"
#include "analysis/nvtx_stats.h"
#include "analysis/time_order.h"
#include "analysis/timeline_sweep.h"

namespace cutrace::analysis {

class NvtxProjector {
 public:
  static constexpr uint32_t kRing = 1u << 14;
  static constexpr uint32_t kRingFirst = 1u << 6;
  static constexpr size_t kOverflow = 1u << 16;

  // Called once per range whose projection has work (ops > 0), with the
  // range's item (file, index, b = row) and its projection.
  using Done = std::function<void(const TimedItem& range, const GpuProjection& projection)>;
  explicit NvtxProjector(Done done) : done_(std::move(done)) {}

  // Which launches a range's projection takes (issue 19 point 7):
  //  - kThread (nsys's rule, the default): those of the thread that pushed
  //    the range, while it is open;
  //  - kProcess: those of any thread of the range's file (one process),
  //    while it is open; for work that other threads launch, as PyTorch's
  //    autograd thread does for `loss.backward()`.
  // Set before the first event.
  enum class Scope : uint8_t { kThread, kProcess };
  void set_scope(Scope scope) { process_ = scope == Scope::kProcess; }
  // With kThread: launch calls made outside every range of their own thread
  // while a range of another thread of the file was open, which kProcess
  // would have given to it; the reports then point at kProcess.
  uint64_t other_thread_launches() const { return other_thread_launches_; }

  // Events in time order. Range: a = thread slot, b = row; only push/pop and
  // start/end ranges. API call: a = thread slot, b = ApiRole. GPU operation:
  // type carries kOpGraph (timeline_sweep.h).
  // Api() and Op() are inline (below): once per event, from
  // ReportEngine::Release()'s loop.
  void Range(const TimedItem& range);
  [[gnu::always_inline]] inline void Api(const TimedItem& call);
  [[gnu::always_inline]] inline void Op(const TimedItem& op);

  // Ends the pass: every range with work is reported.
  void Finish();

 private:
  struct Instance {
    TimedItem range;
    GpuProjection projection{UINT64_MAX, 0, 0};
    uint32_t refs = 0;
  };
  // The open ranges of a thread between two changes, shared by every call
  // made meanwhile. Work is gathered here and spread over the ranges once
  // the snapshot is released: one update per operation, not per range.
  struct Snapshot {
    std::vector<uint32_t> instances;
    uint32_t refs = 0;
    GpuProjection work{UINT64_MAX, 0, 0};
  };
  // A ring slot; in use while `correlation` is not 0 (calls without a
  // correlation id are never remembered), so matching an id tests one field.
  struct Entry {
    uint64_t correlation = 0;
    uint32_t snapshot = 0;
    bool launch = false;  // ApiRole::kLaunch
    bool got_op = false;
    bool graph = false;
  };
  struct Thread {
    std::vector<uint32_t> open;  // instances
    uint64_t first_end = UINT64_MAX;  // the earliest end among `open`
    uint32_t snapshot = kNone;        // the set `open`, while unchanged
  };
  struct File {
    std::vector<Thread> threads;
    uint64_t latest_end = 0;  // the latest end of the ranges so far (any thread)
    uint32_t thread_count = 0;  // threads.size(), see FileFor()
    std::vector<Entry> ring;  // allocated at the first call inside a range
    uint64_t mask = 0;        // ring.size() - 1
    std::unordered_map<uint64_t, Entry> overflow;
    std::deque<uint64_t> overflow_order;
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  // Inline, once or twice per event. The sizes are kept beside the vectors:
  // size() divides by the element's size, which costs three instructions
  // more than reading a count.
  // Always inlined, the growth apart: GCC otherwise leaves it out of line
  // once the release loop it sits in grows (a call per event).
  [[gnu::always_inline]] File& FileFor(uint16_t file) {
    if (__builtin_expect(file >= file_count_, 0)) GrowFiles(file);
    return files_[file];
  }
  [[gnu::noinline]] void GrowFiles(uint16_t file) {
    files_.resize(file + 1u);
    file_count_ = files_.size();
  }
  Thread& ThreadFor(File& f, uint32_t slot) {
    if (slot >= f.thread_count) {
      f.threads.resize(slot + 1u);
      f.thread_count = static_cast<uint32_t>(f.threads.size());
    }
    return f.threads[slot];
  }
  // Closes the thread's ranges that ended by `now` (inline: once per call).
  void Expire(Thread& t, uint64_t now) {
    if (now >= t.first_end) ExpireEnded(t, now);
  }
  void ExpireEnded(Thread& t, uint64_t now);
  uint32_t NewSnapshot();
  void UnrefInstance(uint32_t id);
  // Always inlined: Evict() calls it for most calls, and GCC left it out of
  // line once the release loop grew (a call per event).
  [[gnu::always_inline]] void UnrefSnapshot(uint32_t id) {
    if (--snapshots_[id].refs == 0) FreeSnapshot(id);
  }
  void FreeSnapshot(uint32_t id);
  // Frees a ring slot for a new call (inline: once per call once the ring
  // has filled). Work may still come for a launch that has seen none, or
  // for a graph launch (more nodes): those move to the overflow table.
  [[gnu::always_inline]] void Evict(File& f, Entry& e) {
    if (e.launch && (!e.got_op || e.graph))
      Overflow(f, e);
    else
      UnrefSnapshot(e.snapshot);
    e.correlation = 0;
  }
  void Overflow(File& f, const Entry& e);
  // Doubles the file's ring, every entry to its slot in the larger one (ids
  // apart in the smaller ring stay apart), and returns `correlation`'s slot.
  Entry* Grow(File& f, uint64_t correlation);
  // The rare paths of Api() and Op(), out of line: the thread's open ranges
  // as a new snapshot; a second call with an entry's id; work for a call
  // in the overflow table.
  void TakeSnapshot(Thread& t);
  void SameId(Entry& e, const Thread& t, const TimedItem& call);
  void OverflowOp(File& f, const TimedItem& op, bool graph);
  void Extend(const Entry& e, const TimedItem& op) {
    GpuProjection& p = snapshots_[e.snapshot].work;
    p.start_ns = op.start < p.start_ns ? op.start : p.start_ns;
    p.end_ns = op.end > p.end_ns ? op.end : p.end_ns;
    ++p.ops;
  }

  Done done_;
  bool process_ = false;  // Scope::kProcess: every thread is thread slot 0
  uint64_t other_thread_launches_ = 0;
  std::vector<File> files_;
  size_t file_count_ = 0;  // files_.size()
  std::vector<Instance> instances_;
  std::vector<uint32_t> free_instances_;
  std::vector<Snapshot> snapshots_;
  std::vector<uint32_t> free_snapshots_;
};

[[gnu::always_inline]] inline void NvtxProjector::Api(const TimedItem& call) {
  if (call.correlation == 0) return;
  File& f = FileFor(call.file);
  Thread& t = ThreadFor(f, process_ ? 0 : call.a);
  Expire(t, call.start);
  if (t.open.empty()) {  // in no range: its work is nobody's
    // Ranges come in start order: one that started before this call and
    // ends after it is open now, and is another thread's.
    if (call.start < f.latest_end && LaunchesWork(static_cast<ApiRole>(call.b)))
      ++other_thread_launches_;
    return;
  }
  if (t.snapshot == kNone) TakeSnapshot(t);
  if (f.ring.empty()) {
    f.ring.resize(kRingFirst);
    f.mask = kRingFirst - 1;
  }
  Entry* slot = &f.ring[call.correlation & f.mask];
  if (slot->correlation == call.correlation) {
    SameId(*slot, t, call);
    return;
  }
  if (slot->correlation != 0) {
    while (slot->correlation != 0 && f.ring.size() < kRing) slot = Grow(f, call.correlation);
    if (slot->correlation != 0) Evict(f, *slot);
  }
  Entry& e = *slot;
  e = Entry{call.correlation, t.snapshot, LaunchesWork(static_cast<ApiRole>(call.b)), false,
            false};
  ++snapshots_[t.snapshot].refs;
  // The next call (ids are dense) evicts the entry after this one: start
  // loading the snapshot it will release, which is rarely still in cache
  // kRing calls after it was taken.
  const Entry& next = f.ring[(call.correlation + 1) & f.mask];
  if (next.correlation != 0) __builtin_prefetch(&snapshots_[next.snapshot], 1);
}

[[gnu::always_inline]] inline void NvtxProjector::Op(const TimedItem& op) {
  if (op.correlation == 0 || op.file >= file_count_) return;
  File& f = files_[op.file];
  const bool graph = (op.type & kOpGraph) != 0;
  if (!f.ring.empty()) {
    Entry& e = f.ring[op.correlation & f.mask];
    if (e.correlation == op.correlation) {
      Extend(e, op);
      e.got_op = true;
      e.graph = e.graph || graph;
      return;
    }
  }
  if (!f.overflow.empty()) OverflowOp(f, op, graph);
}

}  // namespace cutrace::analysis
