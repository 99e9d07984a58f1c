// ReadVarintRun() and ReadZigzagRun() (collector/varint_run.h) against one
// NextVarint() at a time: the same values, the same stopping place, on every
// continuation pattern of the 12 bytes its block table is indexed by and on
// columns of every length mix, including varints over ten bytes; the zigzag
// reader's values are the signed ones written, negative ones included, at
// every lane width's edges.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "collector/varint_run.h"

namespace cutrace::wire {
namespace {

void PutVarint(uint64_t v, std::vector<uint8_t>* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}

// A value whose varint takes exactly `bytes` bytes (1..10).
uint64_t ValueOfLength(int bytes, std::mt19937_64& rng) {
  if (bytes >= 10) return rng() | (uint64_t{1} << 63);
  const uint64_t low = bytes == 1 ? 0 : uint64_t{1} << (7 * (bytes - 1));
  const uint64_t high = (uint64_t{1} << (7 * bytes)) - 1;
  return low + rng() % (high - low + 1);
}

// Reads `bytes` in runs of the given lengths (cycled) both ways and checks
// that every run reads the same values, stops at the same count and leaves
// p at the same byte. Returns how many values were read.
size_t CompareRuns(const std::vector<uint8_t>& bytes, size_t total, std::vector<size_t> runs) {
  const uint8_t* p = bytes.data();
  const uint8_t* q = bytes.data();
  const uint8_t* end = bytes.data() + bytes.size();
  size_t done = 0;
  for (size_t r = 0; done < total; ++r) {
    const size_t n = std::min(runs[r % runs.size()], total - done);
    std::vector<uint64_t> fast(n + 1, 0xdeadbeef), slow(n + 1, 0xdeadbeef);
    std::vector<uint64_t> zigzag(n + 1, 0xdeadbeef);
    const uint8_t* z = p;
    const size_t got_fast = ReadVarintRun(p, end, fast.data(), n);
    const size_t got_slow = ReadVarintRunScalar(q, end, slow.data(), n);
    const size_t got_zigzag = ReadZigzagRun(z, end, zigzag.data(), n);
    EXPECT_EQ(got_fast, got_slow) << "run " << r << " after " << done;
    EXPECT_EQ(got_zigzag, got_slow) << "run " << r << " after " << done;
    EXPECT_EQ(p - bytes.data(), q - bytes.data()) << "run " << r << " after " << done;
    EXPECT_EQ(z, p) << "run " << r << " after " << done;
    for (size_t i = 0; i < std::min(got_fast, got_slow); ++i) {
      EXPECT_EQ(fast[i], slow[i]) << "value " << done + i;
      EXPECT_EQ(zigzag[i], Unzigzag(slow[i])) << "value " << done + i;
    }
    done += got_slow;
    if (got_slow < n || got_fast != got_slow) break;
  }
  return done;
}

TEST(VarintRun, EveryContinuationPatternOfABlock) {
  // The first 12 bytes take every pattern of continuation bits; the bytes
  // after them end the varint left open and add whole ones, so that a run
  // has 16 values and 16 bytes beyond any block.
  std::mt19937_64 rng(1);
  for (uint32_t mask = 0; mask < 4096; ++mask) {
    std::vector<uint8_t> bytes;
    for (int i = 0; i < 12; ++i) {
      const uint8_t low = static_cast<uint8_t>(rng() & 0x7f);
      bytes.push_back(((mask >> i) & 1u) ? static_cast<uint8_t>(low | 0x80) : low);
    }
    for (int i = 0; i < 40; ++i) bytes.push_back(static_cast<uint8_t>(rng() & 0x7f));
    // The varints before the first one over ten bytes (ten continuation
    // bits in a row), where a run stops.
    size_t total = 0, expected = 0, length = 0;
    bool stopped = false;
    for (uint8_t b : bytes) {
      ++length;
      if (b & 0x80) continue;
      ++total;
      stopped = stopped || length > 10;
      expected += stopped ? 0 : 1;
      length = 0;
    }
    EXPECT_EQ(CompareRuns(bytes, total, {total}), expected) << "mask " << mask;
  }
}

TEST(VarintRun, EveryLengthMixInRunsOfEverySize) {
  std::mt19937_64 rng(2);
  // Lengths drawn from these sets: the columns' usual ones (one to four
  // bytes) and the long ones the block decoder leaves to NextVarint().
  const std::vector<std::vector<int>> mixes = {
      {1}, {2}, {3}, {4}, {1, 2}, {2, 3}, {3, 4}, {1, 2, 3, 4}, {1, 1, 1, 1, 1, 1, 2},
      {5}, {1, 5}, {4, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {10}, {1, 1, 1, 1, 1, 1, 1, 9}};
  for (size_t m = 0; m < mixes.size(); ++m) {
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> values;
    const size_t total = 3000;
    for (size_t i = 0; i < total; ++i) {
      values.push_back(ValueOfLength(mixes[m][rng() % mixes[m].size()], rng));
      PutVarint(values.back(), &bytes);
    }
    for (const std::vector<size_t>& runs :
         std::vector<std::vector<size_t>>{{total}, {1}, {15, 16, 17}, {256}, {5, 40, 300}}) {
      EXPECT_EQ(CompareRuns(bytes, total, runs), total) << "mix " << m;
    }
    // And the values are the ones written (not only the same both ways).
    const uint8_t* p = bytes.data();
    std::vector<uint64_t> out(total + 100);
    // Asked for more than the column holds: the run ends with the column.
    ASSERT_EQ(ReadVarintRun(p, bytes.data() + bytes.size(), out.data(), total + 100), total);
    out.resize(total);
    EXPECT_EQ(out, values) << "mix " << m;
    EXPECT_EQ(p, bytes.data() + bytes.size());
  }
}

TEST(VarintRun, ZigzagValuesAreTheSignedOnesWritten) {
  // Values at the edges of what each lane width holds (one byte: |v| <= 64;
  // 16-bit lanes: two bytes, 2^13; 32-bit lanes: four bytes, 2^27), both
  // signs, and the extremes, mixed so that every block kind meets them.
  std::vector<int64_t> edges = {0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, -8193,
                                (1 << 27) - 1, -(1 << 27), 1 << 27, -(1 << 27) - 1,
                                INT64_MAX, INT64_MIN};
  std::mt19937_64 rng(4);
  std::vector<int64_t> values;
  for (int i = 0; i < 5000; ++i) {
    const int64_t e = edges[rng() % edges.size()];
    // Mostly small ones around an edge, so that runs of one lane width form.
    values.push_back(rng() % 4 == 0 ? e : static_cast<int64_t>(rng() % 129) - 64);
  }
  std::vector<uint8_t> bytes;
  for (int64_t v : values)
    PutVarint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63), &bytes);
  for (size_t run : {size_t{1}, size_t{16}, size_t{256}, values.size()}) {
    const uint8_t* p = bytes.data();
    const uint8_t* end = bytes.data() + bytes.size();
    std::vector<uint64_t> out(values.size());
    size_t done = 0;
    while (done < values.size()) {
      const size_t got = ReadZigzagRun(p, end, out.data() + done, std::min(run, values.size() - done));
      ASSERT_GT(got, 0u);
      done += got;
    }
    EXPECT_EQ(p, end);
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(static_cast<int64_t>(out[i]), values[i]) << "value " << i << " run " << run;
  }
}

TEST(VarintRun, StopsWhereAVarintIsOverTenBytes) {
  // An eleven-byte varint at every position of the first blocks: both ways
  // stop before it, with p at the same byte inside it.
  std::mt19937_64 rng(3);
  for (size_t at = 0; at < 40; ++at) {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < 60; ++i) {
      if (i == at) {
        for (int k = 0; k < 10; ++k) bytes.push_back(0x81);
        bytes.push_back(0x01);
      } else {
        PutVarint(ValueOfLength(1 + static_cast<int>(rng() % 3), rng), &bytes);
      }
    }
    EXPECT_EQ(CompareRuns(bytes, 60, {60}), at) << "at " << at;
    EXPECT_EQ(CompareRuns(bytes, 60, {7}), at) << "at " << at;
  }
}

}  // namespace
}  // namespace cutrace::wire
