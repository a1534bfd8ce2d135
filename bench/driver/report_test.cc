#include "bench/driver/report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/driver/test_points.h"
#include "common/test_dir.h"

namespace pinpoint::bench {
namespace {

// n copies that each ran the whole makespan and did 2 epochs; no utilisation was sampled.
PointResult Point(Mode mode, int n, double makespan_s, double energy_j) {
  PointResult p = TestPoint(mode, n, makespan_s, makespan_s, energy_j, 2, 0, 0, "epochs");
  p.gpu.utilization_pct = WindowStats{}.utilization_pct;
  return p;
}

RunMeta Meta() {
  RunMeta m;
  m.gpu_name = "NVIDIA H100 80GB HBM3";
  m.driver = "580.159.04";
  m.cuda = "13.0";
  m.date_utc = "2026-11-24T10:00:00Z";
  m.gpu_mem_bytes = 80ull << 30;
  m.command_line = "pinpoint bench --workload mlp";
  m.workload_line = "pp-mlp --epochs 3";
  return m;
}

TEST(ReportTest, MetaLineIsThePlotsSubtitle) {
  EXPECT_EQ(MetaLine(Meta()), "NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0, 2026-11-24");
}

TEST(ReportTest, TwoGpusAreNamedInTheSubtitleTheTableAndTheJson) {
  RunMeta meta = Meta();
  meta.gpu_name = "NVIDIA H200";
  meta.gpu_index = 0;
  meta.gpu_uuid = "GPU-a";
  meta.gpu_indices = {0, 1};
  meta.gpu_uuids = {"GPU-a", "GPU-b"};
  EXPECT_EQ(MetaLine(meta), "2 x NVIDIA H200, driver 580.159.04, CUDA 13.0, 2026-11-24");
  BenchOptions options;
  std::string md = Markdown(meta, options, {Point(Mode::kExclusive, 4, 8, 800)});
  EXPECT_NE(md.find("GPUs 0 GPU-a, 1 GPU-b"), std::string::npos) << md;
  EXPECT_NE(md.find("pinpointd places them"), std::string::npos) << md;
  options.pin = true;
  EXPECT_NE(Markdown(meta, options, {Point(Mode::kExclusive, 4, 8, 800)})
                .find("Copy i of a batch runs on GPU i mod 2"),
            std::string::npos);
  options.pin = false;
  nlohmann::json j = ResultsJson(meta, options, Workload{}, {});
  EXPECT_EQ(j["meta"]["gpu_indices"], nlohmann::json({0, 1}));
  EXPECT_EQ(j["meta"]["gpu_uuids"], nlohmann::json({"GPU-a", "GPU-b"}));
  std::string one = Markdown(Meta(), options, {Point(Mode::kExclusive, 4, 8, 800)});
  EXPECT_EQ(one.find("Copy i of a batch"), std::string::npos) << "one GPU: no such sentence";
}

TEST(ReportTest, CsvFilesHaveAHeaderAndNaNForUnknowns) {
  PointResult skipped = Point(Mode::kExclusive, 16, 1, 1);
  skipped.skipped = true;
  PointResult no_energy = Point(Mode::kMps, 4, 2, -1);
  std::vector<PointResult> points = {Point(Mode::kExclusive, 4, 8, 800), no_energy, skipped};
  std::string pts = PointsCsv("mlp", points);
  std::istringstream lines(pts);
  std::string header, row1, row2, row3;
  std::getline(lines, header);
  std::getline(lines, row1);
  std::getline(lines, row2);
  std::getline(lines, row3);
  EXPECT_EQ(header.rfind("workload,mode,n,rep,status,", 0), 0u);
  EXPECT_EQ(row1.rfind("mlp,exclusive,4,1,ok,4,0,8,8,1,30,8,8,0,800,200,100,NaN,0,", 0), 0u)
      << row1;
  EXPECT_NE(row2.find(",NaN,NaN,"), std::string::npos) << row2;
  EXPECT_EQ(row3.rfind("mlp,exclusive,16,1,skipped,", 0), 0u) << row3;

  std::string summary = SummaryCsv("mlp", Summarize(points, {Mode::kExclusive, Mode::kMps}));
  EXPECT_EQ(summary.rfind("workload,mode,n,reps,unit,throughput,vs_exclusive,", 0), 0u);
  EXPECT_NE(summary.find("\nmlp,exclusive,4,1,epochs,1,1,30,"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\nmlp,mps,4,1,epochs,4,4,120,"), std::string::npos) << summary;
}

TEST(ReportTest, MarkdownHasTheTableTheTargetsAndWhatWasNotRun) {
  BenchOptions o;
  o.workload = "mlp";
  o.modes = {Mode::kExclusive, Mode::kMps};
  o.gpu_mem_bytes = 2ull << 30;
  o.budget_s = 100;
  PointResult skipped = Point(Mode::kExclusive, 16, 1, 1);
  skipped.skipped = true;
  PointResult failed = Point(Mode::kMps, 16, 2, 100);
  failed.batch.jobs[0].ok = false;
  failed.batch.jobs[0].detail = "job 9 failed (exit code 2): pp-mlp error: out of memory";
  std::string md =
      Markdown(Meta(), o,
               {Point(Mode::kExclusive, 4, 8, 800), Point(Mode::kMps, 4, 2, 200), skipped, failed});
  EXPECT_NE(md.find("# pinpoint bench: mlp"), std::string::npos);
  EXPECT_NE(md.find("NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0"), std::string::npos);
  EXPECT_NE(md.find("a slice of 2GiB"), std::string::npos);
  EXPECT_NE(md.find("| throughput (epochs/s) |"), std::string::npos);
  EXPECT_NE(md.find("| mps | 4 | 1 | 4 | 4.00x | 120.0 | 2.000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| mps throughput >= 5x exclusive (N=16) | - | not measured |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Not run, to stay within the time budget of 100 s: exclusive N=16 rep 1."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("out of memory"), std::string::npos);
  EXPECT_NE(md.find("`pinpoint bench --workload mlp`"), std::string::npos);
}

TEST(ReportTest, WriteResultsWritesEveryFile) {
  TestDir dir;
  BenchOptions o;
  o.modes = {Mode::kMps};
  Workload w;
  w.name = "busy";
  w.argv = {"/bin/pp-busy", "--iters", "5"};
  w.gpu_mem_bytes = 1ull << 30;
  std::string out = dir.path() + "/a/b";
  ASSERT_TRUE(WriteResults(out, Meta(), o, w, {Point(Mode::kMps, 2, 1, 100)}).ok());
  for (const char* f : {"results.json", "points.csv", "summary.csv", "results.md", "meta.txt"}) {
    std::ifstream in(out + "/" + f);
    EXPECT_TRUE(in.good()) << f;
  }
  std::ifstream in(out + "/results.json");
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["format"], "pinpoint-bench/1");
  EXPECT_EQ(j["meta"]["driver"], "580.159.04");
  EXPECT_EQ(j["points"][0]["mode"], "mps");
  EXPECT_EQ(j["points"][0]["jobs"].size(), 2u);
  EXPECT_EQ(j["points"][0]["metrics"]["energy_per_job_j"], 50.0);
  EXPECT_EQ(j["workload"]["gpu_mem_bytes"], 1ull << 30);
  EXPECT_EQ(j["targets"].size(), 5u);
}

}  // namespace
}  // namespace pinpoint::bench
