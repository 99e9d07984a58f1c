// What reaches a terminal (viewer_cli/output.h): control characters and
// invalid UTF-8 escaped, valid UTF-8 kept; the table printer escapes cells and
// aligns on what it shows; CSV guards text columns only; --max-input sizes;
// saturated totals print as "overflow".
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "collector/sat_math.h"
#include "viewer_cli/output.h"

namespace cutrace::cli {
namespace {

TEST(EscapeForTerminal, ShowsControlsAndKeepsText) {
  EXPECT_EQ(EscapeForTerminal("plain text"), "plain text");
  EXPECT_EQ(EscapeForTerminal("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(EscapeForTerminal("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(EscapeForTerminal(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeForTerminal("del\x7f"), "del\\x7f");
  EXPECT_EQ(EscapeForTerminal("bel\x07"), "bel\\x07");
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b" "1m"), "\\u009b1m");      // C1 CSI
  EXPECT_EQ(EscapeForTerminal("\x9b" "1m"), "\\x9b1m");            // raw 8-bit CSI
  EXPECT_EQ(EscapeForTerminal("caf\xc3\xa9 \xe2\x96\x88"), "caf\xc3\xa9 \xe2\x96\x88");  // é █
  EXPECT_EQ(EscapeForTerminal("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");                 // U+1F600
  EXPECT_EQ(EscapeForTerminal("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(EscapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeForTerminal("\xe2\x96"), "\\xe2\\x96");          // cut short
}

std::string Printed(const Table& table, Format format) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buffer, &size);
  table.Print(format, out);
  std::fclose(out);
  std::string text(buffer, size);
  free(buffer);
  return text;
}

TEST(Table, EscapesCellsAndAlignsOnWhatItShows) {
  Table table({"n", "name"});
  table.SetRightAligned({true, false});
  table.AddRow({"-5", "a\x1b"});
  table.AddRow({"10", "=b"});
  EXPECT_EQ(Printed(table, Format::kTable),
            " n  name\n"
            "--  -----\n"
            "-5  a\\x1b\n"
            "10  =b\n");
  EXPECT_EQ(Printed(table, Format::kCsv), "n,name\n-5,a\x1b\n10,'=b\n");
}

TEST(ParseSize, AcceptsUnitsAndRefusesJunk) {
  uint64_t bytes = 0;
  ASSERT_TRUE(ParseSize("4G", &bytes));
  EXPECT_EQ(bytes, uint64_t{4} << 30);
  ASSERT_TRUE(ParseSize("512MiB", &bytes));
  EXPECT_EQ(bytes, uint64_t{512} << 20);
  ASSERT_TRUE(ParseSize("100", &bytes));
  EXPECT_EQ(bytes, 100u);
  EXPECT_FALSE(ParseSize("", &bytes));
  EXPECT_FALSE(ParseSize("-1", &bytes));
  EXPECT_FALSE(ParseSize("1.5G", &bytes));
  EXPECT_FALSE(ParseSize("lots", &bytes));
  EXPECT_FALSE(ParseSize("20000000T", &bytes));  // past 2^64
}

TEST(Format, SaturatedTotalsPrintAsOverflow) {
  EXPECT_EQ(FormatDuration(kSaturated), "overflow");
  EXPECT_EQ(FormatBytes(kSaturated), "overflow");
  EXPECT_EQ(FormatDuration(kSaturated - 1), "18446744073.710 s");
}

}  // namespace
}  // namespace cutrace::cli
