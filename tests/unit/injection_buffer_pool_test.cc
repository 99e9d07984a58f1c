// The bounded activity buffer pool: fixed memory, exhaustion refused and
// counted, buffers reused, foreign pointers rejected, safe across threads.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "injection/buffer_pool.h"

namespace cutrace::injection {
namespace {

TEST(InjectionBufferPoolTest, ExhaustionIsRefusedAndCounted) {
  BufferPool pool(3, 1 << 20);
  ASSERT_EQ(pool.capacity(), 3u);
  EXPECT_EQ(pool.buffer_size(), 1u << 20);
  EXPECT_EQ(pool.total_bytes(), 3u << 20);
  std::set<uint8_t*> got;
  for (int i = 0; i < 3; ++i) {
    uint8_t* p = pool.Acquire();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 8, 0u) << "CUPTI needs 8-byte alignment";
    got.insert(p);
  }
  EXPECT_EQ(got.size(), 3u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.requested(), 5u);
  EXPECT_EQ(pool.refused(), 2u);
  EXPECT_EQ(pool.available(), 0u);
  EXPECT_EQ(pool.peak_in_use(), 3u);
}

TEST(InjectionBufferPoolTest, BuffersAreReused) {
  BufferPool pool(2, 1 << 20);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(pool.Release(a));
  uint8_t* c = pool.Acquire();
  EXPECT_EQ(c, a);
  EXPECT_TRUE(pool.Release(b));
  EXPECT_TRUE(pool.Release(c));
  EXPECT_EQ(pool.available(), 2u);
  EXPECT_EQ(pool.refused(), 0u);
  EXPECT_EQ(pool.peak_in_use(), 2u);
}

TEST(InjectionBufferPoolTest, ForeignAndDoubleReleasesAreRejected) {
  BufferPool pool(1, 1 << 20);
  uint8_t local[64];
  EXPECT_FALSE(pool.Release(local));
  EXPECT_FALSE(pool.Release(nullptr));
  uint8_t* p = pool.Acquire();
  EXPECT_TRUE(pool.Release(p));
  EXPECT_FALSE(pool.Release(p));
  EXPECT_EQ(pool.available(), 1u);
}

TEST(InjectionBufferPoolTest, ConcurrentAcquireRelease) {
  BufferPool pool(4, 1 << 20);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        uint8_t* p = pool.Acquire();
        if (p == nullptr) continue;
        p[0] = 1;  // the memory is really ours
        if (!pool.Release(p)) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(pool.available(), 4u);
  EXPECT_EQ(pool.requested(), 16000u);
  EXPECT_LE(pool.peak_in_use(), 4u);
}

}  // namespace
}  // namespace cutrace::injection
