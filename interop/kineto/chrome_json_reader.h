// A reader of Chrome trace JSON (the format torch.profiler/Kineto writes):
// `{"traceEvents":[...], "deviceProperties":[...], ...}` or a bare array of
// events. simdjson On-Demand walks the text once (its stage 1 checks the
// structure, UTF-8 and unescaped control characters of the whole document);
// each event object is handed to a callback as soon as its fields are read,
// so memory beyond the text and simdjson's index stays bounded by one event.
//
// Only the fields cutrace can use are read (ph, cat, name, ts, dur, pid, tid
// and a fixed set of args); everything else is skipped structurally, not
// converted. Values that are read are validated; a malformed number in an
// element of the events array that is not an object fails the read too.
// Times are converted from the text of the number (microseconds, possibly
// fractional) to integer nanoseconds exactly, rounding half away from zero,
// so no double ever stands between two timestamps and their order is kept.
// String pids/tids ("Spans", "stream 7") are interned: each distinct string
// gets the next id, so distinct strings stay distinct, exactly.
//
// Limits: simdjson reads documents below 4 GiB; nesting has no limit (a
// skipped value is passed over by counting brackets, without recursion).
// Single-threaded; no exceptions escape.
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
  int64_t value = 0;      // numeric ids
  uint32_t string = 0;    // string ids: 0, 1, 2... in order of first appearance
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
  std::string name;  // args.name: what metadata events ("process_name") name

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
  // Kineto's top-level "baseTimeNanoseconds": the Unix-epoch instant its
  // "ts" values count from. Negative when absent or invalid.
  int64_t base_time_ns = -1;
  // Top-level "cuda_runtime_version", "cuda_driver_version" (e.g. 12040) and
  // "cupti_version"; 0 when absent.
  int64_t cuda_runtime_version = 0;
  int64_t cuda_driver_version = 0;
  int64_t cupti_version = 0;
};
inline constexpr size_t kMaxDeviceProperties = 1024;

// JSON text followed by the zero bytes the parser may read past its end.
class PaddedJson {
 public:
  static constexpr size_t kPadding = 64;
  PaddedJson() = default;
  static PaddedJson Copy(std::string_view text);
  // Takes `bytes` (the text) and pads it.
  static PaddedJson Adopt(std::string bytes);
  // Refers to `text`, after which `readable` - text.size() >= kPadding bytes
  // can be read (a mapped file's last page); the bytes must outlive this.
  static PaddedJson View(std::string_view text, size_t readable);
  std::string_view text() const { return {view_ ? view_ : buffer_.data(), size_}; }
  size_t capacity() const { return view_ ? capacity_ : buffer_.size(); }

 private:
  std::string buffer_;          // the text and its padding, unless a view
  const char* view_ = nullptr;  // set for a view
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Called for every event object, in file order. Returning an error stops the
// parse and becomes the result of ReadChromeTrace. The event may be moved from.
using ChromeEventCallback = std::function<Status(ChromeEvent& event)>;

// Parses `json` (the whole file). Errors are one line, without the path:
// "empty file", "invalid JSON (byte N): ...", "no "traceEvents" array: not a
// Chrome trace", or whatever the callback returned.
Status ReadChromeTrace(const PaddedJson& json, const ChromeEventCallback& on_event,
                       ChromeTraceMetadata* metadata);

}  // namespace cutrace::interop
