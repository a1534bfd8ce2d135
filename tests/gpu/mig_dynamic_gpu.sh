#!/usr/bin/env bash
# Issue 26 on a real GPU, read-only (the lent GPUs have MIG disabled and must stay so): what NVML
# says about MIG there (pinpointd --mig-profiles), pinpointd refusing at start, with one line
# and a non-zero exit, a GPU not in MIG mode configured `mig-dynamic`, and NvmlBackend's create
# refused on it before any create call (gpu_test's NvmlRealGpuTest, when BIN has gpu_test).
# Nothing is created: the MIG mode and the GPU instances are the same after as before.
# Usage: tests/gpu/mig_dynamic_gpu.sh BIN_DIR
set -u
source "$(dirname "$0")/lib.sh"
suite_setup mig-dynamic "${1:?usage: mig_dynamic_gpu.sh BIN_DIR}"
mode_before=$(nvidia-smi -i 0 --query-gpu=mig.mode.current --format=csv,noheader)
echo "MIG mode of GPU 0 before: $mode_before"
echo '$ pinpointd --mig-profiles'
LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/pinpointd" --mig-profiles | tee "$W/profiles.txt"
check "the backend reports GPU 0's MIG mode as nvidia-smi does" \
  grep -q "^GPU 0 .*: MIG $(echo "$mode_before" | tr 'A-Z' 'a-z')\$" "$W/profiles.txt"
check "it lists the possible placements of the 1g profile" grep -Eq '^  1g\.[0-9]+gb +id +[0-9]+ .*placements 0:1' "$W/profiles.txt"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "metrics_listen": "",
 "gpu_modes": {"0": "mig-dynamic"}}
CFG
echo '$ pinpointd --config config.json   (gpu_modes {"0": "mig-dynamic"})'
LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" timeout 60 "$BIN/pinpointd" --config "$W/config.json" \
  > "$W/out.txt" 2>&1
rc=$?
cat "$W/out.txt"; echo "rc=$rc"
refusal=$(grep 'cannot start' "$W/out.txt")
check "pinpointd exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "with one line saying why" test "$(grep -c 'cannot start' "$W/out.txt")" -eq 1
check "naming the GPU, mig-dynamic and that MIG is disabled" \
  grep -q "gpu_modes gives GPU 0 (.*) mig-dynamic, but MIG is disabled on it" <<< "$refusal"
check "no socket was opened" test ! -e "$W/sock"
if [ -x "$BIN/gpu_test" ]; then
  echo '$ PINPOINT_REAL_NVML=1 gpu_test --gtest_filter=NvmlRealGpuTest.*   (NvmlBackend::CreateMigInstance/DestroyMigInstance)'
  PINPOINT_REAL_NVML=1 LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/gpu_test" --gtest_filter='NvmlRealGpuTest.*' \
    > "$W/real.txt" 2>&1
  rc=$?
  grep -v '^$' "$W/real.txt"
  check "a create on a GPU not in MIG mode is refused, a destroy finds nothing, the GPU is as it was" \
    test "$rc" -eq 0 -a "$(grep -c '\[       OK \]' "$W/real.txt")" -eq 1
fi
mode_after=$(nvidia-smi -i 0 --query-gpu=mig.mode.current --format=csv,noheader)
check "the GPU's MIG mode is unchanged ($mode_after)" test "$mode_after" = "$mode_before"
echo "passed $passed, failed $failed"
rm -rf "$W"
[ "$failed" -eq 0 ]
