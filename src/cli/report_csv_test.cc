// report --csv against hostile names: every cell reads back as one cell (RFC 4180), and no cell
// a user controls starts a spreadsheet formula.
#include "cli/report_csv.h"

#include <gtest/gtest.h>

namespace pinpoint::cli {
namespace {

// A minimal RFC 4180 reader: the rows and cells of `csv` (CRLF line ends).
std::vector<std::vector<std::string>> ReadCsv(const std::string& csv) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    char c = csv[i];
    std::string& cell = rows.back().back();
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < csv.size() && csv[i + 1] == '\n') {
      ++i;
      rows.emplace_back(1);
    } else {
      cell += c;
    }
  }
  rows.pop_back();  // after the last CRLF
  return rows;
}

TEST(CsvTextTest, QuotesAndDefusesFormulas) {
  EXPECT_EQ(CsvText("plain"), "plain");
  EXPECT_EQ(CsvText("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvText("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvText("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvText("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
  EXPECT_EQ(CsvText("+1"), "'+1");
  EXPECT_EQ(CsvText("-1"), "'-1");
  EXPECT_EQ(CsvText("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvText("\t=1"), "'\t'=1");
  EXPECT_EQ(CsvText("=1,2"), "\"'=1,2\"");
  EXPECT_EQ(CsvText(""), "");
  EXPECT_EQ(CsvText("a=b"), "a=b") << "only a sign where a field begins is a formula";
}

// Attack: a job name that starts a formula once a spreadsheet splits the line at ; tab or |
// instead of the comma.
TEST(CsvTextTest, AFormulaAfterAnySeparatorIsInert) {
  EXPECT_EQ(CsvText("x;=1+1"), "x;'=1+1");
  EXPECT_EQ(CsvText("x\t+1"), "x\t'+1");
  EXPECT_EQ(CsvText("x|@SUM(A1)"), "x|'@SUM(A1)");
  EXPECT_EQ(CsvText("x; \"-1\""), "\"x; \"\"'-1\"\"\"");
  EXPECT_EQ(CsvText("x,=1"), "\"x,'=1\"");
  EXPECT_EQ(CsvText("a;b=c"), "a;b=c");
  for (std::string_view hostile : {"x;=1", "x\t=1", "x|=1", "x,=1", "x; \"=1"}) {
    std::string cell = CsvText(hostile);
    for (char sep : {',', ';', '\t', '|'}) {
      for (size_t at = 0; at < cell.size(); ++at) {
        if (at > 0 && cell[at - 1] != sep) continue;
        size_t i = at;
        while (i < cell.size() && (cell[i] == '"' || cell[i] == ' ')) ++i;
        ASSERT_TRUE(i == cell.size() ||
                    std::string_view("=+-@").find(cell[i]) == std::string_view::npos)
            << "a field split at '" << sep << "' opens a formula in " << cell;
      }
    }
  }
}

TEST(JobsCsvTest, HostileNamesStayInTheirCell) {
  const std::vector<std::string> names = {
      "a,b", "say \"hi\"", "line\r\nbreak", "=cmd|' /C calc'!A0", "@evil", "-2+3", "ok"};
  std::vector<JobView> jobs;
  for (size_t i = 0; i < names.size(); ++i) {
    JobView j;
    j.id = static_cast<JobId>(i + 1);
    j.user = i == 0 ? "=HYPERLINK(\"x\")" : "ana";
    j.request.name = names[i];
    j.request.gpus = 1;
    j.state = JobState::kCompleted;
    j.reason = "exit-0";
    j.submit_ms = 1'717'243'200'000;
    j.end_ms = 1'717'243'260'000;
    j.exit_code = 0;
    jobs.push_back(j);
  }
  JobView running;
  running.state = JobState::kRunning;
  jobs.push_back(running);
  auto rows = ReadCsv(JobsCsv(jobs));
  ASSERT_EQ(rows.size(), names.size() + 1) << "a header and one row per ended job";
  const size_t columns = rows[0].size();
  EXPECT_EQ(rows[0][2], "name");
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& row = rows[i + 1];
    ASSERT_EQ(row.size(), columns) << names[i];
    std::string name = row[2];
    if (!names[i].empty() && std::string("=+-@").find(names[i][0]) != std::string::npos) {
      EXPECT_EQ(name, "'" + names[i]);
    } else {
      EXPECT_EQ(name, names[i]);
    }
    for (const auto& cell : row) {
      EXPECT_TRUE(cell.empty() || std::string("=+-@").find(cell[0]) == std::string::npos) << cell;
    }
    EXPECT_EQ(row[6], "") << "never started";
    EXPECT_EQ(row[7], "2024-06-01T12:01:00Z");
  }
  EXPECT_EQ(rows[1][1], "'=HYPERLINK(\"x\")");
}

TEST(ReportCsvTest, OneRowPerUserAndTheTotal) {
  UsageReport report;
  ReportRow r;
  r.user = "bo,\"x\"";
  r.jobs = 3;
  r.energy_kj = 1.5;
  report.users.push_back(r);
  report.total = r;
  report.total.user = "(all)";
  auto rows = ReadCsv(ReportCsv(report));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0], "user");
  EXPECT_EQ(rows[1][0], "bo,\"x\"");
  EXPECT_EQ(rows[1][1], "3");
  EXPECT_EQ(rows[1][5], "") << "unused_mem_pct without slice data is empty";
  EXPECT_EQ(rows[1][8], "1.500");
  EXPECT_EQ(rows[2][0], "(all)");
}

}  // namespace
}  // namespace pinpoint::cli
