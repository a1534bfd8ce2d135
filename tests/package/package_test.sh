#!/usr/bin/env bash
# ctest package: the Debian package from `make package`, installed, run, upgraded and purged, all
# inside a scratch root, so the machine that runs it is left as it was.
#   1. cpack builds the .deb of this build; its files, dependencies, conffiles and maintainer
#      scripts are checked, and apt (simulated) can satisfy its dependencies here.
#   2. dpkg --root installs it into the scratch root, running its maintainer scripts without a
#      chroot (DPKG_ROOT), as dpkg does for a chrootless install: the unit is enabled there.
#   3. The unit passes `systemd-analyze verify` (its paths moved into the root, nothing else).
#   4. pinpointd starts with the unit's ExecStart command line (paths moved into the root) on a
#      simulated node, configured by editing the conffile as an admin would: a job completes.
#   5. Upgrade with a job running: a second build of the package (the same files, a higher
#      version) is installed over it; pinpointd is restarted as systemd restarts it
#      (KillMode=process: SIGTERM to pinpointd only); the job is adopted and completes, and the
#      conffile keeps the admin's changes.
#   6. remove stops pinpointd (here without systemd: prerm signals it), keeps the configuration
#      and the job store and masks the unit; purge leaves nothing.
#   7. A purge while a job still runs keeps the state directory and says so.
# systemd is not PID 1 here, so the unit is not started by systemd; what systemd would do is done
# by hand and named so. Needs root, dpkg, cpack, jq; systemd-analyze and man where installed.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR CPACK
set -uo pipefail
BUILD=$(readlink -f "${1:?usage: package_test.sh BUILD_DIR SOURCE_DIR CPACK}")
SRC=$(readlink -f "${2:?usage: package_test.sh BUILD_DIR SOURCE_DIR CPACK}")
CPACK=${3:?usage: package_test.sh BUILD_DIR SOURCE_DIR CPACK}
[[ $(id -u) == 0 ]] || { echo "needs root (dpkg --root): skipped"; exit 77; }
for b in dpkg dpkg-deb jq "$CPACK"; do
  command -v "$b" >/dev/null || { echo "no $b (scripts/install-deps.sh test installs it): skipped"; exit 77; }
done
# shellcheck source=../shell/lib.sh
source "$SRC/tests/shell/lib.sh"

S=$(mktemp -d /tmp/pppkg-XXXXXX)
R=$S/root  # the scratch root
DAEMON=
cleanup() {
  [[ -n $DAEMON ]] && kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
  touch "$S"/go-* 2>/dev/null  # lets the jobs of this test end
  local pid
  for pid in $(shim_pids); do kill -KILL "$pid" 2>/dev/null; done
  if [[ $failed -gt 0 || $passed -eq 0 ]]; then
    echo "--- pinpointd log"; tail -n 30 "$S"/pinpointd*.log 2>/dev/null
  fi
  rm -rf "$S"
}
trap cleanup EXIT
# The pids of the pinpoint-shim processes run from the scratch root (supervisors of this test's jobs).
shim_pids() {
  local exe
  for exe in /proc/[0-9]*/exe; do
    case $(readlink "$exe" 2>/dev/null) in
      "$R/usr/libexec/pinpoint/pinpoint-shim"*) exe=${exe#/proc/}; echo "${exe%/exe}" ;;
    esac
  done
}

# --- 1. the package
"$CPACK" -G DEB --config "$BUILD/CPackConfig.cmake" -D CPACK_OUTPUT_FILE_PREFIX="$S/out" \
  -D CPACK_PACKAGE_DIRECTORY="$S/cpack" > "$S/cpack.log" 2>&1
