// StringInterner: ids from 1, stable, TakeNew returns each string once, and
// concurrent interning from many threads agrees on one id per string.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collector/string_interner.h"

namespace cutrace {
namespace {

TEST(StringInterner, IdsStartAtOneAndAreStable) {
  StringInterner in;
  EXPECT_EQ(in.Find("a"), 0u);
  EXPECT_EQ(in.Intern("a"), 1u);
  EXPECT_EQ(in.Intern("b"), 2u);
  EXPECT_EQ(in.Intern("a"), 1u);
  EXPECT_EQ(in.Intern(""), 3u);  // the empty string is a string
  EXPECT_EQ(in.Find("b"), 2u);
  EXPECT_EQ(in.Lookup(2), "b");
  EXPECT_EQ(in.Lookup(0), "");
  EXPECT_EQ(in.Lookup(99), "");
  EXPECT_EQ(in.size(), 3u);
  // Keys stay valid as the table grows (strings live in a deque).
  for (int i = 0; i < 10000; ++i) in.Intern(std::to_string(i) + ".s");
  EXPECT_EQ(in.Find("a"), 1u);
  EXPECT_EQ(in.Find("9999.s"), 10003u);
}

TEST(StringInterner, TakeNewReturnsEachStringOnce) {
  StringInterner in;
  in.Intern("x");
  in.Intern("y");
  std::vector<InternedEntry> n = in.TakeNew();
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].id, 1u);
  EXPECT_EQ(n[0].value, "x");
  EXPECT_EQ(n[1].value, "y");
  EXPECT_TRUE(in.TakeNew().empty());
  in.Intern("x");
  EXPECT_TRUE(in.TakeNew().empty());
  in.Intern("z");
  n = in.TakeNew();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].id, 3u);
  in.MarkAllNew();
  EXPECT_EQ(in.TakeNew().size(), 3u);
}

TEST(StringInterner, ConcurrentInternAgreesOnIds) {
  StringInterner in;
  constexpr int kThreads = 8;
  constexpr int kStrings = 2000;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kStrings));
  std::vector<InternedEntry> taken;
  std::atomic<bool> done{false};
  // A concurrent TakeNew() caller, as the writer thread is.
  std::thread taker([&] {
    while (!done.load()) {
      for (InternedEntry& e : in.TakeNew()) taken.push_back(std::move(e));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kStrings; ++i) {
        const int s = (i * 7 + t * 13) % kStrings;  // each thread in its own order
        ids[t][s] = in.Intern(std::string("name-") + std::to_string(s));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done.store(true);
  taker.join();
  for (InternedEntry& e : in.TakeNew()) taken.push_back(std::move(e));

  std::set<uint32_t> distinct;
  for (int s = 0; s < kStrings; ++s) {
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(ids[t][s], ids[0][s]);
    distinct.insert(ids[0][s]);
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kStrings));
  EXPECT_EQ(*distinct.begin(), 1u);
  EXPECT_EQ(*distinct.rbegin(), static_cast<uint32_t>(kStrings));
  ASSERT_EQ(taken.size(), static_cast<size_t>(kStrings));  // each exactly once, in id order
  for (size_t i = 0; i < taken.size(); ++i) {
    EXPECT_EQ(taken[i].id, i + 1);
    EXPECT_EQ(in.Find(taken[i].value), taken[i].id);
  }
}

TEST(Demangle, MangledNamesOnly) {
  EXPECT_EQ(Demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(Demangle("_ZN7cutlass6KernelINS_4gemmEEEvNT_6ParamsE"), 
            "void cutlass::Kernel<cutlass::gemm>(cutlass::gemm::Params)");
  EXPECT_EQ(Demangle("plain_c_kernel"), "");
  EXPECT_EQ(Demangle("_Z"), "");
  EXPECT_EQ(Demangle("_Zgarbage!"), "");
  EXPECT_EQ(Demangle(""), "");
}

}  // namespace
}  // namespace cutrace
