// The SAX handler behind ReadChromeTrace (see chrome_json_reader.h). It keeps
// a depth counter and the levels of the few containers it cares about (the
// events array, the current event, its args, a grid/block triple, the
// deviceProperties entries); every other value is dropped as it streams by.
#include "interop/kineto/chrome_json_reader.h"

#include <cmath>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

namespace cutrace::interop {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxNameBytes = 64 * 1024;
constexpr size_t kMaxShortBytes = 256;
constexpr size_t kMaxShownBytes = 40;

// One scalar value as the SAX parser delivers it.
struct Scalar {
  enum class Kind : uint8_t { kNull, kBool, kInt, kUint, kFloat, kString };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string* text = nullptr;  // number text (kFloat) or the string (kString)
};

std::string Shown(const Scalar& v) {
  switch (v.kind) {
    case Scalar::Kind::kNull: return "null";
    case Scalar::Kind::kBool: return v.b ? "true" : "false";
    case Scalar::Kind::kInt: return std::to_string(v.i);
    case Scalar::Kind::kUint: return std::to_string(v.u);
    case Scalar::Kind::kFloat:
    case Scalar::Kind::kString: {
      std::string s = v.text ? v.text->substr(0, kMaxShownBytes) : std::string();
      for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') c = '?';
      if (v.kind == Scalar::Kind::kString) return "\"" + s + "\"";
      return s;
    }
  }
  return "?";
}

ChromeTime ToTime(const Scalar& v) {
  ChromeTime t;
  constexpr int64_t kMaxMicros = kMaxImportNs / 1000;
  switch (v.kind) {
    case Scalar::Kind::kInt:
      if (v.i > kMaxMicros || v.i < -kMaxMicros) {
        t.state = ChromeTime::State::kOutOfRange;
      } else {
        t.state = ChromeTime::State::kOk;
        t.ns = v.i * 1000;
      }
      break;
    case Scalar::Kind::kUint:
      if (v.u > static_cast<uint64_t>(kMaxMicros)) {
        t.state = ChromeTime::State::kOutOfRange;
      } else {
        t.state = ChromeTime::State::kOk;
        t.ns = static_cast<int64_t>(v.u) * 1000;
      }
      break;
    case Scalar::Kind::kFloat:
      t.state = MicrosTextToNanos(v.text ? *v.text : std::string_view(), &t.ns);
      break;
    default:
      t.state = ChromeTime::State::kNotNumber;
      break;
  }
  if (t.state != ChromeTime::State::kOk) t.text = Shown(v);
  return t;
}

// Integer args: numbers that fit int64 (floats rounded); anything else is
// treated as absent, as Kineto writes "N/A" strings for some values.
bool ToInt(const Scalar& v, int64_t* out) {
  switch (v.kind) {
    case Scalar::Kind::kInt: *out = v.i; return true;
    case Scalar::Kind::kUint:
      if (v.u > static_cast<uint64_t>(INT64_MAX)) return false;
      *out = static_cast<int64_t>(v.u);
      return true;
    case Scalar::Kind::kFloat:
      if (!std::isfinite(v.d) || std::fabs(v.d) > 9.0e18) return false;
      *out = std::llround(v.d);
      return true;
    default: return false;
  }
}

uint64_t HashString(std::string_view s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

ChromeId ToId(const Scalar& v) {
  ChromeId id;
  id.present = true;
  if (v.kind == Scalar::Kind::kString) {
    id.hash = HashString(*v.text);
  } else if (ToInt(v, &id.value)) {
    id.numeric = true;
  }
  return id;
}

void TakeString(const Scalar& v, std::string* out, size_t limit) {
  if (v.kind != Scalar::Kind::kString) {
    out->clear();
    return;
  }
  *out = std::move(*v.text);
  if (out->size() > limit) {
    // Cut on a character boundary: the JSON parser checked that the string
    // is UTF-8, and proto3 readers reject string fields that are not.
    while (limit > 0 && (static_cast<unsigned char>((*out)[limit]) & 0xC0) == 0x80) --limit;
    out->resize(limit);
  }
}

enum class TopKey : uint8_t {
  kOther, kTraceEvents, kDeviceProperties, kDistributedInfo, kCutraceBase
};
enum class Field : uint8_t { kOther, kPh, kCat, kName, kTs, kDur, kPid, kTid, kArgs };
enum class PropKey : uint8_t { kOther, kId, kName, kMem, kMajor, kMinor, kSms, kThreads, kWarp };

Field ClassifyField(std::string_view k) {
  if (k == "ph") return Field::kPh;
  if (k == "cat") return Field::kCat;
  if (k == "name") return Field::kName;
  if (k == "ts") return Field::kTs;
  if (k == "dur") return Field::kDur;
  if (k == "pid") return Field::kPid;
  if (k == "tid") return Field::kTid;
  if (k == "args") return Field::kArgs;
  return Field::kOther;
}

uint32_t ClassifyArg(std::string_view k) {
  using A = ChromeArgs;
  if (k == "device") return A::kDevice;
  if (k == "stream") return A::kStream;
  if (k == "correlation") return A::kCorrelation;
  if (k == "context") return A::kContext;
  if (k == "registers per thread") return A::kRegisters;
  if (k == "shared memory") return A::kSharedMemory;
  if (k == "bytes") return A::kBytes;
  if (k == "inDevice") return A::kInDevice;
  if (k == "fromDevice") return A::kFromDevice;
  if (k == "toDevice") return A::kToDevice;
  if (k == "cbid") return A::kCbid;
  if (k == "wait_on_cuda_event_id") return A::kWaitEventId;
  if (k == "grid") return A::kGrid;
  if (k == "block") return A::kBlock;
  return 0;
}

PropKey ClassifyProp(std::string_view k) {
  if (k == "id") return PropKey::kId;
  if (k == "name") return PropKey::kName;
  if (k == "totalGlobalMem") return PropKey::kMem;
  if (k == "computeMajor") return PropKey::kMajor;
  if (k == "computeMinor") return PropKey::kMinor;
  if (k == "numSms") return PropKey::kSms;
  if (k == "maxThreadsPerMultiprocessor") return PropKey::kThreads;
  if (k == "warpSize") return PropKey::kWarp;
  return PropKey::kOther;
}

class Handler {
 public:
  Handler(const ChromeEventCallback& on_event, ChromeTraceMetadata* metadata)
      : on_event_(on_event), meta_(metadata) {}

  const Status& error() const { return error_; }
  bool found_events() const { return found_events_; }

  // --- nlohmann SAX interface ---
  bool null() { return OnScalar(Scalar{}); }
  bool boolean(bool b) {
    Scalar v;
    v.kind = Scalar::Kind::kBool;
    v.b = b;
    return OnScalar(v);
  }
  bool number_integer(json::number_integer_t i) {
    Scalar v;
    v.kind = Scalar::Kind::kInt;
    v.i = i;
    return OnScalar(v);
  }
  bool number_unsigned(json::number_unsigned_t u) {
    Scalar v;
    v.kind = Scalar::Kind::kUint;
    v.u = u;
    return OnScalar(v);
  }
  bool number_float(json::number_float_t d, const json::string_t& text) {
    Scalar v;
    v.kind = Scalar::Kind::kFloat;
    v.d = d;
    scratch_ = text;
    v.text = &scratch_;
    return OnScalar(v);
  }
  bool string(json::string_t& s) {
    Scalar v;
    v.kind = Scalar::Kind::kString;
    v.text = &s;
    return OnScalar(v);
  }
  bool binary(json::binary_t&) { return OnScalar(Scalar{}); }
  bool start_object(std::size_t) { return OnOpen(true); }
  bool start_array(std::size_t) { return OnOpen(false); }
  bool end_object() { return OnClose(); }
  bool end_array() { return OnClose(); }
  bool key(json::string_t& k);
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e);

 private:
  bool Fail(std::string message) {
    error_ = Status::Error(std::move(message));
    return false;
  }
  bool OnScalar(const Scalar& v);
  bool OnOpen(bool is_object);
  bool OnClose();
  void SetEventField(const Scalar& v);
  void SetProp(const Scalar& v);

  const ChromeEventCallback& on_event_;
  ChromeTraceMetadata* meta_;
  Status error_;
  std::string scratch_;

  // Levels are depth_ values while inside the container; 0 = not inside.
  int depth_ = 0;
  bool top_is_object_ = false;
  bool found_events_ = false;
  TopKey top_key_ = TopKey::kOther;
  int events_level_ = 0;
  int event_level_ = 0;
  int args_level_ = 0;
  int vec_level_ = 0;
  int props_level_ = 0;
  int prop_level_ = 0;
  int dist_level_ = 0;
  Field field_ = Field::kOther;
  uint32_t arg_ = 0;
  uint32_t vec_arg_ = 0;
  size_t vec_index_ = 0;
  PropKey prop_key_ = PropKey::kOther;
  bool dist_rank_ = false;

  uint64_t next_index_ = 0;
  ChromeEvent event_;
  ChromeDeviceProperties props_;
};

bool Handler::key(json::string_t& k) {
  int d = depth_;
  if (event_level_ && d == event_level_) {
    field_ = ClassifyField(k);
  } else if (args_level_ && d == args_level_) {
    arg_ = ClassifyArg(k);
  } else if (prop_level_ && d == prop_level_) {
    prop_key_ = ClassifyProp(k);
  } else if (dist_level_ && d == dist_level_) {
    dist_rank_ = (k == "rank");
  } else if (d == 1 && top_is_object_) {
    if (k == "traceEvents")
      top_key_ = TopKey::kTraceEvents;
    else if (k == "deviceProperties")
      top_key_ = TopKey::kDeviceProperties;
    else if (k == "distributedInfo")
      top_key_ = TopKey::kDistributedInfo;
    else if (k == "cutraceBaseTimeNanoseconds")
      top_key_ = TopKey::kCutraceBase;
    else
      top_key_ = TopKey::kOther;
  }
  return true;
}

bool Handler::OnOpen(bool is_object) {
  int d = depth_;
  if (d == 0) {
    top_is_object_ = is_object;
    if (!is_object) {
      meta_->bare_array = true;
      events_level_ = 1;
      found_events_ = true;
    }
  } else if (d == 1 && top_is_object_ && top_key_ != TopKey::kOther) {
    if (top_key_ == TopKey::kTraceEvents) {
      if (is_object) return Fail("\"traceEvents\" is not an array: not a Chrome trace");
      events_level_ = 2;
      found_events_ = true;
    } else if (top_key_ == TopKey::kDeviceProperties && !is_object) {
      props_level_ = 2;
    } else if (top_key_ == TopKey::kDistributedInfo && is_object) {
      dist_level_ = 2;
      dist_rank_ = false;
    }
  } else if (events_level_ && d == events_level_) {
    if (is_object) {
      event_ = ChromeEvent();
      event_.index = next_index_++;
      event_level_ = d + 1;
      field_ = Field::kOther;
    } else {
      ++next_index_;
      ++meta_->non_object_events;
    }
  } else if (event_level_ && d == event_level_) {
    if (is_object && field_ == Field::kArgs) {
      args_level_ = d + 1;
      arg_ = 0;
    }
  } else if (args_level_ && d == args_level_) {
    if (!is_object && (arg_ == ChromeArgs::kGrid || arg_ == ChromeArgs::kBlock)) {
      vec_level_ = d + 1;
      vec_arg_ = arg_;
      vec_index_ = 0;
      event_.args.has |= arg_;
      auto& vec = arg_ == ChromeArgs::kGrid ? event_.args.grid : event_.args.block;
      vec = {0, 0, 0};
    }
  } else if (vec_level_ && d == vec_level_) {
    ++vec_index_;  // a nested value takes a place in the triple, but no number
  } else if (props_level_ && d == props_level_ && is_object) {
    props_ = ChromeDeviceProperties();
    prop_level_ = d + 1;
    prop_key_ = PropKey::kOther;
  }
  ++depth_;
  return true;
}

bool Handler::OnClose() {
  int closed = depth_--;
  if (event_level_ == closed) {
    event_level_ = 0;
    args_level_ = 0;
    vec_level_ = 0;
    Status s = on_event_(event_);
    if (!s.ok()) {
      error_ = std::move(s);
      return false;
    }
  } else if (args_level_ == closed) {
    args_level_ = 0;
  } else if (vec_level_ == closed) {
    vec_level_ = 0;
  } else if (prop_level_ == closed) {
    prop_level_ = 0;
    if (meta_->devices.size() < kMaxDeviceProperties) meta_->devices.push_back(std::move(props_));
  } else if (events_level_ == closed) {
    events_level_ = 0;
  } else if (props_level_ == closed) {
    props_level_ = 0;
  } else if (dist_level_ == closed) {
    dist_level_ = 0;
  }
  return true;
}

void Handler::SetEventField(const Scalar& v) {
  switch (field_) {
    case Field::kPh: TakeString(v, &event_.ph, kMaxShortBytes); break;
    case Field::kCat: TakeString(v, &event_.cat, kMaxShortBytes); break;
    case Field::kName: TakeString(v, &event_.name, kMaxNameBytes); break;
    case Field::kTs: event_.ts = ToTime(v); break;
    case Field::kDur: event_.dur = ToTime(v); break;
    case Field::kPid: event_.pid = ToId(v); break;
    case Field::kTid: event_.tid = ToId(v); break;
    default: break;
  }
}

void Handler::SetProp(const Scalar& v) {
  int64_t n = 0;
  if (prop_key_ == PropKey::kName) {
    TakeString(v, &props_.name, kMaxShortBytes);
    return;
  }
  if (!ToInt(v, &n)) return;
  switch (prop_key_) {
    case PropKey::kId: props_.id = n; break;
    case PropKey::kMem: props_.total_global_mem = n; break;
    case PropKey::kMajor: props_.compute_major = n; break;
    case PropKey::kMinor: props_.compute_minor = n; break;
    case PropKey::kSms: props_.num_sms = n; break;
    case PropKey::kThreads: props_.max_threads_per_sm = n; break;
    case PropKey::kWarp: props_.warp_size = n; break;
    default: break;
  }
}

bool Handler::OnScalar(const Scalar& v) {
  int d = depth_;
  if (d == 0) return Fail("the top level is not an object or an array: not a Chrome trace");
  if (event_level_ && d == event_level_) {
    SetEventField(v);
  } else if (args_level_ && d == args_level_) {
    int64_t n = 0;
    if (arg_ == 0 || arg_ == ChromeArgs::kGrid || arg_ == ChromeArgs::kBlock || !ToInt(v, &n))
      return true;
    ChromeArgs& a = event_.args;
    a.has |= arg_;
    switch (arg_) {
      case ChromeArgs::kDevice: a.device = n; break;
      case ChromeArgs::kStream: a.stream = n; break;
      case ChromeArgs::kCorrelation: a.correlation = n; break;
      case ChromeArgs::kContext: a.context = n; break;
      case ChromeArgs::kRegisters: a.registers = n; break;
      case ChromeArgs::kSharedMemory: a.shared_memory = n; break;
      case ChromeArgs::kBytes: a.bytes = n; break;
      case ChromeArgs::kInDevice: a.in_device = n; break;
      case ChromeArgs::kFromDevice: a.from_device = n; break;
      case ChromeArgs::kToDevice: a.to_device = n; break;
      case ChromeArgs::kCbid: a.cbid = n; break;
      case ChromeArgs::kWaitEventId: a.wait_event_id = n; break;
      default: break;
    }
  } else if (vec_level_ && d == vec_level_) {
    int64_t n = 0;
    auto& vec = vec_arg_ == ChromeArgs::kGrid ? event_.args.grid : event_.args.block;
    if (vec_index_ < 3 && ToInt(v, &n)) vec[vec_index_] = n;
    ++vec_index_;
  } else if (events_level_ && d == events_level_) {
    ++next_index_;
    ++meta_->non_object_events;
  } else if (prop_level_ && d == prop_level_) {
    SetProp(v);
  } else if (dist_level_ && d == dist_level_ && dist_rank_) {
    if (v.kind == Scalar::Kind::kString)
      TakeString(v, &meta_->rank, kMaxShortBytes);
    else if (v.kind == Scalar::Kind::kInt || v.kind == Scalar::Kind::kUint)
      meta_->rank = Shown(v);
  } else if (d == 1 && top_is_object_ && top_key_ == TopKey::kCutraceBase) {
    int64_t n = 0;
    if (v.kind != Scalar::Kind::kFloat && ToInt(v, &n) && n >= 0 && n < kMaxImportNs)
      meta_->cutrace_base_ns = n;
  } else if (d == 1 && top_is_object_ && top_key_ == TopKey::kTraceEvents) {
    return Fail("\"traceEvents\" is not an array: not a Chrome trace");
  }
  return true;
}

bool Handler::parse_error(std::size_t position, const std::string&,
                          const nlohmann::detail::exception& e) {
  // nlohmann's message: "[json.exception.parse_error.101] parse error at line
  // 1, column 2: syntax error while parsing value - ...". Keep what follows
  // the bracketed id, on one line.
  std::string what = e.what();
  if (!what.empty() && what[0] == '[') {
    size_t close = what.find("] ");
    if (close != std::string::npos) what.erase(0, close + 2);
  }
  for (char& c : what)
    if (c == '\n' || c == '\r') c = ' ';
  if (what.size() > 120) what = what.substr(0, 117) + "...";
  return Fail("invalid JSON (byte " + std::to_string(position) + "): " + what);
}

}  // namespace

Status ReadChromeTrace(std::string_view text, const ChromeEventCallback& on_event,
                       ChromeTraceMetadata* metadata) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Status::Error("empty file");
  ChromeTraceMetadata scratch;
  if (metadata == nullptr) metadata = &scratch;
  *metadata = ChromeTraceMetadata();
  Handler handler(on_event, metadata);
  bool ok = json::sax_parse(text.data(), text.data() + text.size(), &handler,
                            json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/false);
  if (!ok) {
    if (!handler.error().ok()) return handler.error();
    return Status::Error("invalid JSON");
  }
  if (!handler.found_events()) return Status::Error("no \"traceEvents\" array: not a Chrome trace");
  return Status::Ok();
}

}  // namespace cutrace::interop
