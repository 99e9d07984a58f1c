// ReadChromeTrace (see chrome_json_reader.h) on simdjson On-Demand: the
// document is walked in file order, each level by one function (the top
// level, the events array, an event, its args, deviceProperties,
// distributedInfo); a value no function asks for is skipped by simdjson.
#include "interop/kineto/chrome_json_reader.h"

#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>

#include <simdjson.h>

namespace cutrace::interop {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

constexpr size_t kMaxNameBytes = 64 * 1024;
constexpr size_t kMaxShortBytes = 256;
constexpr size_t kMaxShownBytes = 40;
// Stops the walk when the reason is not simdjson's (kept in Reader::status_).
constexpr error_code kStopped = simdjson::UNEXPECTED_ERROR;

std::string_view Trimmed(std::string_view raw) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\n' ||
                          raw.back() == '\r'))
    raw.remove_suffix(1);
  return raw;
}

// A value as written, short and printable, for messages.
std::string Shown(std::string_view raw) {
  raw = Trimmed(raw);
  const bool quoted = !raw.empty() && raw.front() == '"';
  if (quoted) raw = raw.substr(1, raw.size() >= 2 ? raw.size() - 2 : 0);
  std::string s(raw.substr(0, kMaxShownBytes));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') c = '?';
  return quoted ? "\"" + s + "\"" : s;
}

// Cut on a character boundary: stage 1 checked that the text is UTF-8, and
// proto3 readers reject string fields that are not.
void Assign(std::string_view v, size_t limit, std::string* out) {
  if (v.size() > limit) {
    while (limit > 0 && (static_cast<unsigned char>(v[limit]) & 0xC0) == 0x80) --limit;
    v = v.substr(0, limit);
  }
  out->assign(v.data(), v.size());
}

// Strings only; anything else leaves `out` empty.
void TakeString(od::value& v, size_t limit, std::string* out) {
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) {
    out->clear();
    return;
  }
  Assign(s, limit, out);
}

// Integer args: numbers that fit int64 (floats rounded); anything else is
// treated as absent, as Kineto writes "N/A" strings for some values.
bool ToInt(od::value& v, int64_t* out) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS || t != od::json_type::number) return false;
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    *out = i;
    return true;
  }
  double d = 0;
  if (v.get_double().get(d) != simdjson::SUCCESS) return false;
  if (!std::isfinite(d) || std::fabs(d) > 9.0e18) return false;
  *out = std::llround(d);
  return true;
}

ChromeTime ToTime(od::value& v) {
  ChromeTime t;
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) {
    t.state = ChromeTime::State::kNotNumber;
    t.text = "?";
    return t;
  }
  if (type == od::json_type::object || type == od::json_type::array) {
    t.state = ChromeTime::State::kNotNumber;
    t.text = type == od::json_type::object ? "an object" : "an array";
    return t;
  }
  std::string_view raw = Trimmed(v.raw_json_token());
  t.state = type == od::json_type::number ? MicrosTextToNanos(raw, &t.ns)
                                          : ChromeTime::State::kNotNumber;
  if (t.state != ChromeTime::State::kOk) t.text = Shown(raw);
  return t;
}

// A scalar that is read nowhere else is still checked, so a malformed one
// is an error rather than a silent skip.
error_code ValidateScalar(od::value& v, od::json_type t) {
  switch (t) {
    case od::json_type::number: return v.get_double().error();
    case od::json_type::string: return v.get_string().error();
    case od::json_type::boolean: return v.get_bool().error();
    case od::json_type::null:
      return Trimmed(v.raw_json_token()) == "null" ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    default: return simdjson::SUCCESS;
  }
}

