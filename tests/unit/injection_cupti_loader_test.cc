// Finding and loading libcupti: the search order, and DlCuptiApi resolving
// the entry points of a real shared library (the stand-in libcupti built
// with the tests) or reporting what is missing in one line.
#include <gtest/gtest.h>

#include "injection/cupti/cupti_loader.h"

namespace cutrace::injection {
namespace {

const std::string kBin = CUTRACE_BINARY_DIR;

TEST(InjectionCuptiLoaderTest, SearchOrder) {
  auto c = CuptiCandidates("/opt/my/libcupti.so.13", "/a:/b/::/c");
  std::vector<std::string> want = {"/opt/my/libcupti.so.13",
                                   "/a/libcupti.so.13",
                                   "/b/libcupti.so.13",
                                   "/c/libcupti.so.13",
                                   "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
                                   "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  EXPECT_EQ(c, want);
  EXPECT_EQ(CuptiCandidates("", "").size(), 2u);
}

TEST(InjectionCuptiLoaderTest, AnOverrideIsTakenAsIs) {
  EXPECT_EQ(FindCuptiLibrary("/nowhere/libcupti.so.13"), "/nowhere/libcupti.so.13");
}

TEST(InjectionCuptiLoaderTest, MissingLibraryIsOneLine) {
  std::string loaded;
  auto api = LoadCupti("/nowhere/libcupti.so.13", &loaded);
  ASSERT_FALSE(api.ok());
  const std::string& m = api.status().message();
  EXPECT_NE(m.find("cannot load libcupti (/nowhere/libcupti.so.13)"), std::string::npos) << m;
  EXPECT_NE(m.find("CUTRACE_CUPTI_PATH"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST(InjectionCuptiLoaderTest, ALibraryWithoutCuptiIsRefused) {
  std::string loaded;
  auto api = LoadCupti("libm.so.6", &loaded);
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find("lacks cuptiGetVersion"), std::string::npos)
      << api.status().message();
}

TEST(InjectionCuptiLoaderTest, ResolvesARealLibrary) {
  std::string path = kBin + "/lib/libcutrace_fake_cupti.so";
  std::string loaded;
  auto api = LoadCupti(path, &loaded);
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_EQ(loaded, path);
  uint32_t version = 0;
  EXPECT_EQ((*api)->GetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  // Optional entry points the stand-in lacks report "not supported".
  size_t size = 1;
  uint8_t value = 0;
  EXPECT_EQ((*api)->ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &value),
            CUPTI_ERROR_NOT_SUPPORTED);
  EXPECT_EQ((*api)->ActivityFlushPeriod(10), CUPTI_ERROR_NOT_SUPPORTED);
  const char* name = nullptr;
  EXPECT_EQ((*api)->GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaLaunchKernel_v7000");
  EXPECT_EQ((*api)->ResultString(CUPTI_SUCCESS), "CUPTI_SUCCESS");
  // No CUDA here: both versions are unknown rather than an error.
  EXPECT_EQ((*api)->DriverVersion(), 0);
}

}  // namespace
}  // namespace cutrace::injection

namespace cutrace::injection {
namespace {

// The toolkit's own libcupti (present on CI and here, no GPU needed for
// these calls): every entry point cutrace needs resolves, the version is
// CUDA 13's, and the callback names are what api_filter.h expects.
TEST(InjectionCuptiLoaderTest, TheToolkitsLibcupti) {
  auto path = FindCuptiLibrary("");
  if (!path) GTEST_SKIP() << "no libcupti.so.13 on this machine";
  std::string loaded;
  auto api = LoadCupti("", &loaded);
  ASSERT_TRUE(api.ok()) << api.status().message();
  uint32_t version = 0;
  ASSERT_EQ((*api)->GetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version / 10000, static_cast<uint32_t>(CUPTI_API_VERSION) / 10000) << version;
  const char* name = nullptr;
  ASSERT_EQ((*api)->GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
            CUPTI_SUCCESS);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::string(name).rfind("cudaLaunchKernel", 0), 0u) << name;
  std::string runtime_name = name;
  ASSERT_EQ((*api)->GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, &name),
            CUPTI_SUCCESS);
  EXPECT_EQ(std::string(name).rfind("cuMemcpyHtoD", 0), 0u) << name;
  std::printf("libcupti %s: version %u, names \"%s\", \"%s\"\n", loaded.c_str(), version,
              runtime_name.c_str(), name);
}

}  // namespace
}  // namespace cutrace::injection
