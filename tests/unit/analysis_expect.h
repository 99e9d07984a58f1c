// Expectations on analysis reports stated as tables: the figures a test
// knows for a row, each checked with its name in the failure message, and
// a figure left out not checked; and two reports' rows compared field by
// field.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/device_timeline.h"

namespace cutrace::testing {

// One device of the overlap report (analysis::DeviceOverlap), its fields in
// the same order, so a test writes {.span = 300, .busy = 250, ...}.
struct OverlapWant {
  std::optional<uint32_t> device = {};
  std::optional<uint64_t> first = {}, last = {}, span = {}, busy = {}, idle = {}, compute = {},
                          copy = {}, overlap = {}, compute_only = {}, copy_only = {}, ops = {},
                          comm = {}, comm_only = {}, comm_compute_overlap = {};
};

inline void ExpectOverlap(const analysis::DeviceOverlap& d, const OverlapWant& w) {
  auto check = [](const char* field, uint64_t got, const auto& want) {
    if (want) {
      EXPECT_EQ(got, *want) << field;
    }
  };
  check("device", d.device, w.device);
  check("first_ns", d.first_ns, w.first);
  check("last_ns", d.last_ns, w.last);
  check("span_ns", d.span_ns, w.span);
  check("busy_ns", d.busy_ns, w.busy);
  check("idle_ns", d.idle_ns, w.idle);
  check("compute_ns", d.compute_ns, w.compute);
  check("copy_ns", d.copy_ns, w.copy);
  check("overlap_ns", d.overlap_ns, w.overlap);
  check("compute_only_ns", d.compute_only_ns, w.compute_only);
  check("copy_only_ns", d.copy_only_ns, w.copy_only);
  check("ops", d.ops, w.ops);
  check("comm_ns", d.comm_ns, w.comm);
  check("comm_only_ns", d.comm_only_ns, w.comm_only);
  check("comm_compute_overlap_ns", d.comm_compute_overlap_ns, w.comm_compute_overlap);
}

template <typename T>
void ExpectSameField(const T& got, const T& want) {
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_DOUBLE_EQ(got, want);
  } else {
    EXPECT_EQ(got, want);
  }
}

// As many rows in `got` as in `want`, and row i of each equal in every one of
// `fields` (pointers to members of the row type): the same report reached
// two ways.
template <typename Row, typename... Fields>
void ExpectSameRows(const std::vector<Row>& got, const std::vector<Row>& want, Fields... fields) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "row " << i);
    (ExpectSameField(got[i].*fields, want[i].*fields), ...);
  }
}

}  // namespace cutrace::testing
