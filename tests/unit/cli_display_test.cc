// Text that fits a terminal (viewer_cli/display.h, Table::PrintText): the
// four-digit durations, code-point widths, middle cuts, word wrapping, and
// tables narrowed or split into parts to fit a width, with unique short
// kernel names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "viewer_cli/display.h"
#include "viewer_cli/output.h"

namespace cutrace::cli {
namespace {

// The lines `table` prints at `width` columns.
std::vector<std::string> Lines(const Table& table, size_t width) {
  SetDisplay(width, NameStyle::kShort);
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  table.PrintText(out);
  std::fclose(out);
  std::istringstream text(std::string(buffer, size));
  std::free(buffer);
  SetDisplay(0, NameStyle::kShort);
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  return lines;
}

TEST(FormatDuration, KeepsFourSignificantDigits) {
  EXPECT_EQ(FormatDuration(999), "999 ns");
  EXPECT_EQ(FormatDuration(8771), "8.771 us");
  EXPECT_EQ(FormatDuration(87712), "87.71 us");
  EXPECT_EQ(FormatDuration(414656), "414.7 us");
  EXPECT_EQ(FormatDuration(4147000), "4.147 ms");
  EXPECT_EQ(FormatDuration(2500000000), "2.500 s");
  EXPECT_EQ(FormatDuration(1234567000000), "1234.567 s");
}

TEST(FormatRate, FourSignificantDigits) {
  EXPECT_EQ(FormatRate(53.1234, "GB/s"), "53.12 GB/s");
  EXPECT_EQ(FormatRate(0.0052291, "GB/s"), "0.005229 GB/s");  // "0.01 GB/s" overstated it 2x
  EXPECT_EQ(FormatRate(4491.29, "GB/s"), "4491 GB/s");
  EXPECT_EQ(FormatRate(1.5, "GB/s"), "1.500 GB/s");
  EXPECT_EQ(FormatRate(0.0000001, "GB/s"), "0.000000 GB/s");
  EXPECT_EQ(FormatRate(0.0, "GB/s"), "0 GB/s");
  EXPECT_EQ(FormatRate(std::nan(""), "GB/s"), "0 GB/s");
}

TEST(FormatOffset, ToTheMicrosecondCutDown) {
  const uint64_t t0 = 1'000'000'000;
  EXPECT_EQ(FormatOffset(t0 - 5, t0), "+0 ns");  // before t0
  EXPECT_EQ(FormatOffset(t0 + 812, t0), "+812 ns");
  EXPECT_EQ(FormatOffset(t0 + 812'250, t0), "+812.250 us");
  // Two gaps 10 us apart, which four digits ("+132.1 ms") showed as one.
  EXPECT_EQ(FormatOffset(t0 + 132'074'999, t0), "+132.074 ms");  // cut, not rounded
  EXPECT_EQ(FormatOffset(t0 + 132'084'001, t0), "+132.084 ms");
  EXPECT_EQ(FormatOffset(t0 + 9'999'999'999, t0), "+9999.999 ms");
  EXPECT_EQ(FormatOffset(t0 + 10'000'000'000, t0), "+10.000000 s");
  EXPECT_EQ(FormatOffset(t0 + 3'600'000'123'456, t0), "+3600.000123 s");
}

TEST(ParseDuration, TakesTheOffsetsTablesPrint) {
  uint64_t ns = 0;
  ASSERT_TRUE(ParseDuration("132.074ms", &ns));
  EXPECT_EQ(ns, 132074000u);
  // As the gaps table prints a start: "+132.074 ms".
  ASSERT_TRUE(ParseDuration("+132.074 ms", &ns));
  EXPECT_EQ(ns, 132074000u);
  ASSERT_TRUE(ParseDuration("+812.250 us", &ns));
  EXPECT_EQ(ns, 812250u);
  ASSERT_TRUE(ParseDuration("500", &ns));
  EXPECT_EQ(ns, 500u);
  EXPECT_FALSE(ParseDuration(" ms", &ns));
  EXPECT_FALSE(ParseDuration("-1ms", &ns));
  EXPECT_FALSE(ParseDuration("1 parsec", &ns));
}

TEST(FormatWallClock, UtcToTheMillisecond) {
  EXPECT_EQ(FormatWallClock(1'700'000'000'000'000'000), "22:13:20.000");
  EXPECT_EQ(FormatWallClock(1'700'000'000'123'999'999), "22:13:20.123");  // cut, not rounded
  EXPECT_EQ(FormatWallClock(86'399'999'000'000), "23:59:59.999");
  EXPECT_EQ(FormatWallClock(86'400'000'000'000), "00:00:00.000");
  EXPECT_EQ(FormatWallClock(0), "-");
  EXPECT_EQ(FormatWallClock(-5), "-");
}

TEST(TextWidth, CountsCodePoints) {
  EXPECT_EQ(TextWidth("abc"), 3u);
  EXPECT_EQ(TextWidth("k<\u2026>(\u2026)"), 7u);
}

TEST(FitText, CutsInTheMiddle) {
  EXPECT_EQ(FitText("abcdefghij", 10), "abcdefghij");
  // 5 columns: 3 of the start, the ellipsis, 1 of the end.
  EXPECT_EQ(FitText("abcdefghij", 5), "abc\u2026j");
  EXPECT_EQ(TextWidth(FitText("k<\u2026>(\u2026) #ab12 and more", 8)), 8u);
}

TEST(WrapText, BreaksAtSpacesAndIndents) {
  EXPECT_EQ(WrapText("  one two three", 9), (std::vector<std::string>{"  one two", "    three"}));
  EXPECT_EQ(WrapText("short", 9), std::vector<std::string>{"short"});
  // A unit stays with its number.
  EXPECT_EQ(WrapText("avg 13.00 us", 10), (std::vector<std::string>{"avg", "  13.00 us"}));
  // A label stays with what follows it (it was "... host: vm pid:" / "  1250").
  const std::string x(16, 'x');
  EXPECT_EQ(WrapText(x + " host: vm pid: 1250", 30),
            (std::vector<std::string>{x + " host: vm", "  pid: 1250"}));
  // ... but not with a value so long that the pair would be cut.
  EXPECT_EQ(WrapText("program: /a/very/long/path/to/bin", 20),
            (std::vector<std::string>{"program:", "  /a/very/long/path/", "  to/bin"}));
  // A word longer than a line is cut.
  EXPECT_EQ(WrapText("abcdefghijkl", 5), (std::vector<std::string>{"abcde", "  fgh", "  ijk", "  l"}));
}

TEST(TablePrint, NarrowsTheNameColumnToFit) {
  Table t({"Total", "Name"});
  t.SetRightAligned({true, false});
  t.SetNameColumns({false, true});
  t.AddRow({"1.000 ms", "a_rather_long_kernel_name_that_does_not_fit_in_thirty"});
  const std::vector<std::string> lines = Lines(t, 30);
  ASSERT_EQ(lines.size(), 3u);
  for (const std::string& line : lines) EXPECT_LE(TextWidth(line), 30u) << line;
  EXPECT_EQ(TextWidth(lines[2]), 30u);
  EXPECT_NE(lines[2].find("\u2026"), std::string::npos) << lines[2];
  EXPECT_EQ(lines[2].rfind("1.000 ms  a_rather", 0), 0u) << lines[2];
}

TEST(TablePrint, SplitsTooManyColumnsIntoParts) {
  std::vector<std::string> headers;
  for (int c = 0; c < 8; ++c) headers.push_back("Col" + std::to_string(c));
  headers.push_back("Name");
  Table t(headers);
  std::vector<bool> right(9, true), names(9, false);
  right[8] = false, names[8] = true;
  t.SetRightAligned(right);
  t.SetNameColumns(names);
  std::vector<std::string> row(8, "12.34 ms");
  row.push_back("void k<int>(int)");
  t.AddRow(row);
  row.back() = "void k<float>(float)";
  t.AddRow(row);
  // The names show as "k<…>(…) #xxxx" (13 columns). 8 columns of 8 and the
  // name need 8*8 + 13 + 8*2 = 93 columns; in 40 each part holds the name
  // and 2 others (13 + 2*10 = 33; 3 would be 43): 4 parts of 4 lines, with 3
  // blank lines between them.
  const std::vector<std::string> lines = Lines(t, 40);
  ASSERT_EQ(lines.size(), 4u * 4 + 3);
  for (const std::string& line : lines) EXPECT_LE(TextWidth(line), 40u) << line;
  // Colliding short names are told apart, in every part.
  int tagged = 0;
  for (const std::string& line : lines) tagged += line.find("k<\u2026>(\u2026) #") != std::string::npos;
  EXPECT_EQ(tagged, 8);
}

TEST(TablePrint, RepeatsTheLabelColumnInEveryPart) {
  // An NVTX ranges table: numbers, a domain, and the range's name as the
  // row's label. Too wide for 60 columns, it is split; every part shows the
  // names as written (not shortened like kernel names), not the first column.
  Table t({"Time(%)", "CPU total", "Count", "CPU avg", "CPU min", "CPU max", "GPU total", "Domain",
           "Name"});
  std::vector<bool> right(9, true), labels(9, false);
  right[7] = right[8] = false;
  labels[8] = true;
  t.SetRightAligned(right);
  t.SetLabelColumns(labels);
  t.AddRow({"50.0%", "6.536 ms", "10", "653.6 us", "619.1 us", "809.1 us", "6.190 ms", "default",
            "forward(x)"});
  t.AddRow({"42.3%", "5.518 ms", "10", "551.8 us", "509.4 us", "586.4 us", "803.3 us", "default",
            "optimizer.step"});
  const std::vector<std::string> lines = Lines(t, 60);
  // Parts of 4 lines (header, rule, 2 rows) with a blank line between.
  ASSERT_EQ(lines.size() % 5, 4u);
  const size_t parts = (lines.size() + 1) / 5;
  ASSERT_GE(parts, 2u);
  for (size_t p = 0; p < parts; ++p) {
    const std::string& header = lines[p * 5];
    EXPECT_NE(header.find("Name"), std::string::npos) << header;
    EXPECT_NE(lines[p * 5 + 2].find("forward(x)"), std::string::npos) << lines[p * 5 + 2];
    EXPECT_NE(lines[p * 5 + 3].find("optimizer.step"), std::string::npos) << lines[p * 5 + 3];
  }
  // Every other column shows up in exactly one part.
  for (const char* h : {"Time(%)", "CPU total", "Count", "GPU total", "Domain"}) {
    int seen = 0;
    for (size_t p = 0; p < parts; ++p) seen += lines[p * 5].find(h) != std::string::npos;
    EXPECT_EQ(seen, 1) << h;
  }
  for (const std::string& line : lines) EXPECT_LE(TextWidth(line), 60u) << line;
}

TEST(TablePrint, ClosesUpRatherThanLeaveAColumnAlone) {
  // Idle by cause: ten number columns, 81 wide with two spaces between. At
  // 80 it was split, its last column alone beside the device; with one
  // space (72) it fits in one part. At 70 nothing fits: parts, two spaces.
  Table t({"Device", "Idle", "Unknown", "Sync", "Pageable", "API", "Host busy", "Launch", "Event",
           "Queued"});
  t.SetRightAligned(std::vector<bool>(10, true));
  t.AddRow({"0", "57.96 ms", "0.0%", "0.2%", "0.0%", "0.0%", "93.5%", "5.8%", "0.0%", "0.4%"});
  const std::vector<std::string> one = Lines(t, 80);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[0], "Device     Idle Unknown Sync Pageable  API Host busy Launch Event Queued");
  EXPECT_EQ(one[2], "     0 57.96 ms    0.0% 0.2%     0.0% 0.0%     93.5%   5.8%  0.0%   0.4%");
  const std::vector<std::string> parts = Lines(t, 70);
  EXPECT_GT(parts.size(), 3u);
  EXPECT_NE(parts[0].find("Device      Idle"), std::string::npos) << parts[0];
}

TEST(TablePrint, AKeyColumnIsAsWideInEveryPart) {
  // A kernel name past what a part can show, in a table split in three: the
  // name is cut the same way in each part (each part's spare room went to
  // its own copy of the name, which showed one kernel three ways).
  std::vector<std::string> headers;
  for (int c = 0; c < 7; ++c) headers.push_back("Column" + std::to_string(c));
  headers.push_back("Name");
  Table t(headers);
  std::vector<bool> right(8, true), names(8, false);
  right[7] = false, names[7] = true;
  t.SetRightAligned(right);
  t.SetNameColumns(names);
  std::vector<std::string> row = {"1", "22", "333", "4444", "55555", "666666", "7777777"};
  row.push_back("at::native::vectorized_elementwise_kernel_with_a_very_long_name_indeed");
  t.AddRow(row);
  const std::vector<std::string> lines = Lines(t, 50);
  std::vector<std::string> shown;  // the name cell of each part's row
  for (size_t i = 2; i < lines.size(); i += 4) {
    const std::string& line = lines[i];
    shown.push_back(line.substr(line.find("at::")));
  }
  ASSERT_GE(shown.size(), 2u);
  for (const std::string& s : shown) EXPECT_EQ(s, shown.front());
}

TEST(TablePrint, LabelsAreTheKeyAndNamesNarrowBeforeASplit) {
  // A gaps table: device and start say which row it is; the operations
  // before and after are names that give way (to 12 columns) before the
  // table is split, so that every row keeps its device and start.
  Table t({"Device", "Start", "Duration", "Cause", "Before", "After"});
  t.SetRightAligned({true, true, true, false, false, false});
  t.SetNameColumns({false, false, false, false, true, true});
  t.SetLabelColumns({true, true, false, false, false, false});
  t.AddRow({"0", "+132.074 ms", "9.344 us", "queued", "memcpy:HtoD", "memset"});
  t.AddRow({"0", "+132.084 ms", "117.4 us", "launch_latency", "memset",
            "kernel:preprocess_the_inputs(…)"});
  const std::vector<std::string> lines = Lines(t, 72);
  ASSERT_EQ(lines.size(), 4u);  // one part: header, rule, two rows
  for (const std::string& line : lines) EXPECT_LE(TextWidth(line), 72u) << line;
  EXPECT_EQ(lines[3].rfind("     0  +132.084 ms  117.4 us  launch_latency  memset", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].find("kernel:"), std::string::npos) << lines[3];
}

}  // namespace
}  // namespace cutrace::cli