deb=$(ls "$S"/out/pinpoint_*.deb 2>/dev/null | head -n 1)
check "cpack builds pinpoint_VERSION_ARCH.deb" test -f "$deb"
[[ -f $deb ]] || { cat "$S/cpack.log"; exit 1; }
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$S/files"
for f in /usr/bin/pinpointd /usr/bin/pinpoint /usr/libexec/pinpoint/pinpoint-shim /usr/libexec/pinpoint/pinpoint-cdi-hook \
         /usr/libexec/pinpoint/pinpoint-slurm /usr/libexec/pinpoint/pinpoint-htcondor \
         /usr/libexec/pinpoint/pinpoint-htcondor-wrapper /usr/libexec/pinpoint/pinpoint-run.sh \
         /usr/libexec/pinpoint/slurm/srun /usr/libexec/pinpoint/slurm/scontrol \
         /lib/systemd/system/pinpointd.service /etc/pinpoint/pinpointd.json /etc/profile.d/pinpoint.sh \
         /usr/share/man/man1/pinpoint.1.gz /usr/share/man/man8/pinpointd.8.gz \
         /usr/share/man/man5/pinpointd.json.5.gz /usr/share/bash-completion/completions/pinpoint \
         /usr/share/zsh/vendor-completions/_pinpoint /usr/share/doc/pinpoint/admin.md \
         /usr/share/doc/pinpoint/copyright; do
  check "package has $f" grep -qx -- "$f" "$S/files"
done
check "package has nothing outside /usr, /etc and /lib" \
  test -z "$(grep -vE '^/(usr|etc|lib)(/|$)|^/$' "$S/files")"
depends=$(dpkg-deb -f "$deb" Depends)
check "depends on libcpp-httplib0.11 (found by dpkg-shlibdeps)" grep -q "libcpp-httplib0.11" <<< "$depends"
check "depends on libc6 and init-system-helpers" grep -q "libc6.*init-system-helpers\|init-system-helpers.*libc6" <<< "$depends"
check "recommends jq and bash-completion" test "$(dpkg-deb -f "$deb" Recommends)" = "jq, bash-completion"
mkdir -p "$S/control"
dpkg-deb -e "$deb" "$S/control"
check "conffiles: /etc/pinpoint/pinpointd.json and /etc/profile.d/pinpoint.sh" \
  test "$(cat "$S/control/conffiles")" = "$(printf '/etc/pinpoint/pinpointd.json\n/etc/profile.d/pinpoint.sh')"
# A login shell inside a job (a script's `#!/bin/bash -l`) sets its PATH anew: the profile snippet
# puts pinpoint's srun first again, once, and does nothing outside a job.
mkdir -p "$S/deb"
dpkg-deb -x "$deb" "$S/deb"
snippet=$S/deb/etc/profile.d/pinpoint.sh
srun_dir=$S/deb/usr/libexec/pinpoint/slurm
check "profile.d: a login shell in a job finds pinpoint's srun first" \
  test "$(env -i PINPOINT_SRUN_DIR="$srun_dir" PATH=/usr/bin:/bin sh -c ". '$snippet'; . '$snippet'; echo \"\$PATH\"")" = "$srun_dir:/usr/bin:/bin"
check "profile.d: outside a job the PATH is left alone" \
  test "$(env -i PATH=/usr/bin:/bin sh -c ". '$snippet'; echo \"\$PATH\"")" = /usr/bin:/bin
for script in postinst prerm postrm; do
  check "$script is an executable shell script" sh -n "$S/control/$script"
done
if command -v apt-get >/dev/null; then
  check "apt can satisfy its dependencies on this machine (simulated install)" \
    sh -c "apt-get install --simulate -o Debug::NoLocking=1 '$deb' 2>&1 | grep -q '^Inst pinpoint '"
fi

