// The reader on damaged and hostile input: a trace cut at every byte
// offset, flipped bytes, absurd lengths, wrong magic or version. Never a
// crash; complete packets are kept and the loss is reported.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "collector/format.h"
#include "collector/proto_writer.h"
#include "collector/trace_loader.h"
#include "collector/trace_reader.h"
#include "collector/trace_writer.h"
#include "tests/unit/collector_test_util.h"

namespace cutrace {
namespace {

struct Small {
  std::string bytes;
  std::vector<size_t> ends;           // end offset of each packet
  std::vector<size_t> records_after;  // records decoded once packet i is complete
};

Small MakeSmall() {
  Small s;
  StringInterner interner;
  TraceEncoder enc;
  auto mark = [&](size_t records) {
    while (s.ends.empty() || s.ends.back() < s.bytes.size()) {
      // One encoder call may add two packets (interned + events); find them.
      proto::Trace t;
      EXPECT_TRUE(t.ParseFromString(s.bytes));
      size_t end = 0;
      s.ends.clear();
      for (const proto::TracePacket& p : t.packet()) {
        const size_t len = p.ByteSizeLong();
        end += 1 + VarintSize(len) + len;
        s.ends.push_back(end);
      }
    }
    s.records_after.resize(s.ends.size(), records);
  };
  enc.EncodeHeader(testing::SampleHeader(), &s.bytes);
  mark(0);
  RecordBatch b = testing::SampleBatch(interner);
  enc.EncodeBatch(b, interner, &s.bytes);
  // The interned packet adds no records; the events packet adds them all.
  mark(0);
  s.records_after.back() = b.size();
  enc.EncodeWarning("w", 1, &s.bytes);
  mark(b.size());
  RecordBatch storm = testing::LaunchStorm(interner.Intern("s"), 7);
  enc.EncodeBatch(storm, interner, &s.bytes);
  mark(b.size());
  s.records_after.back() = b.size() + storm.size();
  enc.EncodeEnd(EndInfo{{}, "exit"}, &s.bytes);
  mark(b.size() + storm.size());
  return s;
}

TEST(Reader, TruncationAtEveryByteOffset) {
  const Small s = MakeSmall();
  ASSERT_EQ(s.ends.size(), 7u);  // header, interned, events, warning, interned, events, end
  ASSERT_EQ(s.ends.back(), s.bytes.size());
  for (size_t cut = 0; cut <= s.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    StatusOr<TraceData> data = LoadTraceFromBytes(std::string_view(s.bytes).substr(0, cut), "t");
    if (cut == 0) {
      ASSERT_FALSE(data.ok());
      EXPECT_EQ(data.status().message(), "t: empty file");
      continue;
    }
    if (cut < s.ends[0]) {
      ASSERT_FALSE(data.ok());
      EXPECT_EQ(data.status().message(),
                "t: not a complete cutrace trace (the file ends inside its first packet)");
      continue;
    }
    ASSERT_TRUE(data.ok()) << data.status().message();
    size_t complete = 0;
    while (complete < s.ends.size() && s.ends[complete] <= cut) ++complete;
    const size_t boundary = s.ends[complete - 1];
    EXPECT_EQ(data->read.packets, complete);
    EXPECT_EQ(data->read.bytes_used, boundary);
    EXPECT_EQ(data->read.lost_bytes, cut - boundary);
    EXPECT_EQ(data->read.truncated, cut != boundary);
    EXPECT_EQ(data->read.problems.size(), cut != boundary ? 1u : 0u);
    EXPECT_EQ(data->records.size(), s.records_after[complete - 1]);
    EXPECT_EQ(data->clean_shutdown(), cut == s.bytes.size());
    EXPECT_EQ(data->read.file_bytes, cut);
  }
}

TEST(Reader, FlippedBytesNeverCrash) {
  const Small s = MakeSmall();
  for (size_t i = 0; i < s.bytes.size(); ++i) {
    for (uint8_t x : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::string bytes = s.bytes;
      bytes[i] = static_cast<char>(bytes[i] ^ x);
      StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
      if (data.ok()) {
        EXPECT_LE(data->read.bytes_used + data->read.lost_bytes, bytes.size());
      } else {
        EXPECT_FALSE(data.status().message().empty());
      }
    }
  }
}

std::string HeaderPacket(std::string_view magic, uint32_t version) {
  proto::Trace t;
  proto::Header* h = t.add_packet()->mutable_header();
  h->set_magic(std::string(magic));
  h->set_format_version(version);
  return t.SerializeAsString();
}

TEST(Reader, CorruptionStopsAndKeepsWhatCameBefore) {
  const Small s = MakeSmall();
  // A byte that is not Trace.packet's tag where the fourth packet starts.
  std::string bytes = s.bytes;
  bytes[s.ends[2]] = 0x12;
  StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->read.packets, 3u);
  EXPECT_FALSE(data->read.truncated);
  EXPECT_EQ(data->read.lost_bytes, bytes.size() - s.ends[2]);
  ASSERT_EQ(data->read.problems.size(), 1u);
  EXPECT_EQ(data->read.problems[0], "corrupt: not a trace packet at offset " +
                                        std::to_string(s.ends[2]) + "; ignoring the last " +
                                        std::to_string(bytes.size() - s.ends[2]) + " bytes");
  EXPECT_EQ(data->records.size(), s.records_after[2]);
}

TEST(Reader, AbsurdLengths) {
  const std::string header = HeaderPacket("cutrace", kFormatVersion);
  {
    // 2^40 bytes claimed: corruption, not truncation, and nothing allocated.
    std::string bytes = header + "\x0a";
    ProtoWriter(&bytes).AppendVarint(uint64_t{1} << 40);
    bytes += "abc";
    StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
    ASSERT_TRUE(data.ok());
    EXPECT_FALSE(data->read.truncated);
    EXPECT_EQ(data->read.packets, 1u);
    EXPECT_NE(data->read.problems[0].find("impossible length"), std::string::npos);
  }
  {
    // Just over the cap.
    std::string bytes = header + "\x0a";
    ProtoWriter(&bytes).AppendVarint(kMaxPacketBytes + 1);
    StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
    ASSERT_TRUE(data.ok());
    EXPECT_NE(data->read.problems[0].find("impossible length"), std::string::npos);
  }
  {
    // A length within the cap but beyond the end of the file: truncation.
    std::string bytes = header + "\x0a";
    ProtoWriter(&bytes).AppendVarint(1000);
    bytes += "xyz";
    StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
    ASSERT_TRUE(data.ok());
    EXPECT_TRUE(data->read.truncated);
    EXPECT_EQ(data->read.lost_bytes, 3u + 1u + 2u);
    EXPECT_EQ(data->read.problems[0],
              "truncated: the last packet at offset " + std::to_string(header.size()) +
                  " needs 1000 bytes, 3 present (6 bytes lost)");
  }
  {
    // A varint of eleven bytes.
    std::string bytes = header + "\x0a" + std::string(11, '\xff') + "\x01";
    StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
    ASSERT_TRUE(data.ok());
    EXPECT_FALSE(data->read.truncated);
    EXPECT_NE(data->read.problems[0].find("impossible length"), std::string::npos);
  }
  {
    // A packet whose body does not parse (a field with an invalid wire type).
    std::string bytes = header + std::string("\x0a\x02\x0f\x00", 4);
    StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "t");
    ASSERT_TRUE(data.ok());
    EXPECT_NE(data->read.problems[0].find("does not parse"), std::string::npos);
  }
}

