// TimeOrder (analysis/time_order.h) against its definition: whatever the
// packets, lanes and release limits, the events come out exactly once, each
// release hands out every held event that starts before its limit and no
// other, and the whole sequence is in ItemBefore order. The workloads force
// the cases the release loop treats apart: equal starts across lanes (the
// full order decides), events equal in the full order (only their payload
// differs), more sources than lanes (a packet merged into a lane), and
// runs that end exactly at the next lane's start.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "analysis/time_order.h"

namespace cutrace::analysis {
namespace {

// What identifies an event beyond the order: ties in ItemBefore differ here.
auto Identity(const TimedItem& x) {
  return std::tie(x.start, x.end, x.correlation, x.a, x.b, x.index, x.file, x.cls, x.type);
}

struct Packet {
  std::vector<std::vector<TimedItem>> runs;  // one per kind, each as staged
  uint64_t min_start = UINT64_MAX;
};

// `sources` streams of packets, each stream nearly sorted and following
// itself in time, the streams interleaved; starts drawn from a narrow range
// (`spread` per event) so that many coincide.
std::vector<Packet> Workload(uint64_t seed, int sources, int packets, uint64_t spread) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> clock(sources, 1000);
  std::vector<Packet> out;
  uint32_t serial = 0;
  for (int p = 0; p < packets; ++p) {
    const int s = static_cast<int>(rng() % sources);
    Packet packet;
    const int kinds = 1 + static_cast<int>(rng() % 3);
    const uint64_t from = clock[s];
    uint64_t latest = from;
    for (int k = 0; k < kinds; ++k) {
      std::vector<TimedItem> run;
      const int n = static_cast<int>(rng() % 40);
      uint64_t t = from;
      for (int i = 0; i < n; ++i) {
        t += rng() % (spread + 1);
        TimedItem x;
        // A few events start before the stream's clock: a range that
        // arrives at its end, a kernel completing out of order.
        x.start = (rng() % 8 == 0 && t > 50) ? t - rng() % 50 : t;
        x.end = x.start + rng() % 3;
        x.cls = static_cast<uint8_t>(rng() % 4);
        x.file = static_cast<uint16_t>(rng() % 2);
        x.type = static_cast<uint8_t>(rng() % 4);
        // Index and type 0 make many events equal in the full order.
        x.index = rng() % 3 == 0 ? 0 : serial;
        x.a = static_cast<uint32_t>(s);
        x.b = serial++;  // payload only: tells equal events apart
        run.push_back(x);
        packet.min_start = std::min(packet.min_start, x.start);
        latest = std::max(latest, x.start);
      }
      // Runs arrive nearly sorted, not sorted.
      for (size_t i = 1; i < run.size(); ++i)
        if (rng() % 6 == 0) std::swap(run[i - 1], run[i]);
      packet.runs.push_back(std::move(run));
    }
    clock[s] = latest;
    out.push_back(std::move(packet));
  }
  return out;
}

// Feeds the packets as a stream does (commit, then release up to the
// earliest start any later packet holds) and checks every release.
std::vector<TimedItem> Stream(const std::vector<Packet>& packets, size_t* releases_checked,
                              size_t max_lanes = TimeOrder::kMaxLanes) {
  std::vector<uint64_t> future(packets.size() + 1, UINT64_MAX);
  for (size_t i = packets.size(); i-- > 0;) future[i] = std::min(packets[i].min_start, future[i + 1]);
  TimeOrder order(max_lanes);
  std::vector<TimedItem> held, out;
  for (size_t p = 0; p < packets.size(); ++p) {
    for (const std::vector<TimedItem>& run : packets[p].runs) {
      // Half through Stage(), half through Reserve()/Staged().
      if (p % 2 == 0) {
        for (const TimedItem& x : run) order.Stage(x);
      } else {
        TimedItem* dst = order.Reserve(run.size());
        std::copy(run.begin(), run.end(), dst);
        order.Staged(run.size());
      }
      order.EndRun();
      held.insert(held.end(), run.begin(), run.end());
    }
    order.Commit();
    const uint64_t limit = future[p + 1];
    std::vector<TimedItem> got;
    order.Release(limit, [&](const TimedItem& x) { got.push_back(x); });
    // Exactly the held events that start before the limit.
    std::vector<TimedItem> expected, kept;
    for (const TimedItem& x : held) (x.start < limit ? expected : kept).push_back(x);
    held.swap(kept);
    EXPECT_EQ(order.held(), held.size());
    auto by_identity = [](const TimedItem& x, const TimedItem& y) { return Identity(x) < Identity(y); };
    std::vector<TimedItem> sorted_got = got;
    std::sort(sorted_got.begin(), sorted_got.end(), by_identity);
    std::sort(expected.begin(), expected.end(), by_identity);
    EXPECT_EQ(sorted_got.size(), expected.size());
    for (size_t i = 0; i < std::min(sorted_got.size(), expected.size()); ++i)
      EXPECT_TRUE(Identity(sorted_got[i]) == Identity(expected[i])) << "release " << p;
    out.insert(out.end(), got.begin(), got.end());
    ++*releases_checked;
  }
  std::vector<TimedItem> rest;
  order.Release(UINT64_MAX, [&](const TimedItem& x) { rest.push_back(x); });
  EXPECT_TRUE(rest.empty());  // the last limit is UINT64_MAX
  EXPECT_EQ(order.held(), 0u);
  return out;
}

TEST(TimeOrder, ReleasesEveryEventOnceInOrder) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    // Few sources (a lane each, searched linearly); more than kFewLanes (a
    // heap over the lanes); more than the lanes allowed (packets merged
    // into a lane, then a heap or a search over what is left).
    const int regime = static_cast<int>(seed % 3);
    const int sources = regime == 0 ? 3 : static_cast<int>(TimeOrder::kFewLanes) + 7 + 10 * regime;
    const size_t max_lanes = regime == 2 ? TimeOrder::kFewLanes + 9 : TimeOrder::kMaxLanes;
    // Spread 0: every event of a packet starts at once.
    const uint64_t spread = seed % 5 == 0 ? 0 : 1 + seed % 4;
    const std::vector<Packet> packets = Workload(seed, sources, 300, spread);
    size_t input = 0;
    for (const Packet& p : packets)
      for (const auto& run : p.runs) input += run.size();
    size_t releases = 0;
    const std::vector<TimedItem> out = Stream(packets, &releases, max_lanes);
    ASSERT_EQ(out.size(), input) << "seed " << seed;
    EXPECT_EQ(releases, packets.size());
    for (size_t i = 1; i < out.size(); ++i)
      ASSERT_FALSE(ItemBefore(out[i], out[i - 1])) << "seed " << seed << " at " << i;
  }
}

