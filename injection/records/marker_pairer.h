// MarkerPairer: turns CUPTI's NVTX MARKER records (a start record and an end
// record per range, sharing an id, plus instantaneous marks) into finished
// RangeRecords with their domain and per-thread nesting depth, and applies
// MARKER_DATA colors.
//
// How the kind is decided, since CUPTI's records do not say push/pop or
// start/end: a range whose start record names no thread (process scope,
// thread 0) is start/end; a range that ends on another thread than it started,
// or that ends while a range opened after it on its thread is still open, is
// start/end; every other range is push/pop. Depth counts the push/pop ranges
// open on the same thread in the same domain when the range started (0 =
// outermost), matching NVTX's per-thread, per-domain stacks. A start/end
// range that was nested LIFO on one thread is indistinguishable from a
// push/pop one and is reported as push/pop.
//
// Recording that stops and starts again (continuous mode's windows, its
// on-demand captures among them) cuts ranges: one open when recording stops
// may end unseen, and one that ends in a window may have started unseen
// before it. So at a stop the open ranges leave their stacks (the depths of
// the next window's ranges count only what that window saw open) but stay
// paired by id, so an end in a later window still makes the range, at its
// own depth; one still open after kCutStopsKept more stops is dropped, which
// bounds what a day of windows keeps. Neither a cut range nor, once recording has stopped, an
// end without a start is counted invalid.
//
// Threads: not thread-safe; the ActivityProcessor serializes calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collector/records.h"
#include "injection/activity_stats.h"

namespace cutrace::injection {

// The fields of a CUpti_ActivityMarker2 that pairing needs, names interned.
struct MarkerEvent {
  uint64_t timestamp = 0;
  uint32_t id = 0;
  uint32_t flags = 0;  // CUPTI_ACTIVITY_FLAG_MARKER_*
  bool process_scoped = false;  // CUPTI_ACTIVITY_OBJECT_PROCESS with no thread id
  uint64_t thread_id = 0;
  uint32_t name_id = 0;    // start and instantaneous markers
  uint32_t domain_id = 0;  // 0 = default domain
};

class MarkerPairer {
 public:
  explicit MarkerPairer(size_t max_open = 1u << 20) : max_open_(max_open) {}

  // Feeds one MARKER record; a finished range or mark is appended to *out,
  // rejected ones are counted in *stats.
  void OnMarker(const MarkerEvent& e, std::vector<RangeRecord>* out, ActivityStats* stats);

  // Feeds one MARKER_DATA record: sets the color of the open range `id`, or
  // of a range or mark with that id among the last few in *out.
  void OnMarkerData(uint32_t id, uint32_t color, std::vector<RangeRecord>* out);

  size_t open_count() const { return open_.size(); }

  // Recording stopped (every record before the stop has been fed): the open
  // ranges are cut (see above).
  void OnRecordingStopped();

  // Counts every range still open as unclosed (at shutdown), but the cut ones.
  void CountUnclosed(ActivityStats* stats) const;

  // Stops a cut range is kept through, waiting for its end.
  static constexpr uint32_t kCutStopsKept = 4;

 private:
  struct Open {
    uint64_t start_ns = 0;
    uint64_t thread_id = 0;
    uint32_t name_id = 0;
    uint32_t domain_id = 0;
    uint32_t depth = 0;
    uint32_t color = 0;
    bool on_stack = false;  // thread-scoped: pushed on its (thread, domain) stack
    bool pushed = false;    // was on a stack when recording stopped (push/pop so far)
    uint32_t cut_stops = 0;  // recording stops since it started (0: not cut)
  };
  struct StackKey {
    uint64_t thread_id;
    uint32_t domain_id;
    bool operator==(const StackKey&) const = default;
  };
  struct StackKeyHash {
    size_t operator()(const StackKey& k) const {
      return std::hash<uint64_t>{}(k.thread_id * 0x9E3779B97F4A7C15ull ^ k.domain_id);
    }
  };

  void OnStart(const MarkerEvent& e, ActivityStats* stats);
  void OnEnd(const MarkerEvent& e, std::vector<RangeRecord>* out, ActivityStats* stats);
  void OnMark(const MarkerEvent& e, std::vector<RangeRecord>* out, ActivityStats* stats);
  // Removes `id` from its stack; true if it was the innermost range there.
  bool RemoveFromStack(uint32_t id, const Open& open);

  size_t max_open_;
  bool stopped_once_ = false;  // recording has stopped at least once
  std::unordered_map<uint32_t, Open> open_;
  std::unordered_map<StackKey, std::vector<uint32_t>, StackKeyHash> stacks_;
};

}  // namespace cutrace::injection
