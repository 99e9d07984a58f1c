// A trace file written for a test through the real TraceWriter, packet by
// packet: the header when it is made, then devices, record batches, counters
// and statistics in the order the test calls them, and Finish() for the end
// marker. A failed write is a test failure (EXPECT), so the test goes on and
// its own checks say what the file lacks.
//
// Records are added to a pending batch that Batch() writes: Kernel(), Api()
// and Range() set the fields every test sets and return the record for the
// rest (valid until the next record is added).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "collector/string_interner.h"
#include "collector/trace_writer.h"

namespace cutrace::testing {

class TraceFile {
 public:
  TraceFile(std::string path, const HeaderInfo& header) : path_(std::move(path)) {
    auto writer = TraceWriter::Create(path_);
    EXPECT_TRUE(writer.ok()) << path_ << ": " << writer.status().message();
    if (!writer.ok()) return;
    writer_ = std::move(*writer);
    Expect(writer_->WriteHeader(header));
  }
  // A header that names only its producer.
  TraceFile(std::string path, const std::string& producer)
      : TraceFile(std::move(path), Producer(producer)) {}

  StringInterner& strings() { return strings_; }
  uint32_t Name(const std::string& s) { return strings_.Intern(s); }
  RecordBatch& batch() { return batch_; }

  KernelRecord& Kernel(const std::string& name, uint64_t start, uint64_t end,
                       uint64_t correlation = 0) {
    KernelRecord& k = Add(batch_.kernels, name, start, end);
    k.correlation_id = correlation;
    return k;
  }
  ApiRecord& Api(const std::string& name, uint64_t start, uint64_t end, uint64_t thread,
                 uint64_t correlation = 0) {
    ApiRecord& a = Add(batch_.api_calls, name, start, end);
    a.thread_id = thread;
    a.correlation_id = correlation;
    return a;
  }
  RangeRecord& Range(const std::string& name, uint64_t start, uint64_t end, uint64_t thread = 0) {
    RangeRecord& r = Add(batch_.ranges, name, start, end);
    r.thread_id = thread;
    return r;
  }

  // A counted launch's sample: its kernel's name and correlation, one pass.
  CounterSampleInfo Sample(const std::string& kernel, uint64_t correlation,
                           std::vector<double> values) {
    CounterSampleInfo s;
    s.correlation_id = correlation;
    s.kernel_name_id = Name(kernel);
    s.passes = 1;
    s.values = std::move(values);
    return s;
  }

  void Device(const DeviceInfo& d) {
    if (writer_) Expect(writer_->WriteDevice(d));
  }
  // Writes the pending batch and starts a new one.
  void Batch() {
    if (writer_) Expect(writer_->WriteBatch(batch_, strings_));
    batch_ = RecordBatch{};
  }
  void Counters(const CounterBatchInfo& c) {
    if (writer_) Expect(writer_->WriteCounters(c, strings_));
  }
  void Statistics(const StatsInfo& s) {
    if (writer_) Expect(writer_->WriteStatistics(s));
  }
  // The end marker (none for a trace cut short) and the close; the path.
  std::string Finish(std::optional<EndInfo> end = EndInfo{}) {
    if (writer_) {
      if (end) Expect(writer_->WriteEnd(*end));
      Expect(writer_->Close());
      writer_.reset();
    }
    return path_;
  }

 private:
  static HeaderInfo Producer(const std::string& producer) {
    HeaderInfo h;
    h.producer = producer;
    return h;
  }
  // A record of a kind that has a name and a time span, appended to `list`.
  template <typename Record>
  Record& Add(std::vector<Record>& list, const std::string& name, uint64_t start, uint64_t end) {
    Record& r = list.emplace_back();
    r.name_id = Name(name);
    r.start_ns = start;
    r.end_ns = end;
    return r;
  }
  static void Expect(const Status& s) { EXPECT_TRUE(s.ok()) << s.message(); }

  std::string path_;
  std::unique_ptr<TraceWriter> writer_;
  StringInterner strings_;
  RecordBatch batch_;
};

}  // namespace cutrace::testing