TEST(TimeOrder, EqualStartsAcrossLanesFollowTheFullOrder) {
  // Two lanes whose heads share a start: class, then end, file, type and
  // index decide, and a run stops where the other lane's head would go
  // first, even at an equal start.
  TimeOrder order;
  auto item = [](uint64_t start, uint8_t cls, uint64_t end, uint32_t index) {
    TimedItem x;
    x.start = start;
    x.end = end;
    x.cls = cls;
    x.index = index;
    return x;
  };
  for (const TimedItem& x : {item(10, TimedItem::kGpu, 12, 0), item(20, TimedItem::kGpu, 25, 1),
                             item(20, TimedItem::kGpu, 26, 2), item(30, TimedItem::kGpu, 30, 3)})
    order.Stage(x);
  order.Commit();
  for (const TimedItem& x : {item(10, TimedItem::kApi, 11, 4), item(20, TimedItem::kGpu, 25, 0),
                             item(20, TimedItem::kRange, 40, 5), item(30, TimedItem::kGpu, 30, 2)})
    order.Stage(x);
  order.Commit();
  std::vector<uint32_t> got;
  order.Release(UINT64_MAX, [&](const TimedItem& x) { got.push_back(x.index); });
  // 10: API before GPU. 20: the range, then GPU by end, then by index.
  // 30: equal but for the index.
  EXPECT_EQ(got, (std::vector<uint32_t>{4, 0, 5, 0, 1, 2, 2, 3}));
}

TEST(TimeOrder, EqualEventsLeaveInLaneOrderWithFewOrManyLanes) {
  // Every packet opens a lane of its own (its first event precedes every
  // lane's last) and holds events equal in the full order to the other
  // packets' (only the payload b differs): they leave lane by lane, the
  // same with a few lanes (linear search) as with many (the heap).
  for (const uint32_t lanes : {5u, static_cast<uint32_t>(TimeOrder::kFewLanes) + 4}) {
    TimeOrder order;
    for (uint32_t i = 0; i < lanes; ++i) {
      for (const uint64_t start : {uint64_t{10}, uint64_t{500}, uint64_t{1000} + i}) {
        TimedItem x;
        x.start = start;
        x.end = start;
        x.b = i;
        order.Stage(x);
      }
      order.Commit();
    }
    std::vector<uint32_t> got, expected;
    order.Release(UINT64_MAX, [&](const TimedItem& x) { got.push_back(x.b); });
    for (int round = 0; round < 3; ++round)
      for (uint32_t i = 0; i < lanes; ++i) expected.push_back(i);
    EXPECT_EQ(got, expected) << lanes << " lanes";
    EXPECT_EQ(order.held(), 0u);
  }
}

}  // namespace
}  // namespace cutrace::analysis

namespace cutrace::analysis {
namespace {

TEST(TimeOrder, LongRunsOfManyPacketsComeOutInOrder) {
  // One run far longer than kLongRun (sorted in blocks), as a loaded trace's
  // kind is: packets one after another, each nearly sorted and starting
  // before the one before it ended; also a shuffled run and a sorted one.
  std::mt19937_64 rng(7);
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<TimedItem> run;
    uint64_t t = 1'000'000;
    uint32_t serial = 0;
    while (run.size() < 5 * TimeOrder::kLongRun + 123) {
      const size_t packet = 200 + rng() % 3000;
      t -= std::min<uint64_t>(t, rng() % 20'000);  // back into the last packet
      for (size_t i = 0; i < packet; ++i) {
        t += rng() % 40;
        TimedItem x;
        x.start = t;
        x.end = t + rng() % 100;
        x.index = serial;
        x.b = serial++;
        run.push_back(x);
      }
      for (size_t i = run.size() - packet + 1; i < run.size(); ++i)
        if (rng() % 4 == 0) std::swap(run[i - 1], run[i]);
    }
    if (shape == 1) std::shuffle(run.begin(), run.end(), rng);
    if (shape == 2) std::sort(run.begin(), run.end(), ItemBefore);
    TimeOrder order;
    for (const TimedItem& x : run) order.Stage(x);
    order.Commit();
    std::vector<TimedItem> got;
    order.Release(UINT64_MAX, [&](const TimedItem& x) { got.push_back(x); });
    ASSERT_EQ(got.size(), run.size()) << "shape " << shape;
    for (size_t i = 1; i < got.size(); ++i)
      ASSERT_TRUE(ItemBefore(got[i - 1], got[i])) << "shape " << shape << " at " << i;
    std::vector<TimedItem> expected = run;
    std::sort(expected.begin(), expected.end(), ItemBefore);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i].b, expected[i].b) << "shape " << shape << " at " << i;
  }
}

}  // namespace
}  // namespace cutrace::analysis
