// `pinpoint report --csv`: RFC 4180 CSV for spreadsheets, made safe against the text users
// control (user and job names). Rules in docs/cli.md, "report".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/advice.h"
#include "pinpoint/api.h"

namespace pinpoint::cli {

// One text cell, inert whatever separator a spreadsheet picks: wherever a field could begin (at
// the start, and after each , ; tab or |, past any quotes and spaces), a = + - @, tab or carriage
// return gets a ' before it (a spreadsheet would take it for a formula); then, when the cell holds
// a comma, a double quote, CR or LF, it is quoted with its quotes doubled (RFC 4180).
std::string CsvText(std::string_view text);

// One row per user and the total row "(all)", after a header line. Lines end with CRLF.
std::string ReportCsv(const UsageReport& report);
// One row per ended job, after a header line; times in UTC as 2024-05-01T12:00:00Z.
std::string JobsCsv(const std::vector<JobView>& jobs);

}  // namespace pinpoint::cli
