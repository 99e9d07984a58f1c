// The saturating arithmetic (collector/sat_math.h), the CSV quoter
// (collector/csv_field.h) and FileBytes' mapping registry and input cap
// (collector/trace_reader.h), against hand-computed answers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "collector/csv_field.h"
#include "collector/private_file.h"
#include "collector/sat_math.h"
#include "collector/trace_reader.h"

namespace cutrace {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

TEST(SatMath, UnsignedAddMulSubSaturate) {
  EXPECT_EQ(SatAdd(uint64_t{2}, uint64_t{3}), 5u);
  EXPECT_EQ(SatAdd(kMax - 1, uint64_t{1}), kMax);
  EXPECT_EQ(SatAdd(kMax - 1, uint64_t{2}), kSaturated);
  EXPECT_EQ(SatAdd(uint64_t{1} << 63, uint64_t{1} << 63), kSaturated);
  EXPECT_EQ(SatMul(uint64_t{1} << 32, uint64_t{1} << 31), uint64_t{1} << 63);
  EXPECT_EQ(SatMul(uint64_t{1} << 32, uint64_t{1} << 32), kSaturated);
  EXPECT_EQ(SatSub(uint64_t{5}, uint64_t{7}), 0u);
  uint64_t acc = kMax - 10;
  SatAccumulate(&acc, 5);
  EXPECT_EQ(acc, kMax - 5);
  SatAccumulate(&acc, 6);
  EXPECT_EQ(acc, kSaturated);
  SatAccumulate(&acc, 1);  // sticks
  EXPECT_EQ(acc, kSaturated);
}

TEST(SatMath, SignedSaturatesTowardsTheRightEnd) {
  EXPECT_EQ(SatAdd(kI64Max, int64_t{1}), kI64Max);
  EXPECT_EQ(SatAdd(kI64Min, int64_t{-1}), kI64Min);
  EXPECT_EQ(SatSub(kI64Min, int64_t{1}), kI64Min);
  EXPECT_EQ(SatSub(kI64Max, int64_t{-1}), kI64Max);
  int64_t out = 7;
  EXPECT_FALSE(CheckedSub(kI64Max, int64_t{-5}, &out));
  EXPECT_EQ(out, 7);
  EXPECT_TRUE(CheckedSub(int64_t{10}, int64_t{-5}, &out));
  EXPECT_EQ(out, 15);
  EXPECT_EQ(SignedDiff(kMax, 0), kI64Max);
  EXPECT_EQ(SignedDiff(0, kMax), kI64Min);
  EXPECT_EQ(SignedDiff(3, 10), -7);
  EXPECT_EQ(SatOffset(10, -20), 0u);
  EXPECT_EQ(SatOffset(kMax - 1, 5), kSaturated);
  EXPECT_EQ(SatOffset(100, kI64Min), 0u);
  EXPECT_EQ(SatOffset(100, -40), 60u);
  EXPECT_EQ(Magnitude(kI64Min), uint64_t{1} << 63);
  EXPECT_EQ(Magnitude(-3), 3u);
  EXPECT_EQ(Magnitude(kI64Max), static_cast<uint64_t>(kI64Max));
}

TEST(SatMath, DoubleConversionsClampAndRound) {
  EXPECT_EQ(ToU64(2.5), 2u);  // round half to even (the current rounding mode)
  EXPECT_EQ(ToU64(3.5), 4u);
  EXPECT_EQ(ToU64(-5.0), 0u);
  EXPECT_EQ(ToU64(std::nan("")), 0u);
  EXPECT_EQ(ToU64(1e30), kSaturated);
  EXPECT_EQ(ToU64(std::numeric_limits<double>::infinity()), kSaturated);
  EXPECT_EQ(ToU64(18446744073709549568.0), 18446744073709549568u);  // largest double < 2^64
  EXPECT_EQ(ToU64(18446744073709551616.0), kSaturated);             // 2^64
  EXPECT_EQ(ToI64(-1e30), kI64Min);
  EXPECT_EQ(ToI64(1e30), kI64Max);
  EXPECT_EQ(ToI64(9223372036854775808.0), kI64Max);  // 2^63
  EXPECT_EQ(ToI64(-9223372036854775808.0), kI64Min);
  EXPECT_EQ(ToI64(-2.0), -2);
  EXPECT_EQ(ToI64(std::nan("")), 0);
}

TEST(CsvField, QuotesAndGuardsTextOnly) {
  EXPECT_EQ(CsvField("plain", CsvKind::kText), "plain");
  EXPECT_EQ(CsvField("a,b", CsvKind::kText), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\"", CsvKind::kText), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("=1+2", CsvKind::kText), "'=1+2");
  EXPECT_EQ(CsvField("+1", CsvKind::kText), "'+1");
  EXPECT_EQ(CsvField("-5", CsvKind::kText), "'-5");  // a name, even if it reads as a number
  EXPECT_EQ(CsvField("@x", CsvKind::kText), "'@x");
  EXPECT_EQ(CsvField("\tx", CsvKind::kText), "'\tx");
  EXPECT_EQ(CsvField("\rx", CsvKind::kText), "\"'\rx\"");
  EXPECT_EQ(CsvField("=a,b", CsvKind::kText), "\"'=a,b\"");
  EXPECT_EQ(CsvField("x=1", CsvKind::kText), "x=1");
  EXPECT_EQ(CsvField("", CsvKind::kText), "");
  EXPECT_EQ(CsvField("-5", CsvKind::kNumber), "-5");
  EXPECT_EQ(CsvField("-1.5e3", CsvKind::kNumber), "-1.5e3");
}

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "/cutrace_sat_math_test_" + std::to_string(::getpid()) + name;
}

TEST(FileBytes, MappedFilesAreFoundByAddressUntilClosed) {
  const std::string path = TempPath("_mapped");
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("0123456789", f);
    std::fclose(f);
  }
  const char* begin = nullptr;
  {
    auto file = FileBytes::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    std::string_view bytes = (*file)->bytes();
    ASSERT_EQ(bytes, "0123456789");
    begin = bytes.data();
    const char* found = FileBytes::MappedPathAt(begin + 9);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(std::string(found), path);
    EXPECT_EQ(FileBytes::MappedPathAt(begin + 4096 * 16), nullptr);
  }
  EXPECT_EQ(FileBytes::MappedPathAt(begin), nullptr);
  ::unlink(path.c_str());
}

TEST(FileBytes, PipesAreReadUpToTheCap) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string data(5000, 'x');
  ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(fds[1]);
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  FileBytes::SetMaxInputBytes(4096);
  auto file = FileBytes::Open(path);
  FileBytes::SetMaxInputBytes(FileBytes::kDefaultMaxInputBytes);
  ::close(fds[0]);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(), path + ": input larger than --max-input (4096 bytes)");
}

TEST(PrivateFile, IsCreatedWithTheModeAskedForWhateverTheUmask) {
  const std::string path = TempPath("_private");
  ::unlink(path.c_str());
  const mode_t old = ::umask(0);
  const int fd = CreatePrivateFile(path);
  ::umask(old);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::close(fd);
  EXPECT_EQ(CreatePrivateFile(path), -1);  // never replaces
  EXPECT_EQ(errno, EEXIST);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace cutrace
