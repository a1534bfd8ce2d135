#!/usr/bin/env bash
# Plots of a pinpoint-bench result directory (or several): from its summary.csv (and meta.txt for
# the subtitle), writes into the same directory
#   throughput.png  throughput vs N, one line per mode
#   jobtime.png     mean job time vs N per mode (bars up to the 95th percentile)
#   energy.png      GPU energy per job vs N per mode
#   energy-bars.png energy per job of each mode at N=16 (or the largest N measured)
# Needs gnuplot (Debian package gnuplot-nox). Usage: bench/plot.sh DIR [DIR...]
set -euo pipefail
if ! command -v gnuplot >/dev/null; then
  echo "plot.sh: needs gnuplot (apt-get install gnuplot-nox)" >&2
  exit 1
fi
[ $# -ge 1 ] || { echo "usage: bench/plot.sh RESULT-DIR [RESULT-DIR...]" >&2; exit 2; }
if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
  TERM_LINE='set terminal pngcairo size 960,600 enhanced font "DejaVu Sans,11"'
else
  TERM_LINE='set terminal png size 960,600'
fi
MODES="exclusive timeslice mps bare-mps bare"
style() {  # gnuplot line style of a mode
  case $1 in
    exclusive) echo 'lc rgb "#c0392b" lw 2 pt 7' ;;
    timeslice) echo 'lc rgb "#e67e22" lw 2 pt 5' ;;
    mps)       echo 'lc rgb "#2471a3" lw 2 pt 9' ;;
    bare-mps)  echo 'lc rgb "#27ae60" lw 2 dt 2 pt 13' ;;
    *)         echo 'lc rgb "#000000" lw 2 pt 3 ps 2' ;;
  esac
}

for dir in "$@"; do
  csv=$dir/summary.csv
  [ -f "$csv" ] || { echo "plot.sh: no $csv" >&2; exit 1; }
  tmp=$(mktemp -d)
  workload=$(awk -F, 'NR==2 {print $1}' "$csv")
  unit=$(awk -F, 'NR>1 && $5 != "units" {print $5; exit}' "$csv")
  meta=$( [ -f "$dir/meta.txt" ] && head -1 "$dir/meta.txt" || echo "")
  # columns of summary.csv: 3 n, 6 throughput, 9 job_mean_s, 10 job_p95_s, 13 energy_per_job_j
  plots_thr=(); plots_time=(); plots_energy=()
  for m in $MODES; do
    awk -F, -v m="$m" 'NR>1 && $2==m {print $3, $6, $9, $10, $13}' "$csv" | sort -n > "$tmp/$m.dat"
    [ -s "$tmp/$m.dat" ] || continue
    s=$(style "$m")
    plots_thr+=("\"$tmp/$m.dat\" using 1:2 with linespoints $s title \"$m\"")
    plots_time+=("\"$tmp/$m.dat\" using 1:3:3:4 with yerrorlines $s title \"$m\"")
    plots_energy+=("\"$tmp/$m.dat\" using 1:5 with linespoints $s title \"$m\"")
  done
  join() { local IFS=,; echo "$*"; }
  bar_n=$(awk -F, 'NR>1 && $3==16 {print 16; exit}' "$csv")
  [ -n "$bar_n" ] || bar_n=$(awk -F, 'NR>1 {print $3}' "$csv" | sort -n | tail -1)
  awk -F, -v n="$bar_n" 'NR>1 && $3==n && $13!="NaN" {print $2, $13}' "$csv" > "$tmp/bars.dat"
  awk -F, 'NR>1 && $2=="bare" && $3==1 && $13!="NaN" {print "bare(N=1)", $13}' "$csv" >> "$tmp/bars.dat"
  awk '!seen[$1]++' "$tmp/bars.dat" > "$tmp/bars1.dat"

  gnuplot <<GP
$TERM_LINE
set datafile missing "NaN"
set grid
set key top left
set logscale x 2
set xlabel "N (copies of the workload on one GPU)"
set xrange [0.8:*]

set output "$dir/throughput.png"
set title "$workload: throughput vs N\n{/*0.8 $meta}"
set ylabel "throughput ($unit/s)"
set yrange [0:*]
plot $(join "${plots_thr[@]}")

set output "$dir/jobtime.png"
set title "$workload: job time vs N (mean; bar to the 95th percentile)\n{/*0.8 $meta}"
set ylabel "job time (s)"
plot $(join "${plots_time[@]}")

set output "$dir/energy.png"
set title "$workload: GPU energy per job vs N\n{/*0.8 $meta}"
set ylabel "energy per job (J)"
set logscale y
set yrange [*:*]
plot $(join "${plots_energy[@]}")

unset logscale
set output "$dir/energy-bars.png"
set title "$workload: GPU energy per job at N=$bar_n\n{/*0.8 $meta}"
set xlabel "mode"
set ylabel "energy per job (J)"
set yrange [0:*]
set xrange [*:*]
set style fill solid 0.8
set boxwidth 0.6
unset key
plot "$tmp/bars1.dat" using 0:2:xtic(1) with boxes lc rgb "#2471a3", \
     "" using 0:2:(sprintf("%.0f J", \$2)) with labels offset 0,1
GP
  rm -rf "$tmp"
  echo "plot.sh: $dir/{throughput,jobtime,energy,energy-bars}.png"
done
