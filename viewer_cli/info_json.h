// The JSON of `cutrace info`'s metadata (docs/json-reports.md): a proto
// message, the statistics and the devices under their proto field names,
// written as proto3's JSON mapping would write them with every field shown,
// except that 64-bit integers are numbers, not strings. The statistics and
// the devices come from the native structs the reader decodes
// (collector/info_decoder.h), walking the shared field lists
// (collector/info_fields.h); the header is still a proto message.
#pragma once

#include <string>
#include <string_view>

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "collector/trace_info.h"

namespace cutrace::cli {

// Any message, through libprotobuf's JSON printer; {"error": ...} if it fails.
nlohmann::json MessageJson(const google::protobuf::Message& message);

// Every counter, then `invalid` as a list of {kind, reason, count}.
nlohmann::json StatsJson(const StatsInfo& s);

// Every field: `uuid` as base64, the bandwidth as DoubleJson() writes it.
nlohmann::json DeviceJson(const DeviceInfo& d);

// A double as proto3's JSON mapping writes it, read back as JSON (which is
// what `info` has always shown): libprotobuf's SimpleDtoa() (the shortest of
// "%.15g" and "%.17g" that reads back as the same double, so a whole number
// below 1e15 is an integer); NaN and the infinities as the strings "NaN",
// "Infinity", "-Infinity".
nlohmann::json DoubleJson(double v);

// Standard base64 with '=' padding (RFC 4648 §4), as proto3's JSON mapping
// writes a `bytes` field: libprotobuf's Base64Escape(), the one its printer
// calls.
std::string Base64(std::string_view bytes);

}  // namespace cutrace::cli