# --- 2. install into the scratch root
mkdir -p "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/info"
touch "$R/var/lib/dpkg/status"
# dpkg IN THE ROOT: its own database there; maintainer scripts run here with DPKG_ROOT=$R. Only
# the dependencies are forced: they are Debian packages this root does not hold (checked above).
pdpkg() { dpkg --root="$R" --force-script-chrootless --force-depends --force-confdef --force-confold "$@"; }
pdpkg -i "$deb" > "$S/dpkg-install.log" 2>&1
check "dpkg installs it" grep -q "^Setting up pinpoint " "$S/dpkg-install.log"
check "without systemd, the install says pinpointd is not started and how to start it" \
  grep -q "^pinpoint: pinpointd is not started: systemd is not running in $R. Start it with: setsid /usr/bin/pinpointd -c /etc/pinpoint/pinpointd.json" "$S/dpkg-install.log"
version=$(dpkg-deb -f "$deb" Version)
check "installed: $version" test "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Version} ${Status}' pinpoint)" = "$version install ok installed"
check "pinpoint --version names the version" grep -q "^pinpoint ${version%%+*}" <("$R/usr/bin/pinpoint" --version)
check "pinpointd --version names the version" grep -q "^pinpointd ${version%%+*}" <("$R/usr/bin/pinpointd" --version)
if [[ $version == *+git*.* ]]; then  # built from a git checkout: the revision is the package's
  check "pinpointd --version names the package's revision (${version##*.})" \
    grep -q "^pinpointd .*${version##*.}" <("$R/usr/bin/pinpointd" --version)
fi
for page in man1/pinpoint.1 man8/pinpointd.8 man5/pinpointd.json.5; do
  check "man page $page shows the installed version" \
    sh -c "zcat '$R/usr/share/man/$page.gz' | grep -q '^\.TH .*\"pinpoint $version\"'"
done
check "postinst enabled the unit (multi-user.target.wants)" \
  test "$(readlink "$R/etc/systemd/system/multi-user.target.wants/pinpointd.service")" = /lib/systemd/system/pinpointd.service
check "the shipped configuration is every default, commented out" \
  diff <("$SRC/scripts/config-settings.sh" "$R/etc/pinpoint/pinpointd.json") <("$R/usr/bin/pinpointd" --print-default-config | jq -S .)
if command -v lexgrog >/dev/null; then
  for page in man1/pinpoint.1 man8/pinpointd.8 man5/pinpointd.json.5; do
    check "man page $page has its NAME line" sh -c "lexgrog '$R/usr/share/man/$page.gz' > /dev/null"
  done
fi
# The man pages are for the installed program: no test placeholders of the docs' examples, no
# section on how the examples are tested, no instructions for building the package.
check "pinpoint(1) shows no {{placeholder}} and no test section" \
  sh -c "! zcat '$R/usr/share/man/man1/pinpoint.1.gz' | grep -q -e '{{' -e 'How the examples are checked'"
check "pinpointd(8) opens without build instructions" \
  sh -c "! zcat '$R/usr/share/man/man8/pinpointd.8.gz' | grep -q 'Build the package once'"
if command -v man >/dev/null; then
  for page in man1/pinpoint.1 man8/pinpointd.8 man5/pinpointd.json.5; do
    check "man page $page renders in 80 columns without a troff warning" \
      test -z "$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$R/usr/share/man/$page.gz" 2>&1 >/dev/null)"
  done
fi
check "bash completion is the generated one" grep -q "^complete -F _pinpoint_complete pinpoint" "$R/usr/share/bash-completion/completions/pinpoint"

# --- 3. the unit
unit=$R/lib/systemd/system/pinpointd.service
check "unit: KillMode=process" grep -qx "KillMode=process" "$unit"
check "unit: Restart=on-failure" grep -qx "Restart=on-failure" "$unit"
check "unit: state and runtime directories" grep -qx "StateDirectory=pinpoint" "$unit"
check "unit: nothing that hides the GPUs or the cgroup tree" \
  sh -c "! grep -E '^(PrivateDevices|DevicePolicy|DeviceAllow|ProtectClock|ProtectControlGroups|ProtectKernelTunables|NoNewPrivileges|CapabilityBoundingSet|ProtectSystem|ProtectHome|PrivateTmp)=' '$unit'"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
