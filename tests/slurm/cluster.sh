#!/usr/bin/env bash
# A Slurm cluster of several nodes on one machine, for the Slurm test (tests/slurm/slurm_test.sh),
# from Debian 12's packages (slurmctld, slurmd, slurm-client, munge; Slurm 22.05). Each node's
# slurmd runs in its own network namespace with its own address on a veth pair to this machine,
# where slurmctld and munged run. Every path is under SCRATCH; nothing under /etc is used, no
# systemd.
#
#   cluster.sh net SCRATCH NODE...  one network namespace per NODE (a veth pair, 198.18.I.2/24 in
#                                   it, 198.18.I.1 here for the I-th node); nothing else yet
#   cluster.sh exec SCRATCH NODE CMD...  runs CMD in NODE's network namespace (only that one)
#   cluster.sh up SCRATCH           write slurm.conf, start munged, slurmctld and every node's
#                                   slurmd, wait until every node is idle
#   cluster.sh down SCRATCH         cancel what runs, stop the daemons, remove the namespaces,
#                                   check that no process is left
#
# Set by the caller of `up`:
#   SC_GRES_CONF   gres.conf for every node (from `pinpoint slurm conf --node NODE`, joined)
#   SC_NODE_LINES  a file with one line per node, "NodeName=NODE Gres=..." (from
#                  `pinpoint slurm conf --node NODE --node-line`); the address, CPUs and
#                  memory are added here
#   SC_PROLOG, SC_EPILOG, SC_HEALTH   Prolog=, Epilog= and HealthCheckProgram= (optional)
#   SC_HEALTH_INTERVAL (5 s), SC_CTLD_PORT (16817), SC_SLURMD_PORT (16818), SC_KILL_WAIT (5),
#   SC_UP_TIMEOUT (60 s), SC_VIRTUAL_CPUS (16: each node claims 16 CPUs, so several 1-CPU jobs
#   run at once on 2 cores)
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

setup_paths() {
    S=$(realpath -m "$1")
    CTL=$(hostname -s)
    CONF_DIR=$S/etc
    export SLURM_CONF=$CONF_DIR/slurm.conf
    MUNGE_DIR=$S/munge
    MUNGE_SOCKET=$MUNGE_DIR/munge.socket.2
    RUN_DIR=$S/run
    LOG_DIR=$S/log
    NODES_FILE=$S/nodes   # "NODE INDEX NETNS HOST_VETH" per node, written by `net`
    # Names of this cluster's namespaces and links: unique to SCRATCH, links at most 15 bytes.
    TAG=$(printf '%s' "$S" | cksum | cut -c1-6)
}

# The nodes, as "NODE INDEX NETNS HOST_VETH" lines.
nodes() { [[ -s $NODES_FILE ]] && cat "$NODES_FILE"; }

