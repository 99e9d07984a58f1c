// Writes the seed corpus of fuzz_trace_reader into the directory given:
// small valid traces (every packet kind, every record kind) and damaged ones
// (truncated, wrong magic and version, absurd lengths, broken columns).
// Run by hand when the format changes; the output is committed.
#include <cstdio>
#include <string>

#include "collector/proto_writer.h"
#include "collector/trace_writer.h"
#include "proto/cutrace.pb.h"
#include "tests/fuzz/corpus_files.h"
#include "tests/unit/collector_test_util.h"

namespace {

using namespace cutrace;

bool Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  return testing::WriteCorpusFile("make_trace_reader_corpus", dir, name, bytes);
}

std::string Header(const std::string& magic, uint32_t version) {
  proto::Trace t;
  proto::Header* h = t.add_packet()->mutable_header();
  h->set_magic(magic);
  h->set_format_version(version);
  return t.SerializeAsString();
}

std::string WithBatch(const proto::EventBatch& batch) {
  proto::Trace t;
  *t.add_packet()->mutable_events() = batch;
  return Header("cutrace", 1) + t.SerializeAsString();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = cutrace::testing::CorpusDir(argc, argv, "make_trace_reader_corpus");
  if (dir.empty()) return 2;
  bool ok = true;

  StringInterner interner;
  TraceEncoder enc;
  std::string small;
  enc.EncodeHeader(testing::SampleHeader(), &small);
  DeviceInfo d;
  d.id = 1;
  d.name = "GPU";
  enc.EncodeDevice(d, &small);
  enc.EncodeBatch(testing::SampleBatch(interner), interner, &small);
  CounterBatchInfo c;
  c.metric_name_ids = {interner.Intern("metric")};
  c.scope = "kernel";
  c.samples.push_back(CounterSampleInfo{10, 0, 1, {1.5}, 1, 1, 0, 0, 0});
  enc.EncodeCounters(c, interner, &small);
  enc.EncodeWarning("warn", 1, &small);
  StatsInfo s;
  s.kernels = 5;
  s.invalid = {{"kernel", "zero_timestamp", 1}};
  enc.EncodeStatistics(s, &small);
  enc.EncodeEnd(EndInfo{{1, 2, 3}, "exit"}, &small);
  ok &= Write(dir, "valid_all_packets.trace", small);

  std::string storm;
  TraceEncoder enc2;
  StringInterner interner2;
  enc2.EncodeHeader(testing::SampleHeader(), &storm);
  enc2.EncodeBatch(testing::LaunchStorm(interner2.Intern("_Z5stormv"), 64), interner2, &storm);
  enc2.EncodeBatch(testing::LaunchStorm(interner2.Intern("_Z5stormv"), 16, 3), interner2, &storm);
  enc2.EncodeEnd(EndInfo{}, &storm);
  ok &= Write(dir, "valid_storm.trace", storm);

  ok &= Write(dir, "truncated_mid_batch.trace", small.substr(0, small.size() * 2 / 3));
  ok &= Write(dir, "truncated_in_header.trace", small.substr(0, 9));
  ok &= Write(dir, "bad_magic.trace", Header("nottrace", 1));
  ok &= Write(dir, "bad_version.trace", Header("cutrace", 7));
  {
    std::string absurd = Header("cutrace", 1) + "\x0a";
    ProtoWriter(&absurd).AppendVarint(uint64_t{1} << 40);
    absurd += "xx";
    ok &= Write(dir, "absurd_length.trace", absurd);
  }
  {
    proto::EventBatch b;
    b.mutable_kernels()->set_count(3);
    b.mutable_kernels()->add_start_delta_ns(1);
    ok &= Write(dir, "bad_start_count.trace", WithBatch(b));
    b.mutable_kernels()->add_start_delta_ns(-1);
    b.mutable_kernels()->add_start_delta_ns(1);
    b.mutable_kernels()->add_duration_ns(1);
    b.mutable_kernels()->add_duration_ns(2);
    ok &= Write(dir, "bad_column_length.trace", WithBatch(b));
  }
  {
    proto::EventBatch b;
    b.set_base_ns(-5);
    proto::MemcpyColumns* m = b.mutable_memcpys();
    m->set_count(2);
    m->add_start_delta_ns(INT64_MAX);
    m->add_start_delta_ns(INT64_MIN);
    m->add_duration_ns(UINT64_MAX);
    m->add_copy_kind(99);
    m->add_correlation_delta(-3);
    ok &= Write(dir, "edge_values.trace", WithBatch(b));
  }
  ok &= Write(dir, "not_a_trace.json", "{\"traceEvents\": []}\n");
  ok &= Write(dir, "empty", "");
  if (!ok) {
    std::fprintf(stderr, "make_trace_reader_corpus: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