check "unit: ExecStart runs the packaged pinpointd with the conffile" \
  test "$exec_start" = "/usr/bin/pinpointd -c /etc/pinpoint/pinpointd.json"
# The unit's absolute paths moved into the scratch root: what runs, and what is verified.
in_root() { sed -E "s#(^| |=)/(usr|etc)/#\\1$R/\\2/#g"; }
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$S/unit"
  in_root < "$unit" > "$S/unit/pinpointd.service"
  man_check=--man=no
  command -v man >/dev/null && man_check=--man=yes
  MANPATH=$R/usr/share/man systemd-analyze verify "$man_check" "$S/unit/pinpointd.service" > "$S/verify.log" 2>&1
  check "systemd-analyze verify: no complaint ($man_check)" test "$?:$(cat "$S/verify.log")" = "0:"
  cat "$S/verify.log"
else
  echo "no systemd-analyze (scripts/install-deps.sh test installs systemd): unit not verified"
fi

# --- 4. pinpointd from the unit's command line, on a simulated node
conf=$R/etc/pinpoint/pinpointd.json
# The admin's edit of the conffile: settings uncommented for a simulated node, everything under
# the scratch root, no cgroups (this test must not write /sys/fs/cgroup) and no metrics port.
edit_conffile() {
  sed -i "s|^  // \"backend\": \"auto\",|  \"backend\": \"simulated:h100x2\",|
          s|^  // \"cgroups\": true,|  \"cgroups\": false,|
          s|^  // \"metrics_listen\": \"127.0.0.1:9473\",|  \"metrics_listen\": \"\",|
          s|\"/var/lib/pinpoint\"|\"$R/var/lib/pinpoint\"|; s|\"/run/pinpoint/|\"$R/run/pinpoint/|" "$conf"
}
edit_conffile
read -ra cmd <<< "$(in_root <<< "$exec_start")"
export PINPOINT_SOCKET=$R/run/pinpoint/pinpointd.sock
P=$R/usr/bin/pinpoint
starts=0
# What systemd does to start the unit: its directories (StateDirectory, RuntimeDirectory), then
# ExecStart in the background.
start_unit() {
  mkdir -p -m 0755 "$R/var/lib/pinpoint" "$R/run/pinpoint"
  starts=$((starts + 1))
  "${cmd[@]}" > "$S/pinpointd-$starts.log" 2>&1 &
  DAEMON=$!
  poll 30 "$P" gpus
}
# What `systemctl stop` or the stop of a restart does with KillMode=process: SIGTERM to pinpointd
# alone; its shims and jobs go on.
stop_unit() {
  kill -TERM "$DAEMON"; wait "$DAEMON"; DAEMON=
  rm -rf "$R/run/pinpoint"  # RuntimeDirectory= is removed when the unit stops
}
job_state() { "$P" --json show "$1" | jq -r .job.state; }
check "pinpointd starts from the unit's command line" start_unit
check "... with the packaged shim (found in /usr/libexec/pinpoint)" \
  sh -c "'$P' submit --wait -- true > '$S/first.out'"
check "a job completes" grep -q "completed" "$S/first.out"

