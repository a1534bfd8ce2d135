// `pinpoint update`'s options as the edit they send (update_args.h).
#include "cli/update_args.h"

#include <gtest/gtest.h>

namespace pinpoint::cli {
namespace {

TEST(UpdateArgsTest, EachOptionGivenIsAFieldOfTheEdit) {
  UpdateArgs a;
  a.time = "1-2";
  a.gpu_mem = "512MiB";
  a.gpu_share = "20%";
  a.name = "n";
  auto edit = BuildEdit(a);
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(edit->time_limit_s, std::optional<int64_t>(26 * 3600));
  EXPECT_EQ(edit->gpu_mem_bytes, std::optional<uint64_t>(512ull << 20));
  EXPECT_EQ(edit->gpu_share_pct, std::optional<int>(20));
  EXPECT_EQ(edit->name, std::optional<std::string>("n"));
  EXPECT_FALSE(edit->priority.has_value()) << "not given: not changed";
  EXPECT_FALSE(edit->array_limit.has_value());
}

TEST(UpdateArgsTest, GpusCpusAndHostMemoryAreFieldsToo) {
  UpdateArgs a;
  a.gpus = 2;
  a.cpus = 4;
  a.mem = "8G";
  auto edit = BuildEdit(a);
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(edit->gpus, std::optional<int>(2));
  EXPECT_EQ(edit->cpus, std::optional<int>(4));
  EXPECT_EQ(edit->mem_bytes, std::optional<uint64_t>(8ull << 30));
  UpdateArgs lift;
  lift.mem = "0";
  ASSERT_TRUE(BuildEdit(lift).ok());
  EXPECT_EQ(BuildEdit(lift)->mem_bytes, std::optional<uint64_t>(0)) << "--mem 0 lifts the limit";
  UpdateArgs bad;
  bad.mem = "lots";
  EXPECT_EQ(BuildEdit(bad).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(BuildEdit(bad).status().message().rfind("--mem: ", 0), 0u)
      << BuildEdit(bad).status().message();
}

TEST(UpdateArgsTest, NothingToChangeAndBadValuesAreOneLine) {
  EXPECT_EQ(BuildEdit({}).status().message(),
            "say what to change: --time, --gpu-mem, --gpu-share, --gpus, --cpus, --mem, --mig, "
            "--qos, --priority, --name or --array-limit");
  UpdateArgs zero;
  zero.time = "0";
  EXPECT_EQ(BuildEdit(zero).status().message(), "--time must be more than 0");
  UpdateArgs mem;
  mem.gpu_mem = "0";
  EXPECT_EQ(BuildEdit(mem).status().message(), "--gpu-mem must be more than 0");
  UpdateArgs time;
  time.time = "soon";
  EXPECT_EQ(BuildEdit(time).status().code(), Code::kInvalidArgument);
  UpdateArgs limit;
  limit.array_limit = 0;
  EXPECT_TRUE(BuildEdit(limit).ok()) << "--array-limit 0 lifts the limit: a change";
}

}  // namespace
}  // namespace pinpoint::cli
