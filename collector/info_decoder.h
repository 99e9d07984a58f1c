// Wire-format decoders for the non-event packets: the inverse of
// collector/info_encoder.h, so the reading side holds the same native
// structs (collector/trace_info.h) the writing side fills, and a field is
// named in one struct for both. Each reads the body of one message (not its
// TracePacket framing). Pure functions; any thread.
//
// The rules are libprotobuf's for the bytes it accepts: a field given twice
// keeps its last value, each `invalid` entry is one element, fields of an
// unknown number or an unexpected wire type are skipped. Bytes that do not
// parse give false (and *out is left partly filled). Strings are taken as
// they are (libprotobuf's UTF-8 check is the caller's, as in TracePass).
#pragma once

#include <string_view>

#include "collector/trace_info.h"

namespace cutrace {

bool DecodeStatistics(std::string_view body, StatsInfo* out);
bool DecodeDevice(std::string_view body, DeviceInfo* out);

}  // namespace cutrace