// The integer args and where they go.
struct ArgField {
  std::string_view key;
  uint32_t bit;
  int64_t ChromeArgs::*slot;
};
constexpr ArgField kArgFields[] = {
    {"device", ChromeArgs::kDevice, &ChromeArgs::device},
    {"stream", ChromeArgs::kStream, &ChromeArgs::stream},
    {"correlation", ChromeArgs::kCorrelation, &ChromeArgs::correlation},
    {"context", ChromeArgs::kContext, &ChromeArgs::context},
    {"registers per thread", ChromeArgs::kRegisters, &ChromeArgs::registers},
    {"shared memory", ChromeArgs::kSharedMemory, &ChromeArgs::shared_memory},
    {"bytes", ChromeArgs::kBytes, &ChromeArgs::bytes},
    {"inDevice", ChromeArgs::kInDevice, &ChromeArgs::in_device},
    {"fromDevice", ChromeArgs::kFromDevice, &ChromeArgs::from_device},
    {"toDevice", ChromeArgs::kToDevice, &ChromeArgs::to_device},
    {"cbid", ChromeArgs::kCbid, &ChromeArgs::cbid},
    {"wait_on_cuda_event_id", ChromeArgs::kWaitEventId, &ChromeArgs::wait_event_id},
};

// Walks one field list: calls f(key, value) for each field of `object`. Keys
// are compared as written (no unescaping: Kineto never escapes its keys).
template <typename F>
error_code ForEachField(od::object& object, F&& f) {
  for (auto member : object) {
    od::field field;
    if (error_code e = std::move(member).get(field)) return e;
    // The type of every value is checked (its first character), read or not:
    // NaN, Infinity and other non-JSON are errors, not skipped values.
    od::json_type type;
    if (error_code e = field.value().type().get(type)) return e;
    if (error_code e = f(field.key(), field.value())) return e;
  }
  return simdjson::SUCCESS;
}

class Reader {
 public:
  Reader(const ChromeEventCallback& on_event, ChromeTraceMetadata* meta)
      : on_event_(on_event), meta_(meta) {}
  Status Run(const PaddedJson& json);

 private:
  error_code Stop(Status s) {
    status_ = std::move(s);
    return kStopped;
  }
  error_code ReadTop(od::object& top);
  error_code ReadEvents(od::array& events);
  error_code ReadEvent(od::object& object);
  error_code ReadArgs(od::object& args);
  error_code ReadDevice(od::object& object);
  ChromeId ToId(od::value& v);

  const ChromeEventCallback& on_event_;
  ChromeTraceMetadata* meta_;
  Status status_;
  bool found_events_ = false;
  uint64_t next_index_ = 0;
  ChromeEvent event_;
  std::unordered_map<std::string, uint32_t> id_strings_;
};

ChromeId Reader::ToId(od::value& v) {
  ChromeId id;
  id.present = true;
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    std::string key;
    Assign(s, kMaxShortBytes, &key);
    auto it = id_strings_.try_emplace(std::move(key), id_strings_.size() + 1).first;
    id.string = it->second;
  } else if (ToInt(v, &id.value)) {
    id.numeric = true;
  }
  return id;
}

error_code Reader::ReadArgs(od::object& args) {
  ChromeArgs& a = event_.args;
  return ForEachField(args, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "name") {
      TakeString(v, kMaxShortBytes, &a.name);
      return simdjson::SUCCESS;
    }
    const bool grid = key == "grid";
    if (grid || key == "block") {
      const uint32_t bit = grid ? ChromeArgs::kGrid : ChromeArgs::kBlock;
      od::array triple;
      if (v.get_array().get(triple) != simdjson::SUCCESS) return simdjson::SUCCESS;
      auto& vec = grid ? a.grid : a.block;
      vec = {0, 0, 0};
      a.has |= bit;
      size_t i = 0;  // a nested value takes a place in the triple, but no number
      for (auto element : triple) {
        od::value x;
        if (error_code e = std::move(element).get(x)) return e;
        int64_t n = 0;
        if (i < 3 && ToInt(x, &n)) vec[i] = n;
        ++i;
      }
      return simdjson::SUCCESS;
    }
    for (const ArgField& f : kArgFields)
      if (key == f.key) {
        if (ToInt(v, &(a.*f.slot))) a.has |= f.bit;
        break;
      }
    return simdjson::SUCCESS;
  });
}

