// See info_json.h.
#include "viewer_cli/info_json.h"

#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <variant>

#include <google/protobuf/stubs/strutil.h>
#include <google/protobuf/util/json_util.h>

#include "collector/info_fields.h"

namespace cutrace::cli {

using nlohmann::json;

namespace {

// Proto3's JSON mapping writes 64-bit integers as strings; scripts want
// numbers, so put them back where the schema says the field is an integer.
void NumbersFor64BitFields(const google::protobuf::Descriptor* d, json* object) {
  using FD = google::protobuf::FieldDescriptor;
  if (!object->is_object()) return;
  for (int i = 0; i < d->field_count(); ++i) {
    const FD* f = d->field(i);
    auto it = object->find(f->name());
    if (it == object->end()) continue;
    auto fix = [&](json& v) {
      if (f->cpp_type() == FD::CPPTYPE_MESSAGE) {
        NumbersFor64BitFields(f->message_type(), &v);
      } else if (v.is_string() && (f->cpp_type() == FD::CPPTYPE_INT64 ||
                                   f->cpp_type() == FD::CPPTYPE_UINT64)) {
        const std::string& s = v.get_ref<const std::string&>();
        char* end = nullptr;
        if (f->cpp_type() == FD::CPPTYPE_INT64) {
          long long n = std::strtoll(s.c_str(), &end, 10);
          if (end && *end == '\0') v = static_cast<int64_t>(n);
        } else {
          unsigned long long n = std::strtoull(s.c_str(), &end, 10);
          if (end && *end == '\0') v = static_cast<uint64_t>(n);
        }
      }
    };
    if (it->is_array())
      for (json& v : *it) fix(v);
    else
      fix(*it);
  }
}

}  // namespace

json MessageJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;  // a stable set of keys
  std::string text;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!status.ok()) return {{"error", std::string(status.message())}};
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return {{"error", "unprintable message"}};
  NumbersFor64BitFields(message.GetDescriptor(), &parsed);
  return parsed;
}

json StatsJson(const StatsInfo& s) {
  json out = json::object();
  for (const StatsCounter& c : kStatsCounters) out[std::string(c.name)] = s.*c.member;
  json invalid = json::array();
  for (const InvalidCountInfo& i : s.invalid)
    invalid.push_back({{"kind", i.kind}, {"reason", i.reason}, {"count", i.count}});
  out["invalid"] = std::move(invalid);
  return out;
}

json DeviceJson(const DeviceInfo& d) {
  json out = json::object();
  for (const DeviceField& f : kDeviceFields) {
    json& slot = out[std::string(f.name)];
    std::visit(
        [&](auto member) {
          const auto& v = d.*member;
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>)
            slot = f.bytes ? Base64(v) : v;
          else if constexpr (std::is_same_v<T, double>)
            slot = DoubleJson(v);
          else
            slot = v;
        },
        f.member);
  }
  return out;
}

json DoubleJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  // libprotobuf's own shortest round-trip text, as its JSON printer uses.
  return json::parse(google::protobuf::SimpleDtoa(v));
}

std::string Base64(std::string_view bytes) {
  std::string out;
  google::protobuf::Base64Escape(google::protobuf::StringPiece(bytes.data(), bytes.size()), &out);
  return out;
}

}  // namespace cutrace::cli
