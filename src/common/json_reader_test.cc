// JsonReader: every read checks the type first, names the field in its error, and the first
// error sticks. Records keep defaults for missing or null fields; messages take null as a value.
#include "common/json_reader.h"

#include <gtest/gtest.h>

namespace pinpoint {
namespace {

using nlohmann::json;

TEST(JsonReaderTest, RecordKeepsDefaultsForMissingOrNullFields) {
  json j{{"n", nullptr}, {"s", "x"}};
  auto in = JsonReader::Record(j, "job");
  int n = 7;
  std::string s, t = "keep";
  std::optional<int> code = 3;
  in.Integer("n", &n);
  in.String("s", &s);
  in.String("t", &t);
  in.OptionalInteger("n", &code);
  ASSERT_TRUE(in.ok()) << in.error().message();
  EXPECT_EQ(n, 7);
  EXPECT_EQ(s, "x");
  EXPECT_EQ(t, "keep");
  EXPECT_FALSE(code.has_value());
}

TEST(JsonReaderTest, RecordErrorsNameTheField) {
  struct Case {
    json j;
    const char* message;
  } cases[] = {
      {json{{"gpus", "2"}}, "job.gpus must be an integer"},
      {json{{"gpus", 1.5}}, "job.gpus must be an integer"},
      {json{{"gpus", uint64_t{1} << 40}}, "job.gpus out of range"},
      {json{{"gpus", -(int64_t{1} << 40)}}, "job.gpus out of range"},
      {json::array(), "job must be a JSON object"},
  };
  for (const auto& c : cases) {
    auto in = JsonReader::Record(c.j, "job");
    int gpus = 0;
    in.Integer("gpus", &gpus);
    EXPECT_EQ(in.error().message(), c.message) << c.j.dump();
    EXPECT_EQ(in.error().code(), Code::kInvalidArgument);
  }
}

TEST(JsonReaderTest, MessageTakesNullAsAWrongTypeAndQuotesTheField) {
  json j{{"wait", nullptr}};
  auto in = JsonReader::Message(j, "config: ");
  bool wait = false;
  in.Bool("wait", &wait);
  EXPECT_EQ(in.error().message(), "config: \"wait\" must be true or false");
}

TEST(JsonReaderTest, FirstErrorSticks) {
  json j{{"a", "x"}, {"b", "y"}};
  auto in = JsonReader::Record(j, "r");
  int a = 0, b = 0;
  in.Integer("a", &a);
  in.Integer("b", &b);
  EXPECT_EQ(in.error().message(), "r.a must be an integer");
}

TEST(JsonReaderTest, RangesListsAndMaps) {
  json j{{"limit", 70000},
         {"ids", {1, -2, 3}},
         {"big", {uint64_t{1} << 63}},
         {"env", {{"A", "1"}, {"B", 2}}},
         {"empty", ""},
         {"u64", ~uint64_t{0}}};
  {
    auto in = JsonReader::Message(j, "");
    int limit = 0;
    in.Integer("limit", &limit, 64, 65536);
    EXPECT_EQ(in.error().message(), "\"limit\" must be between 64 and 65536");
  }
  {
    auto in = JsonReader::Record(j, "r");
    std::vector<int> ids;
    in.IntegerList("ids", &ids);
    EXPECT_EQ(ids, (std::vector<int>{1, -2, 3}));
    uint64_t u64 = 0;
    in.Integer("u64", &u64);
    EXPECT_EQ(u64, ~uint64_t{0});
    std::vector<int64_t> big;
    in.IntegerList("big", &big);
    EXPECT_EQ(in.error().message(), "r.big must be an array of integers");
  }
  {
    auto in = JsonReader::Record(j, "r");
    std::map<std::string, std::string> env;
    in.StringMap("env", &env);
    EXPECT_EQ(in.error().message(), "r.env must be an object of strings");
    EXPECT_TRUE(env.empty()) << "nothing is kept from a field that failed";
  }
  {
    auto in = JsonReader::Message(j, "");
    std::string s;
    in.NonEmptyString("empty", &s);
    EXPECT_EQ(in.error().message(), "\"empty\" must be a non-empty string");
  }
}

Result<int> Even(const json& j) {
  if (!j.is_number_integer() || j.get<int64_t>() % 2 != 0)
    return InvalidArgument("item must be even");
  return static_cast<int>(j.get<int64_t>());
}

TEST(JsonReaderTest, NestedFormsPassTheirErrorOn) {
  json j{{"items", {2, 4, 5}}, {"one", 6}, {"none", nullptr}};
  auto in = JsonReader::Record(j, "r");
  std::optional<int> one, none = 1;
  in.OptionalObject("one", &one, Even);
  in.OptionalObject("none", &none, Even);
  EXPECT_EQ(one, 6);
  EXPECT_FALSE(none.has_value());
  std::vector<int> items;
  in.ObjectList("items", &items, Even);
  EXPECT_EQ(in.error().message(), "item must be even");
  auto missing = JsonReader::Record(j, "r");
  EXPECT_FALSE(missing.Require("gone"));
  EXPECT_EQ(missing.error().message(), "r.gone is missing");
}

}  // namespace
}  // namespace pinpoint
