# shellcheck shell=bash disable=SC2034  # BUSY_* are set for the script that sources it
# Sourced by bench/gpu_campaign.sh and bench/mps_overhead.sh: sizes pp-busy to this GPU.
# calibrate_busy PP_BUSY TARGET_S runs one copy alone at 1e8 and at 5e8 iterations of 4 blocks and
# sets BUSY_T1 and BUSY_T5 (their seconds, CUDA context included; empty when a run printed no
# "pp-busy ok" line) and BUSY_ITERS (the iterations, a multiple of 1e7 between 1e8 and 4e10, for
# about TARGET_S seconds of GPU work; 5e8 when the two runs tell nothing).
calibrate_busy() {
  local busy=$1 target=$2
  "$busy" --blocks 4 --iters 1000 >/dev/null 2>&1  # the first CUDA program loads the driver's caches
  BUSY_T1=$("$busy" --blocks 4 --iters 100000000 2>&1 | sed -n 's/^pp-busy ok.* seconds=\([^ ]*\).*/\1/p' | tail -1)
  BUSY_T5=$("$busy" --blocks 4 --iters 500000000 2>&1 | sed -n 's/^pp-busy ok.* seconds=\([^ ]*\).*/\1/p' | tail -1)
  BUSY_ITERS=$(awk -v a="$BUSY_T1" -v b="$BUSY_T5" -v t="$target" 'BEGIN {
    if (a == "" || b == "" || b <= a) { print 500000000; exit }
    it = 4e8 / (b - a) * t; if (it < 1e8) it = 1e8; if (it > 4e10) it = 4e10; printf "%d\n", int(it / 1e7) * 1e7 }')
}
