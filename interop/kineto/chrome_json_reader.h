// A streaming reader of Chrome trace JSON (the format torch.profiler/Kineto
// writes): `{"traceEvents":[...], "deviceProperties":[...], ...}` or a bare
// array of events. It walks the text once with nlohmann's SAX interface and
// hands each event object to a callback as soon as it is closed, so memory
// stays bounded by one event, never by the file.
//
// Only the fields cutrace can use are kept (ph, cat, name, ts, dur, pid, tid
// and a fixed set of args); everything else is skipped without being stored.
// Times are converted from the text of the number (microseconds, possibly
// fractional) to integer nanoseconds exactly, rounding half away from zero,
// so no double ever stands between two timestamps and their order is kept.
//
// Single-threaded; no exceptions escape (nlohmann's SAX parser reports errors
// through the handler, and this reader returns them as a Status).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/status.h"
#include "interop/kineto/chrome_time.h"

namespace cutrace::interop {

// pid or tid: Kineto writes integers, some tools strings ("Spans").
struct ChromeId {
  bool present = false;
  bool numeric = false;
  int64_t value = 0;  // numeric ids
  uint64_t hash = 0;  // string ids: a stable hash, so distinct strings stay distinct
};

// The args cutrace reads. `has` is a bit set of Arg.
struct ChromeArgs {
  enum Arg : uint32_t {
    kDevice = 1u << 0,
    kStream = 1u << 1,
    kCorrelation = 1u << 2,
    kContext = 1u << 3,
    kRegisters = 1u << 4,
    kSharedMemory = 1u << 5,
    kBytes = 1u << 6,
    kInDevice = 1u << 7,
    kFromDevice = 1u << 8,
    kToDevice = 1u << 9,
    kCbid = 1u << 10,
    kWaitEventId = 1u << 11,
    kGrid = 1u << 12,
    kBlock = 1u << 13,
  };
  uint32_t has = 0;
  int64_t device = 0, stream = 0, correlation = 0, context = 0, registers = 0,
          shared_memory = 0, bytes = 0, in_device = 0, from_device = 0, to_device = 0, cbid = 0,
          wait_event_id = 0;
  std::array<int64_t, 3> grid{0, 0, 0};
  std::array<int64_t, 3> block{0, 0, 0};

  bool Has(Arg a) const { return (has & a) != 0; }
};

struct ChromeEvent {
  uint64_t index = 0;  // position in traceEvents, from 0
  std::string ph, cat, name;
  ChromeTime ts, dur;
  ChromeId pid, tid;
  ChromeArgs args;
};

// One entry of Kineto's top-level "deviceProperties".
struct ChromeDeviceProperties {
  int64_t id = -1;
  std::string name;
  int64_t total_global_mem = 0;
  int64_t compute_major = 0;
  int64_t compute_minor = 0;
  int64_t num_sms = 0;
  int64_t max_threads_per_sm = 0;
  int64_t warp_size = 0;
};

// What the file says outside its events.
struct ChromeTraceMetadata {
  bool bare_array = false;
  uint64_t non_object_events = 0;  // elements of traceEvents that are not objects
  std::vector<ChromeDeviceProperties> devices;  // at most kMaxDeviceProperties
  std::string rank;                              // distributedInfo.rank, if any
  // Top-level "cutraceBaseTimeNanoseconds", written by `cutrace export`: its
  // "ts" values count from this instant. Negative when absent or invalid.
  int64_t cutrace_base_ns = -1;
};
inline constexpr size_t kMaxDeviceProperties = 1024;

// Called for every event object, in file order. Returning an error stops the
// parse and becomes the result of ReadChromeTrace. The event may be moved from.
using ChromeEventCallback = std::function<Status(ChromeEvent& event)>;

// Parses `text` (the whole file). Errors are one line, without the path:
// "empty file", "invalid JSON at line L, column C: ...", "no traceEvents
// array: not a Chrome trace", or whatever the callback returned.
Status ReadChromeTrace(std::string_view text, const ChromeEventCallback& on_event,
                       ChromeTraceMetadata* metadata);

}  // namespace cutrace::interop