cmd_net() {
    setup_paths "$1"; shift
    (($#)) || die "net needs at least one node name"
    command -v ip >/dev/null && command -v nsenter >/dev/null || die "needs ip and nsenter (iproute2, util-linux)"
    mkdir -p "$S"
    [[ ! -s $NODES_FILE ]] || die "$S already has nodes"
    # Only addresses this script makes: refuse where 198.18.0.0/16 (RFC 2544's benchmarking
    # range) is used already.
    if ip -4 -o addr show | grep -q ' 198\.18\.'; then die "198.18.0.0/16 is in use on this machine"; fi
    local index=0 node ns host_veth
    for node in "$@"; do
        [[ $node =~ ^[a-z][a-z0-9]{0,15}$ ]] || die "invalid node name '$node'"
        index=$((index + 1))
        ns=pps$TAG-$node host_veth=pp$TAG$index
        ip netns add "$ns"
        echo "$node $index $ns $host_veth" >> "$NODES_FILE"
        ip link add "$host_veth" type veth peer name eth0 netns "$ns"
        ip addr add "198.18.$index.1/24" dev "$host_veth"
        ip link set "$host_veth" up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "198.18.$index.2/24" dev eth0
        ip -n "$ns" link set eth0 up
        # slurmctld's address is the first node's host side: reached through this machine.
        ip -n "$ns" route add default via "198.18.$index.1"
    done
}

cmd_exec() {
    setup_paths "$1"
    local node=$2; shift 2
    local ns
    ns=$(awk -v n="$node" '$1 == n {print $3}' "$NODES_FILE")
    [[ -n $ns ]] || die "no node '$node' in $S"
    exec nsenter --net="/run/netns/$ns" -- "$@"
}

node_idle() {
    # sinfo -h -N -o %T prints e.g. "idle" (or "idle*" when not responding)
    local st
    st=$(sinfo -h -N -n "$1" -o '%T' 2>/dev/null) || return 1
    [[ $st == idle ]]
}

cmd_up() {
    setup_paths "$1"
    local t0; t0=$(date +%s%N)
    local ctld_port=${SC_CTLD_PORT:-16817} d_port=${SC_SLURMD_PORT:-16818}
    local timeout=${SC_UP_TIMEOUT:-60}

    for b in munged mungekey slurmctld slurmd sinfo scontrol; do
        command -v $b >/dev/null || die "$b not found (apt-get install munge slurmctld slurmd slurm-client)"
    done
    [[ -s $NODES_FILE ]] || die "no nodes: run '$0 net $S NODE...' first"
    pid_alive "$RUN_DIR/slurmctld.pid" && die "slurmctld already running for $S"

    mkdir -p "$S" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR" "$S/state" "$S/spool"
    # munged is strict about permissions: dirs must not be group/world writable
    # (unless sticky), key must be owned by the munged user and mode 0600/0400.
    chmod 0755 "$S"
    install -d -m 0755 "$MUNGE_DIR"   # socket dir must be o+x

    # ---- munge ---- (a Unix socket: reached from every namespace through the file system)
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
    [[ -f ${SC_NODE_LINES:-} ]] || die "SC_NODE_LINES must name the nodes' lines"
    cp "$SC_GRES_CONF" "$CONF_DIR/gres.conf"
    : > "$CONF_DIR/plugstack.conf"   # keep /etc/slurm/plugstack.conf out of the picture
    # Each node claims SC_VIRTUAL_CPUS "virtual" cores (SlurmdParameters=config_overrides), so
    # that many 1-CPU jobs run at once on a 2-core CI box. RealMemory=1 so that no node drains
    # for "Low RealMemory".
    local cpus=${SC_VIRTUAL_CPUS:-16}
    local hw="CPUs=$cpus Boards=1 SocketsPerBoard=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1"
    local node_conf="" names="" node index line
    while read -r node index _; do
        line=$(grep -m1 "^NodeName=$node " "$SC_NODE_LINES") || die "SC_NODE_LINES has no line for $node"
        node_conf+="$line NodeAddr=198.18.$index.2 $hw State=UNKNOWN"$'\n'
        names+=${names:+,}$node
    done < <(nodes)
    local extra=""
    [[ -n ${SC_PROLOG:-} ]] && extra+="Prolog=$SC_PROLOG"$'\n'
    [[ -n ${SC_EPILOG:-} ]] && extra+="Epilog=$SC_EPILOG"$'\n'
    [[ -n ${SC_HEALTH:-} ]] && extra+="HealthCheckProgram=$SC_HEALTH"$'\n'"HealthCheckInterval=${SC_HEALTH_INTERVAL:-5}"$'\n'

    cat > "$SLURM_CONF" <<EOF
ClusterName=ci
SlurmctldHost=$CTL(198.18.1.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$RUN_DIR/slurmctld.pid
SlurmdPidFile=$RUN_DIR/slurmd-%n.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd-%n.log
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
SlurmdParameters=config_overrides
KillWait=${SC_KILL_WAIT:-5}
InactiveLimit=0
MinJobAge=300
SlurmdTimeout=30
MaxArraySize=1001
${extra}
${node_conf}
PartitionName=debug Nodes=$names Default=YES MaxTime=INFINITE OverSubscribe=NO State=UP
EOF

    # ---- slurmctld ----  (-D foreground, backgrounded here; -i ignore stale state)
    setsid slurmctld -D -i -f "$SLURM_CONF" >"$LOG_DIR/slurmctld.stdout" 2>&1 < /dev/null &
    wait_for "$timeout" "slurmctld pidfile" test -s "$RUN_DIR/slurmctld.pid"
    wait_for "$timeout" "slurmctld responding" scontrol ping

    # ---- one slurmd per node, each in its namespace ----
    local ns
    while read -r node _ ns _; do
        mkdir -p "$S/spool/$node"
        setsid nsenter --net="/run/netns/$ns" -- slurmd -D -f "$SLURM_CONF" -N "$node" \
            >"$LOG_DIR/slurmd-$node.stdout" 2>&1 < /dev/null &
    done < <(nodes)
    while read -r node _; do
        wait_for "$timeout" "slurmd pidfile of $node" test -s "$RUN_DIR/slurmd-$node.pid"
        if ! wait_for "$timeout" "node $node idle" node_idle "$node"; then
            scontrol show node "$node" >&2 || true
            return 1
        fi
    done < <(nodes)
    local t1; t1=$(date +%s%N)
    echo "slurm_cluster: $(nodes | wc -l) nodes up in $(( (t1 - t0) / 1000000 )) ms; export SLURM_CONF=$SLURM_CONF"
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
    local rc=0 node ns host_veth
    # Cancel remaining jobs so slurmstepd children go away with slurmd.
    if pid_alive "$RUN_DIR/slurmctld.pid"; then
        scancel --full --quiet 2>/dev/null || true
        wait_for 15 "jobs gone" bash -c '[[ -z $(squeue -h -o %i) ]]' || true
    fi
    local t0; t0=$(date +%s%N)
    # "scontrol shutdown" stops slurmctld and all slurmd in parallel; then signals for the rest.
    # Their pids first: a daemon removes its pid file as it exits.
    local pids; pids=$(cat "$RUN_DIR"/slurmd-*.pid "$RUN_DIR/slurmctld.pid" 2>/dev/null | tr '\n' ' ' || true)
    if pid_alive "$RUN_DIR/slurmctld.pid" && scontrol shutdown >/dev/null 2>&1; then
        wait_for 15 "slurm daemons exit" bash -c "for p in $pids; do ! kill -0 \$p 2>/dev/null || exit 1; done" || true
    fi
    while read -r node _; do
        kill_pidfile "slurmd of $node" "$RUN_DIR/slurmd-$node.pid" 15
    done < <(nodes)
    kill_pidfile slurmctld "$RUN_DIR/slurmctld.pid" 15
    local t2; t2=$(date +%s%N)
    kill_pidfile munged "$MUNGE_DIR/munged.pid" 10
    local t3; t3=$(date +%s%N)
    echo "slurm_cluster: stop times ms: slurmd+slurmctld=$(( (t2-t0)/1000000 )) munged=$(( (t3-t2)/1000000 ))"
    # Leftover check: anything still referencing this scratch dir, then the namespaces.
    local left
    left=$(pgrep -a -f -- "$S/" || true)
    left+=$(pgrep -a slurmstepd || true)
    while read -r node _ ns host_veth; do
        left+=$(ip netns pids "$ns" 2>/dev/null | sed "s/^/in $ns: /" || true)
        ip link del "$host_veth" 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done < <(nodes)
    if [[ -n $left ]]; then
        echo "slurm_cluster: leftover processes:" >&2
        echo "$left" >&2
        rc=1
    else
        echo "slurm_cluster: down, no leftover processes, namespaces removed"
    fi
    return $rc
}

case ${1:-} in
    net)  [[ -n ${2:-} ]] || die "usage: $0 net SCRATCH NODE..."
          if ! "$0" __net "${@:2}"; then "$0" down "$2" >&2 || true; exit 1; fi ;;
    __net) shift; cmd_net "$@" ;;
    exec) [[ $# -ge 4 ]] || die "usage: $0 exec SCRATCH NODE CMD..."; shift; cmd_exec "$@" ;;
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
    *)    die "usage: $0 {net|exec|up|down|env} SCRATCH ..." ;;
esac
