// Short kernel names (collector/short_name.h): template arguments and
// parameter lists elided, return types dropped, non-signatures untouched,
// collisions told apart by a hash of the full name.
#include "collector/short_name.h"

#include <gtest/gtest.h>

namespace cutrace {
namespace {

TEST(ShortName, ElidesTemplateArgumentsAndParameters) {
  EXPECT_EQ(ShortName("void at::native::vectorized_elementwise_kernel<4, "
                      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
                      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"),
            "at::native::vectorized_elementwise_kernel<\u2026>(\u2026)");
  EXPECT_EQ(ShortName("void scale(float*, int)"), "scale(\u2026)");
  EXPECT_EQ(ShortName("void noargs()"), "noargs()");
}

TEST(ShortName, KeepsAnonymousNamespacesLambdasAndOperators) {
  EXPECT_EQ(ShortName("void at::native::(anonymous namespace)::mul_kernel<float>(float*, int)"),
            "at::native::(anonymous namespace)::mul_kernel<\u2026>(\u2026)");
  EXPECT_EQ(ShortName("void at::native::launch(int)::{lambda(int)#1}::operator()(int) const"),
            "at::native::launch(\u2026)::{lambda(\u2026)#1}::operator()(\u2026)");
  EXPECT_EQ(ShortName("bool ns::operator< <int>(int, int)"), "ns::operator<<\u2026>(\u2026)");
}

TEST(ShortName, DropsTemplatedReturnTypes) {
  EXPECT_EQ(ShortName("std::enable_if<true, void>::type k<int>(int)"), "k<\u2026>(\u2026)");
}

TEST(ShortName, LeavesNonSignaturesAlone) {
  EXPECT_EQ(ShortName("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(ShortName("Memcpy HtoD (Device -> Host)"), "Memcpy HtoD (Device -> Host)");
  EXPECT_EQ(ShortName("void broken<int(float"), "void broken<int(float");  // unbalanced
  EXPECT_EQ(ShortName(""), "");
  EXPECT_EQ(ShortName("void k(int) [counted]"), "k(\u2026) [counted]");
}

TEST(NameTag, IsFnv1aOfTheFullName) {
  // FNV-1a 64 of "a" is af63dc4c8601ec8c (the published test vector).
  EXPECT_EQ(NameTag("a", 16), "af63dc4c8601ec8c");
  EXPECT_EQ(NameTag("a", 4), "af63");
}

TEST(UniqueShortNames, TagsCollisionsWithTheirHash) {
  const std::string a = "void k<int>(int)";
  const std::string b = "void k<float>(float)";
  const std::string c = "void other(int)";
  auto shown = UniqueShortNames({a, b, c, a});
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[a], "k<\u2026>(\u2026) #" + NameTag(a, 4));
  EXPECT_EQ(shown[b], "k<\u2026>(\u2026) #" + NameTag(b, 4));
  EXPECT_NE(shown[a], shown[b]);
  EXPECT_EQ(shown[c], "other(\u2026)");
}

}  // namespace
}  // namespace cutrace