error_code Reader::ReadEvent(od::object& object) {
  ChromeEvent& e = event_;
  e.index = next_index_++;
  e.ph.clear();
  e.cat.clear();
  e.name.clear();
  e.ts = ChromeTime();
  e.dur = ChromeTime();
  e.pid = ChromeId();
  e.tid = ChromeId();
  e.args = ChromeArgs();
  error_code err = ForEachField(object, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "ph") {
      TakeString(v, kMaxShortBytes, &e.ph);
    } else if (key == "cat") {
      TakeString(v, kMaxShortBytes, &e.cat);
    } else if (key == "name") {
      TakeString(v, kMaxNameBytes, &e.name);
    } else if (key == "ts") {
      e.ts = ToTime(v);
    } else if (key == "dur") {
      e.dur = ToTime(v);
    } else if (key == "pid") {
      e.pid = ToId(v);
    } else if (key == "tid") {
      e.tid = ToId(v);
    } else if (key == "args") {
      od::object args;
      if (v.get_object().get(args) == simdjson::SUCCESS) return ReadArgs(args);
    }
    return simdjson::SUCCESS;
  });
  if (err) return err;
  Status s = on_event_(e);
  return s.ok() ? simdjson::SUCCESS : Stop(std::move(s));
}

error_code Reader::ReadEvents(od::array& events) {
  found_events_ = true;
  for (auto element : events) {
    od::value v;
    if (error_code e = std::move(element).get(v)) return e;
    od::json_type t;
    if (error_code e = v.type().get(t)) return e;
    if (t == od::json_type::object) {
      od::object object;
      if (error_code e = v.get_object().get(object)) return e;
      if (error_code e = ReadEvent(object)) return e;
      continue;
    }
    ++next_index_;
    ++meta_->non_object_events;
    if (error_code e = ValidateScalar(v, t)) return e;
  }
  return simdjson::SUCCESS;
}

error_code Reader::ReadDevice(od::object& object) {
  ChromeDeviceProperties p;
  error_code err = ForEachField(object, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "name") {
      TakeString(v, kMaxShortBytes, &p.name);
      return simdjson::SUCCESS;
    }
    int64_t* slot = key == "id"                            ? &p.id
                    : key == "totalGlobalMem"              ? &p.total_global_mem
                    : key == "computeMajor"                ? &p.compute_major
                    : key == "computeMinor"                ? &p.compute_minor
                    : key == "numSms"                      ? &p.num_sms
                    : key == "maxThreadsPerMultiprocessor" ? &p.max_threads_per_sm
                    : key == "warpSize"                    ? &p.warp_size
                                                           : nullptr;
    if (slot != nullptr) ToInt(v, slot);
    return simdjson::SUCCESS;
  });
  if (!err && meta_->devices.size() < kMaxDeviceProperties) meta_->devices.push_back(std::move(p));
  return err;
}

// A top-level integer field (no float, no string): n when 0 <= n < 2^62.
bool TopLevelInt(od::value& v, int64_t* out) {
  int64_t n = 0;
  if (v.get_int64().get(n) != simdjson::SUCCESS || n < 0 || n >= kMaxImportNs) return false;
  *out = n;
  return true;
}

error_code Reader::ReadTop(od::object& top) {
  return ForEachField(top, [&](od::raw_json_string key, od::value v) -> error_code {
    if (key == "traceEvents") {
      od::array events;
      if (v.get_array().get(events) != simdjson::SUCCESS)
        return Stop(Status::Error("\"traceEvents\" is not an array: not a Chrome trace"));
      return ReadEvents(events);
    }
    if (key == "deviceProperties") {
      od::array devices;
      if (v.get_array().get(devices) != simdjson::SUCCESS) return simdjson::SUCCESS;
      for (auto element : devices) {
        od::object device;
        if (std::move(element).get_object().get(device) != simdjson::SUCCESS) continue;
        if (error_code e = ReadDevice(device)) return e;
      }
    } else if (key == "distributedInfo") {
      od::object info;
      if (v.get_object().get(info) != simdjson::SUCCESS) return simdjson::SUCCESS;
      return ForEachField(info, [&](od::raw_json_string k, od::value x) -> error_code {
        int64_t n = 0;
        if (k != "rank") return simdjson::SUCCESS;
        if (x.get_int64().get(n) == simdjson::SUCCESS)
          meta_->rank = std::to_string(n);
        else
          TakeString(x, kMaxShortBytes, &meta_->rank);
        return simdjson::SUCCESS;
      });
    } else if (key == "cutraceBaseTimeNanoseconds") {
      TopLevelInt(v, &meta_->cutrace_base_ns);
    } else if (key == "baseTimeNanoseconds") {
      TopLevelInt(v, &meta_->base_time_ns);
    } else if (key == "cuda_runtime_version") {
      ToInt(v, &meta_->cuda_runtime_version);
    } else if (key == "cuda_driver_version") {
      ToInt(v, &meta_->cuda_driver_version);
    } else if (key == "cupti_version") {
      ToInt(v, &meta_->cupti_version);
    }
    return simdjson::SUCCESS;
  });
}

