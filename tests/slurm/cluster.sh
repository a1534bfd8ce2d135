#!/usr/bin/env bash
# A one-node Slurm cluster for the Slurm tests (tests/slurm/slurm_test.sh), from Debian 12's
# packages (slurmctld, slurmd, slurm-client, munge; Slurm 22.05): munged, slurmctld and slurmd
# started directly with every path under SCRATCH, nothing under /etc used, no systemd.
#
#   cluster.sh up SCRATCH     write the configuration, start the daemons, wait until the node is idle
#   cluster.sh down SCRATCH   cancel what runs, stop the daemons, check that none is left
#
# Set by the caller:
#   SC_GRES_CONF   gres.conf to use (from `pinpoint slurm conf`); its File= devices must exist
#   SC_NODE_GRES   the node's Gres= (from `pinpoint slurm conf --node-line`), e.g. gpu:2,shard:158
#   SC_PROLOG, SC_EPILOG   Prolog= and Epilog= scripts (optional)
#   SC_CTLD_PORT, SC_SLURMD_PORT (16817, 16818), SC_KILL_WAIT (5), SC_UP_TIMEOUT (60 s),
#   SC_VIRTUAL_CPUS (16: the node claims 16 CPUs, so several 1-CPU jobs run at once on 2 cores)
# Not SLURM_PROLOG and the like: srun would read those as its own --prolog options.
set -euo pipefail

die() { echo "slurm_cluster: $*" >&2; exit 1; }

# wait_for DEADLINE_SECONDS DESCRIPTION CMD...  -- poll CMD until it succeeds or deadline passes
wait_for() {
    local timeout=$1 desc=$2; shift 2
    local end=$(( $(date +%s%N) / 1000000 + timeout * 1000 ))
    until "$@" >/dev/null 2>&1; do
        if (( $(date +%s%N) / 1000000 >= end )); then
            echo "slurm_cluster: timeout (${timeout}s) waiting for: $desc" >&2
            return 1
        fi
        sleep 0.2
    done
}

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

node_idle() {
    # sinfo -h -N -o %T prints e.g. "idle" (or "idle*" when not responding)
    local st
    st=$(sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null) || return 1
    [[ $st == idle ]]
}

setup_paths() {
    S=$(realpath -m "$1")
    NODE=$(hostname -s)
    CONF_DIR=$S/etc
    export SLURM_CONF=$CONF_DIR/slurm.conf
    MUNGE_DIR=$S/munge
    MUNGE_SOCKET=$MUNGE_DIR/munge.socket.2
    RUN_DIR=$S/run
    LOG_DIR=$S/log
}