# --- 5. upgrade with a job running
"$P" submit --name survivor -- sh -c "while [ ! -e '$S/go-1' ]; do sleep 0.1; done; echo survived" > "$S/submit.out"
id=$(grep -o '[0-9]*' "$S/submit.out")
check "job $id runs" poll 30 sh -c "[ \"\$('$P' --json show $id | jq -r .job.state)\" = running ]"
mkdir -p "$S/v2"
dpkg-deb -R "$deb" "$S/v2"
sed -i "s/^Version: .*/Version: $version.1/" "$S/v2/DEBIAN/control"
dpkg-deb --root-owner-group -b "$S/v2" "$S/pinpoint-v2.deb" > /dev/null
daemon_before=$DAEMON
pdpkg -i "$S/pinpoint-v2.deb" > "$S/dpkg-upgrade.log" 2>&1
check "dpkg upgrades to $version.1" test "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Version}' pinpoint)" = "$version.1"
check "the upgrade stopped nothing: pinpointd still runs" kill -0 "$daemon_before"
check "the upgrade kept the admin's configuration" grep -q '"backend": "simulated:h100x2"' "$conf"
check "... and left no .dpkg-dist beside it" test ! -e "$conf.dpkg-dist"
# postinst's try-restart, as systemd runs it for a running unit with KillMode=process.
stop_unit
check "job $id's supervisor outlives pinpointd's stop" test -n "$(shim_pids)"
check "the new pinpointd starts" start_unit
check "the new pinpointd adopted the running job" grep -q "1 running adopted" "$S/pinpointd-$starts.log"
check "job $id still runs under the new pinpointd" test "$(job_state "$id")" = running
touch "$S/go-1"
"$P" wait "$id" > /dev/null
check "job $id completes after the upgrade" test "$(job_state "$id")" = completed
check "job $id's output is whole" test "$("$P" logs "$id")" = survived

# --- 6. remove, then purge
# Without systemd, prerm stops pinpointd itself (SIGTERM: its jobs go on).
daemon_removed=$DAEMON
pdpkg -r pinpoint > "$S/dpkg-remove.log" 2>&1
check "remove stopped pinpointd without systemd" poll 15 sh -c "! readlink /proc/$daemon_removed/exe"
check "... and said so" grep -q "^pinpoint: stopped pinpointd (pid $daemon_removed); its running jobs go on" "$S/dpkg-remove.log"
wait "$daemon_removed" 2>/dev/null
DAEMON=
check "remove: the programs are gone" test ! -e "$R/usr/bin/pinpointd" -a ! -e "$R/usr/libexec/pinpoint/pinpoint-shim"
check "remove: the configuration stays" grep -q simulated "$conf"
check "remove: the job store stays" test -f "$R/var/lib/pinpoint/pinpoint.db"
check "remove: the unit is masked" test "$(readlink "$R/etc/systemd/system/pinpointd.service")" = /dev/null
pdpkg -P pinpoint > "$S/dpkg-purge.log" 2>&1
check "purge: dpkg knows no pinpoint" sh -c "! dpkg-query --admindir='$R/var/lib/dpkg' -W pinpoint 2>/dev/null"
left=$(find "$R" \( -type f -o -type l \) -not -path "$R/var/lib/dpkg/*" | sed "s|^$R||")
check "purge: no file or link left (${left//$'\n'/ })" test -z "$left"
check "purge: no pinpoint directory left" test -z "$(find "$R" -name '*pinpoint*' -not -path "$R/var/lib/dpkg/*")"

# --- 7. a purge while a job still runs keeps its directory
pdpkg -i "$S/pinpoint-v2.deb" > "$S/dpkg-install2.log" 2>&1
edit_conffile
check "reinstalled, pinpointd starts" start_unit
"$P" submit -- sh -c "while [ ! -e '$S/go-2' ]; do sleep 0.1; done" > "$S/submit2.out"
id2=$(grep -o '[0-9]*' "$S/submit2.out")
poll 30 sh -c "[ \"\$('$P' --json show $id2 | jq -r .job.state)\" = running ]"
stop_unit
pdpkg -P pinpoint > "$S/dpkg-purge2.log" 2>&1
check "purge with a job running: says the state directory is kept" grep -q "jobs still run under pinpoint-shim" "$S/dpkg-purge2.log"
check "purge with a job running: the job's directory is still there" test -d "$R/var/lib/pinpoint/jobs/$id2"
touch "$S/go-2"
check "that job ends under its shim and records how" poll 30 test -f "$R/var/lib/pinpoint/jobs/$id2/exit.json"

echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