std::string JsonError(error_code e, const std::string& where) {
  std::string what = simdjson::error_message(e);
  for (char& c : what)
    if (c == '\n' || c == '\r') c = ' ';
  if (what.size() > 120) what = what.substr(0, 117) + "...";
  while (!what.empty() && what.back() == '.') what.pop_back();
  return "invalid JSON" + where + ": " + what;
}

Status Reader::Run(const PaddedJson& json) {
  const std::string_view text = json.text();
  if (text.size() > simdjson::SIMDJSON_MAXSIZE_BYTES - PaddedJson::kPadding)
    return Status::Error("larger than 4 GiB, which the JSON parser cannot read");
  od::parser parser;
  od::document doc;
  const simdjson::padded_string_view padded(text.data(), text.size(), json.capacity());
  error_code err = parser.iterate(padded).get(doc);
  if (err) return Status::Error(JsonError(err, ""));
  // Where the walk stopped, for messages ("" once the whole text was read).
  auto where = [&]() -> std::string {
    const char* at = nullptr;
    if (doc.current_location().get(at) != simdjson::SUCCESS || at <= text.data()) return "";
    return " near byte " + std::to_string(at - text.data());
  };
  od::json_type t = od::json_type::null;
  err = doc.type().get(t);
  if (!err && t == od::json_type::array) {
    meta_->bare_array = true;
    od::array events;
    err = doc.get_array().get(events);
    if (!err) err = ReadEvents(events);
  } else if (!err && t == od::json_type::object) {
    od::object top;
    err = doc.get_object().get(top);
    if (!err) err = ReadTop(top);
  } else if (!err) {
    // A scalar: invalid JSON if it does not even read as one.
    switch (t) {
      case od::json_type::number: err = doc.get_double().error(); break;
      case od::json_type::string: err = doc.get_string().error(); break;
      case od::json_type::boolean: err = doc.get_bool().error(); break;
      default: {
        bool is_null = false;
        err = doc.is_null().get(is_null);
        if (!err && !is_null) err = simdjson::N_ATOM_ERROR;
      }
    }
    if (!err)
      return Status::Error("the top level is not an object or an array: not a Chrome trace");
  }
  if (err == kStopped) return status_;
  if (err) return Status::Error(JsonError(err, where()));
  const char* rest = nullptr;  // none when the whole document was read
  if (doc.current_location().get(rest) == simdjson::SUCCESS)
    return Status::Error(JsonError(simdjson::TRAILING_CONTENT, where()));
  if (!found_events_) return Status::Error("no \"traceEvents\" array: not a Chrome trace");
  return Status::Ok();
}

}  // namespace

PaddedJson PaddedJson::Copy(std::string_view text) { return Adopt(std::string(text)); }

PaddedJson PaddedJson::Adopt(std::string bytes) {
  PaddedJson p;
  p.size_ = bytes.size();
  p.buffer_ = std::move(bytes);
  p.buffer_.append(kPadding, '\0');
  return p;
}

PaddedJson PaddedJson::View(std::string_view text, size_t readable) {
  PaddedJson p;
  p.view_ = text.data();
  p.size_ = text.size();
  p.capacity_ = readable;
  return p;
}

Status ReadChromeTrace(const PaddedJson& json, const ChromeEventCallback& on_event,
                       ChromeTraceMetadata* metadata) {
  if (json.text().find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Status::Error("empty file");
  ChromeTraceMetadata scratch;
  if (metadata == nullptr) metadata = &scratch;
  *metadata = ChromeTraceMetadata();
  Reader reader(on_event, metadata);
  return reader.Run(json);
}

}  // namespace cutrace::interop