cmd_up() {
    setup_paths "$1"
    local t0; t0=$(date +%s%N)
    local ctld_port=${SC_CTLD_PORT:-16817} d_port=${SC_SLURMD_PORT:-16818}
        local timeout=${SC_UP_TIMEOUT:-60}

    for b in munged mungekey slurmctld slurmd sinfo scontrol; do
        command -v $b >/dev/null || die "$b not found (apt-get install munge slurmctld slurmd slurm-client)"
    done
    pid_alive "$RUN_DIR/slurmctld.pid" && die "slurmctld already running for $S"

    mkdir -p "$S" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR" "$S/state" "$S/spool"
    # munged is strict about permissions: dirs must not be group/world writable
    # (unless sticky), key must be owned by the munged user and mode 0600/0400.
    chmod 0755 "$S"
    install -d -m 0755 "$MUNGE_DIR"   # socket dir must be o+x

    # ---- munge ----
    [[ -s $MUNGE_DIR/munge.key ]] || mungekey --create --keyfile="$MUNGE_DIR/munge.key" --bits=1024 >/dev/null
    chmod 0600 "$MUNGE_DIR/munge.key"
    munged --socket="$MUNGE_SOCKET" --key-file="$MUNGE_DIR/munge.key" \
           --pid-file="$MUNGE_DIR/munged.pid" --log-file="$MUNGE_DIR/munged.log" \
           --seed-file="$MUNGE_DIR/munged.seed" --num-threads=2
    # munged daemonizes; it has written its pidfile and created the socket when it returns
    wait_for "$timeout" "munge socket" test -S "$MUNGE_SOCKET"
    wait_for "$timeout" "munge round-trip" \
        bash -c "munge -n -S '$MUNGE_SOCKET' | unmunge -S '$MUNGE_SOCKET'"

    [[ -f ${SC_GRES_CONF:-} ]] || die "SC_GRES_CONF must name a gres.conf"
    [[ -n ${SC_NODE_GRES:-} ]] || die "SC_NODE_GRES must give the node's Gres="
    cp "$SC_GRES_CONF" "$CONF_DIR/gres.conf"
    : > "$CONF_DIR/plugstack.conf"   # keep /etc/slurm/plugstack.conf out of the picture
    # Node topology. Default: SC_VIRTUAL_CPUS=16 "virtual" cores with
    # SlurmdParameters=config_overrides, so that many 1-CPU jobs (e.g. several shard
    # jobs) can run at once on a 2-core CI box. SC_VIRTUAL_CPUS=0: use the real
    # topology from `slurmd -C`. RealMemory=1 so the node never drains for "Low RealMemory".
    local hw slurmd_params=""
    if [[ ${SC_VIRTUAL_CPUS:-16} == 0 ]]; then
        hw=$(slurmd -C | head -n1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
    else
        hw="CPUs=${SC_VIRTUAL_CPUS:-16} Boards=1 SocketsPerBoard=1 CoresPerSocket=${SC_VIRTUAL_CPUS:-16} ThreadsPerCore=1 "
        slurmd_params="SlurmdParameters=config_overrides"
    fi
    local extra=""
    [[ -n ${SC_PROLOG:-} ]]       && extra+="Prolog=$SC_PROLOG"$'\n'
    [[ -n ${SC_EPILOG:-} ]]       && extra+="Epilog=$SC_EPILOG"$'\n'

    cat > "$SLURM_CONF" <<EOF
ClusterName=ci
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$RUN_DIR/slurmctld.pid
SlurmdPidFile=$RUN_DIR/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$CONF_DIR/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu,shard
ReturnToService=2
MailProg=/bin/true
${slurmd_params}
KillWait=${SC_KILL_WAIT:-5}
InactiveLimit=0
MinJobAge=300
SlurmdTimeout=30
${extra}
NodeName=$NODE NodeAddr=127.0.0.1 ${hw}RealMemory=1 Gres=$SC_NODE_GRES State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE OverSubscribe=NO State=UP
EOF

    # ---- slurmctld ----  (-D foreground, backgrounded here; -i ignore stale state)
    setsid slurmctld -D -i -f "$SLURM_CONF" >"$LOG_DIR/slurmctld.stdout" 2>&1 < /dev/null &
    wait_for "$timeout" "slurmctld pidfile" test -s "$RUN_DIR/slurmctld.pid"
    wait_for "$timeout" "slurmctld responding" scontrol ping

    # ---- slurmd ----
    setsid slurmd -D -f "$SLURM_CONF" -N "$NODE" >"$LOG_DIR/slurmd.stdout" 2>&1 < /dev/null &
    wait_for "$timeout" "slurmd pidfile" test -s "$RUN_DIR/slurmd.pid"
    if ! wait_for "$timeout" "node $NODE idle" node_idle; then
        scontrol show node "$NODE" >&2 || true
        return 1
    fi
    local t1; t1=$(date +%s%N)
    echo "slurm_cluster: up in $(( (t1 - t0) / 1000000 )) ms; export SLURM_CONF=$SLURM_CONF"
}

# kill_pidfile NAME PIDFILE TIMEOUT : SIGTERM, wait for exit, SIGKILL on deadline
kill_pidfile() {
    local name=$1 pf=$2 timeout=$3 pid
    [[ -s $pf ]] || return 0
    pid=$(cat "$pf")
    kill -0 "$pid" 2>/dev/null || { rm -f "$pf"; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for "$timeout" "$name exit" bash -c "! kill -0 $pid"; then
        echo "slurm_cluster: $name ($pid) did not exit, SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pf"
}

cmd_down() {
    setup_paths "$1"
    local rc=0
    # Cancel remaining jobs so slurmstepd children go away with slurmd.
    if pid_alive "$RUN_DIR/slurmctld.pid"; then
        scancel --full --quiet --nodelist="$NODE" 2>/dev/null || true
        wait_for 15 "jobs gone" bash -c '[[ -z $(squeue -h -o %i) ]]' || true
    fi
    local t0; t0=$(date +%s%N) p1="" p2=""
    # "scontrol shutdown" stops slurmctld and all slurmd in parallel; fall back to signals.
    pid_alive "$RUN_DIR/slurmd.pid" && p1=$(cat "$RUN_DIR/slurmd.pid")
    pid_alive "$RUN_DIR/slurmctld.pid" && p2=$(cat "$RUN_DIR/slurmctld.pid")
    if [[ -n $p2 ]] && scontrol shutdown >/dev/null 2>&1; then
        wait_for 15 "slurm daemons exit" bash -c "! kill -0 ${p1:-$p2} 2>/dev/null && ! kill -0 $p2 2>/dev/null" || true
    fi
    kill_pidfile slurmd    "$RUN_DIR/slurmd.pid"    15
    kill_pidfile slurmctld "$RUN_DIR/slurmctld.pid" 15
    local t2; t2=$(date +%s%N)
    kill_pidfile munged "$MUNGE_DIR/munged.pid" 10
    local t3; t3=$(date +%s%N)
    echo "slurm_cluster: stop times ms: slurmd+slurmctld=$(( (t2-t0)/1000000 )) munged=$(( (t3-t2)/1000000 ))"
    # Leftover check: anything still referencing this scratch dir.
    local left
    left=$(pgrep -a -f -- "$S/" || true)
    left+=$(pgrep -a slurmstepd || true)
    if [[ -n $left ]]; then
        echo "slurm_cluster: leftover processes:" >&2
        echo "$left" >&2
        rc=1
    else
        echo "slurm_cluster: down, no leftover processes"
    fi
    return $rc
}

case ${1:-} in
    up)   [[ -n ${2:-} ]] || die "usage: $0 up SCRATCH"
          # run in a child process so errexit stays active inside cmd_up; on failure tear down
          if ! "$0" __up "$2"; then
              echo "slurm_cluster: bring-up failed, tearing down; log tails:" >&2
              tail -n 20 "$2"/log/*.log "$2"/munge/munged.log >&2 2>/dev/null || true
              "$0" down "$2" >&2 || true; exit 1
          fi ;;
    __up) cmd_up "$2" ;;
    down) [[ -n ${2:-} ]] || die "usage: $0 down SCRATCH"; cmd_down "$2" ;;
    env)  [[ -n ${2:-} ]] || die "usage: $0 env SCRATCH";  setup_paths "$2"; echo "export SLURM_CONF=$SLURM_CONF" ;;
    *)    die "usage: $0 {up|down|env} SCRATCH" ;;
esac