TEST(Reader, HardErrors) {
  EXPECT_EQ(LoadTraceFromBytes("", "f").status().message(), "f: empty file");
  EXPECT_EQ(LoadTraceFromBytes(HeaderPacket("nottrace", 1), "f").status().message(),
            "f: not a cutrace trace (magic \"nottrace\")");
  EXPECT_EQ(LoadTraceFromBytes(HeaderPacket("", 1), "f").status().message(),
            "f: not a cutrace trace (magic \"\")");
  EXPECT_EQ(LoadTraceFromBytes(HeaderPacket("cutrace", 2), "f").status().message(),
            "f: unsupported format version 2 (this reader knows 1)");
  EXPECT_EQ(LoadTraceFromBytes(HeaderPacket("cutrace", 0), "f").status().message(),
            "f: unsupported format version 0 (this reader knows 1)");
  EXPECT_EQ(LoadTraceFromBytes(HeaderPacket("cu\ntrace", 1), "f").status().message(),
            "f: not a cutrace trace (magic \"cu?trace\")");
  {
    proto::Trace t;
    t.add_packet()->mutable_warning()->set_message("first");
    EXPECT_EQ(LoadTraceFromBytes(t.SerializeAsString(), "f").status().message(),
              "f: not a cutrace trace (first packet is not a valid header)");
  }
  EXPECT_EQ(LoadTraceFromBytes("{\"traceEvents\": []}", "f").status().message(),
            "f: not a cutrace trace (first packet is not a valid header)");
  std::string random(4096, '\0');
  uint32_t x = 12345;
  for (char& c : random) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  EXPECT_FALSE(LoadTraceFromBytes(random, "f").ok());

  StatusOr<TraceData> missing = LoadTrace("/nonexistent/dir/x.trace");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "cannot open /nonexistent/dir/x.trace: No such file or directory");
  testing::TempDir dir;
  EXPECT_EQ(LoadTrace(dir.path()).status().message(),
            "cannot open " + dir.path() + ": is a directory");
  const std::string empty = dir.File("empty.trace");
  { std::ofstream(empty.c_str()); }
  EXPECT_EQ(LoadTrace(empty).status().message(), empty + ": empty file");
}

// A second header and a payload the reader does not know are skipped.
TEST(Reader, ToleratesUnknownPayloadsAndExtraHeaders) {
  std::string bytes = HeaderPacket("cutrace", 1);
  bytes += std::string("\x0a\x03\xf8\x01\x05", 5);  // TracePacket field 31 (unknown): skipped
  bytes += HeaderPacket("cutrace", 1);
  StatusOr<TraceData> data = LoadTraceFromBytes(bytes, "f");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(data->read.packets, 3u);
  ASSERT_EQ(data->read.problems.size(), 1u);
  EXPECT_EQ(data->read.problems[0], "packet 2: a second header, ignored");
}

TEST(Reader, StreamsPacketByPacket) {
  const Small s = MakeSmall();
  TraceReader reader(s.bytes);
  proto::TracePacket p;
  size_t n = 0;
  while (reader.Next(&p)) {
    ++n;
    EXPECT_EQ(reader.offset(), s.ends[n - 1]);
  }
  EXPECT_EQ(n, s.ends.size());
  EXPECT_FALSE(reader.Next(&p));
  EXPECT_TRUE(reader.report().problems.empty());
}

}  // namespace
}  // namespace cutrace
