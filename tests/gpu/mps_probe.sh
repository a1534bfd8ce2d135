#!/usr/bin/env bash
# Reads off how MPS behaves on this machine (log lines, client errors, control commands), for the
# facts pinpoint's MPS code relies on. Starts its own control daemon with its own pipe directory
# and quits it at the end. Usage: tests/gpu/mps_probe.sh BIN_DIR (holding pp-busy).
set -u
BIN=$(readlink -f "${1:?usage: mps_probe.sh BIN_DIR}")
W=$(mktemp -d /tmp/pp-probe-XXXXXX); chmod 755 $W
UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
export CUDA_MPS_PIPE_DIRECTORY=$W/pipe CUDA_MPS_LOG_DIRECTORY=$W/log
mkdir -p $W/pipe $W/log; chmod 777 $W/pipe $W/log
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
ctl() { echo "$*" | nvidia-cuda-mps-control; }
CUDA_VISIBLE_DEVICES=$UUID nvidia-cuda-mps-control -d; echo "start rc=$?"
ls -la $W/pipe
echo "== one client"
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 1000000 | tail -2
echo "== get_server_list: [$(ctl get_server_list)]"
SRV=$(ctl get_server_list | head -1)
echo "== get_server_status $SRV: [$(ctl get_server_status $SRV)]"
echo "== long clients + terminate_client"
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 400000000 > $W/c1.txt 2>&1 & C1=$!
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 400000000 > $W/c2.txt 2>&1 & C2=$!
for i in $(seq 50); do n=$(ctl get_client_list $SRV | wc -l); [ "$n" -ge 2 ] && break; sleep 0.2; done
echo "get_client_list: [$(ctl get_client_list $SRV | tr '\n' ' ')] pids $C1 $C2"
echo "get_device_client_list: [$(ctl get_device_client_list $SRV | tr '\n' ' ')]"
echo "terminate_client reply: [$(ctl terminate_client $SRV $C1)]"
wait $C1; echo "terminated client rc=$?"; cat $W/c1.txt | tail -2
kill -KILL $C2; wait $C2; echo "killed c2 rc=$?"
echo "== pinned memory limit 1G, alloc 2G"
CUDA_VISIBLE_DEVICES=$UUID CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1024M $BIN/pp-busy --alloc-mib 2048 --iters 1000; echo "rc=$?"
CUDA_VISIBLE_DEVICES=$UUID CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M $BIN/pp-busy --alloc-mib 512 --iters 1000 | tail -1; echo "rc=$?"
echo "== fault: 2 victims + 1 illegal access"
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 200000000 > $W/v1.txt 2>&1 & V1=$!
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 200000000 > $W/v2.txt 2>&1 & V2=$!
for i in $(seq 50); do n=$(ctl get_client_list $SRV | wc -l); [ "$n" -ge 2 ] && break; sleep 0.2; done
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --illegal-access > $W/bad.txt 2>&1; echo "culprit rc=$? pid-order: v1=$V1 v2=$V2"
cat $W/bad.txt | tail -1
wait $V1; echo "victim1 rc=$?"; tail -1 $W/v1.txt
wait $V2; echo "victim2 rc=$?"; tail -1 $W/v2.txt
echo "server status after: [$(ctl get_server_list | tr '\n' ' ')]"
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 1000000 | tail -1; echo "after-fault client rc=$?"
echo "== SIGKILL control daemon"
CTLPID=$(cat $W/pipe/nvidia-cuda-mps-control.pid 2>/dev/null); echo "control pid file: $CTLPID"
kill -KILL $CTLPID; sleep 1
echo "server still alive? $(ps -o pid=,comm= -p $(ctl get_server_list 2>/dev/null | head -1) 2>/dev/null) | ps: $(ps -eo pid,user,comm | grep -i mps | tr '\n' ';')"
ls -la $W/pipe
CUDA_VISIBLE_DEVICES=$UUID timeout 20 $BIN/pp-busy --blocks 4 --iters 1000000 | tail -1; echo "client with dead control rc=$?"
pkill -KILL -f '^(/[^ ]*/)?nvidia-cuda-mps-server( |$)'; sleep 1
CUDA_VISIBLE_DEVICES=$UUID nvidia-cuda-mps-control -d; echo "restart rc=$?"
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 1000000 | tail -1; echo "after restart rc=$?"
echo "== other user"
id ppuser >/dev/null 2>&1 || useradd -M ppuser
CUDA_VISIBLE_DEVICES=$UUID $BIN/pp-busy --blocks 4 --iters 100000000 > $W/root.txt 2>&1 & R=$!
sleep 1
s=$(date +%s.%N); su ppuser -s /bin/sh -c "CUDA_MPS_PIPE_DIRECTORY=$W/pipe CUDA_VISIBLE_DEVICES=$UUID timeout 60 $BIN/pp-busy --blocks 4 --iters 1000000" | tail -1; echo "other user rc=$? after $(echo "$(date +%s.%N) - $s" | bc)s"
wait $R; tail -1 $W/root.txt
echo "== control.log"; cat $W/log/control.log
echo "== server.log"; cat $W/log/server.log
ctl quit; sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'; echo "quit"
rm -rf $W
