#!/usr/bin/env bash
# ctest bench_plot: bench/plot.sh on a synthetic summary.csv makes its four PNGs.
# Exit 77 (skipped) where gnuplot is not installed: it is needed only to make plots.
set -euo pipefail
command -v gnuplot >/dev/null || { echo "no gnuplot: skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0, 2026-11-24" > "$dir/meta.txt"
{
  echo "workload,mode,n,reps,unit,throughput,vs_exclusive,jobs_per_min,job_mean_s,job_p95_s,wait_mean_s,makespan_s,energy_per_job_j,mean_power_w,utilization_pct,failed_jobs"
  for n in 1 2 4 8 16 32; do
    awk -v n=$n 'BEGIN {
      printf "busy,exclusive,%d,2,Giter,%.4g,1,%.4g,1.30,1.32,%.4g,%.4g,%.4g,110,100,0\n", n, 3.1, 46, (n-1)*0.65, 1.3*n, 143
      printf "busy,timeslice,%d,2,Giter,%.4g,%.4g,%.4g,%.4g,%.4g,0.01,%.4g,%.4g,120,100,0\n", n, 3.3, 3.3/3.1, 49, 1.2*n, 1.25*n, 1.2*n, 120
      m = n < 33 ? n : 33
      printf "busy,mps,%d,2,Giter,%.4g,%.4g,%.4g,1.45,1.5,0.01,1.5,%.4g,%.4g,100,0\n", n, 2.66*m, 2.66*m/3.1, 40*m, 200/n + 20, 100 + 8*n
      printf "busy,bare-mps,%d,2,Giter,%.4g,%.4g,%.4g,1.42,1.45,0,1.45,%.4g,%.4g,100,0\n", n, 2.75*m, 2.75*m/3.1, 41*m, 195/n + 20, 100 + 8*n
      if (n == 1) printf "busy,bare,1,2,Giter,3.2,1.03,48,1.28,1.28,0,1.28,NaN,NaN,NaN,0\n"
    }'
  done
} > "$dir/summary.csv"
bash "$here/plot.sh" "$dir"
for f in throughput jobtime energy energy-bars; do
  [ "$(head -c 4 "$dir/$f.png" | od -An -c | tr -d ' ')" = "211PNG" ] || { echo "FAIL: $f.png is not a PNG"; exit 1; }
done
cp "$dir"/*.png "${PLOT_TEST_KEEP:-$dir}/" 2>/dev/null || true
echo "1 passed, 0 failed"
