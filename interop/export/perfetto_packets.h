// Writing Perfetto TracePackets (field numbers: interop/export/perfetto_fields.h):
// track descriptors and track events on one packet sequence, with event
// names, categories and debug-annotation keys interned on that sequence.
// interop/export/perfetto_export.h decides what to write; this file only knows how.
//
// Not thread-safe; one writer per output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cutrace::interop::perfetto {

// A TrackDescriptor.
struct TrackSpec {
  enum class Type : uint8_t { kPlain, kProcess, kThread, kCounter };
  uint64_t uuid = 0;
  uint64_t parent = 0;  // 0: none
  std::string name;
  Type type = Type::kPlain;
  int64_t pid = 0;  // kProcess and kThread
  int64_t tid = 0;  // kThread
  std::vector<std::string> cmdline;  // kProcess
};

// One debug annotation of an event.
struct Annotation {
  enum class Type : uint8_t { kUint, kInt, kString };
  const char* key = "";
  Type type = Type::kUint;
  uint64_t u = 0;
  int64_t i = 0;
  std::string s;
};
inline Annotation UintArg(const char* key, uint64_t v) {
  return {key, Annotation::Type::kUint, v, 0, {}};
}
inline Annotation IntArg(const char* key, int64_t v) {
  return {key, Annotation::Type::kInt, 0, v, {}};
}
inline Annotation StringArg(const char* key, std::string v) {
  return {key, Annotation::Type::kString, 0, 0, std::move(v)};
}

// A TrackEvent. Slice ends and counters need only ts, track and type.
struct Event {
  uint64_t ts = 0;
  uint64_t track = 0;
  uint32_t type = 0;  // TrackEvent::kType* (perfetto_fields.h)
  std::string_view name;
  std::string_view category;
  const std::vector<Annotation>* args = nullptr;
  uint64_t flow_start = 0;  // 0: none
  uint64_t flow_end = 0;    // 0: none
  double counter = 0;       // kTypeCounter
};

class PacketWriter {
 public:
  // Appends packets to *out, which must outlive the writer.
  explicit PacketWriter(std::string* out) : out_(out) {}
  // The first packet: clears the sequence's incremental state, so that the
  // interned entries of later packets are valid.
  void StartSequence();
  void Track(const TrackSpec& track);
  void Write(const Event& event);

 private:
  class Interner {
   public:
    // The iid of `s` (from 1, in order of first use); *fresh when it was new.
    uint64_t Get(std::string_view s, bool* fresh) {
      auto [it, added] = ids_.try_emplace(std::string(s), ids_.size() + 1);
      *fresh = added;
      return it->second;
    }

   private:
    std::unordered_map<std::string, uint64_t> ids_;
  };

  std::string* out_;
  Interner names_, categories_, keys_;
};

}  // namespace cutrace::interop::perfetto
