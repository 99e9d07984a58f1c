// ForEachListItem (collector/list_items.h): the comma-list splitter of every
// option that takes a list, and the Kinds vocabulary built on it
// (collector/trace_kinds.h), which `cutrace run --kinds` and CUTRACE_KINDS share.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collector/list_items.h"
#include "collector/trace_kinds.h"

namespace cutrace {
namespace {

std::vector<std::string> Items(std::string_view list) {
  std::vector<std::string> out;
  ForEachListItem(list, [&](std::string_view item) {
    out.emplace_back(item);
    return true;
  });
  return out;
}

TEST(ListItems, TrimsWhiteSpaceAndSkipsEmptyItems) {
  EXPECT_EQ(Items("kernel, memcpy"), (std::vector<std::string>{"kernel", "memcpy"}));
  // A value from a file or a here-document: a newline (or CR LF) at the end.
  EXPECT_EQ(Items(" speed-of-light ,\tdram__bytes_read.sum\r\n"),
            (std::vector<std::string>{"speed-of-light", "dram__bytes_read.sum"}));
  EXPECT_EQ(Items(",, a,,\n,"), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(Items("").empty());
  EXPECT_TRUE(Items(" \n ,\t").empty());
  // Inner white space is part of the item.
  EXPECT_EQ(Items("a b,c"), (std::vector<std::string>{"a b", "c"}));
}

TEST(ListItems, StopsWhenTheCallbackSaysSo) {
  std::vector<std::string> seen;
  const bool all = ForEachListItem("a,b,c", [&](std::string_view item) {
    seen.emplace_back(item);
    return item != "b";
  });
  EXPECT_FALSE(all);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(ForEachListItem("a,b", [](std::string_view) { return true; }));
}

TEST(TraceKinds, Words) {
  std::string error;
  auto k = ParseKinds("all", &error);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names().size(), 8u);
  EXPECT_TRUE(k->sync);
  EXPECT_TRUE(k->overhead);
  k = ParseKinds("default", &error);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names(), Kinds{}.Names());
  EXPECT_FALSE(k->sync);
  k = ParseKinds("default, sync", &error);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names(), (std::vector<std::string>{"kernel", "memcpy", "memset", "nvtx", "runtime",
                                                  "driver", "sync", "overhead"}));
  k = ParseKinds("kernel,default", &error);  // default adds to what came before
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names(), Kinds{}.Names());
  k = ParseKinds("none", &error);
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->Names().empty());
  k = ParseKinds("API,Sync", &error);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names(), (std::vector<std::string>{"runtime", "driver", "sync"}));
  // CUPTI's overhead records are a word of their own, not part of the API records.
  k = ParseKinds("api", &error);
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->overhead);
  k = ParseKinds("kernel,overhead", &error);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names(), (std::vector<std::string>{"kernel", "overhead"}));
  k = ParseKinds("runtime,memcpy,memset", &error);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->Names(), (std::vector<std::string>{"memcpy", "memset", "runtime"}));
  EXPECT_FALSE(ParseKinds("", &error));
  EXPECT_FALSE(ParseKinds("kernel;memcpy", &error));
}

TEST(TraceKinds, CaseWhiteSpaceAndEmptyItemsDoNotMatter) {
  // A variable set from a file or a here-document may end in a newline.
  std::string error;
  auto k = ParseKinds(" kernel ,\tNVTX\n,, \r\n", &error);
  ASSERT_TRUE(k) << error;
  EXPECT_EQ(k->Names(), (std::vector<std::string>{"kernel", "nvtx"}));
  EXPECT_FALSE(ParseKinds(" , \n ,", &error));
  EXPECT_EQ(error, "empty list");
  EXPECT_FALSE(ParseKinds("kernel, Bogus\n,memcpy", &error));
  EXPECT_EQ(error,
            "unknown kind \"bogus\" (known: kernel, memcpy, memset, nvtx, api, runtime, driver, sync, "
            "overhead, default, all, none)");
}

}  // namespace
}  // namespace cutrace
