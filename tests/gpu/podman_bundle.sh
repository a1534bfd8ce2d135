#!/usr/bin/env bash
# Makes a podman that travels: podman, conmon and runc from this (Debian 12) machine with the
# shared libraries they load that are not the C library's, and `pp-podman`, a wrapper that runs
# it rootful with its own storage and configuration under a directory given at run time. For
# machines without a container runtime (the lent GPU machines: tests/gpu/podman_gpu.sh).
# Usage: tests/gpu/podman_bundle.sh OUT_DIR   (needs podman, conmon, runc installed here)
set -euo pipefail
OUT=${1:?usage: podman_bundle.sh OUT_DIR}
mkdir -p "$OUT/bin" "$OUT/lib"
for tool in podman conmon runc; do
  path=$(command -v "$tool") || { echo "podman_bundle: no $tool here (apt-get install podman runc)" >&2; exit 1; }
  cp -L "$path" "$OUT/bin/$tool"
  # Every library but the C library and the loader (the target's own are used for those).
  ldd "$path" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in libc.so.*|libm.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) continue ;; esac
    cp -L "$lib" "$OUT/lib/"
  done
done
# podman starts conmon, and conmon runc, with environments of their own making: each is a
# wrapper that finds the bundled libraries itself.
for tool in conmon runc; do
  mv "$OUT/bin/$tool" "$OUT/bin/$tool.real"
  printf '#!/bin/sh\nHERE=$(dirname "$(readlink -f "$0")")\nLD_LIBRARY_PATH="$HERE/../lib" exec "$HERE/%s.real" "$@"\n' "$tool" > "$OUT/bin/$tool"
done
cat > "$OUT/bin/pp-podman" <<'WRAP'
#!/usr/bin/env bash
# pp-podman STATE_DIR podman-args...: the bundled podman, rootful, its storage and run state in
# STATE_DIR, runc as the runtime, cgroupfs, no network backend, no signature policy of the host's.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ST=${1:?usage: pp-podman STATE_DIR ARGS...}; shift
mkdir -p "$ST/root" "$ST/run" "$ST/tmp"
[ -f "$ST/containers.conf" ] || cat > "$ST/containers.conf" <<CONF
[engine]
conmon_path = ["$HERE/conmon"]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$ST/events.log"
tmp_dir = "$ST/tmp"
[engine.runtimes]
runc = ["$HERE/runc"]
[containers]
log_driver = "k8s-file"
CONF
[ -f "$ST/storage.conf" ] || printf '[storage]\ndriver = "vfs"\nrunroot = "%s"\ngraphroot = "%s"\n' "$ST/run" "$ST/root" > "$ST/storage.conf"
[ -f "$ST/registries.conf" ] || printf 'unqualified-search-registries = []\n' > "$ST/registries.conf"
export LD_LIBRARY_PATH="$HERE/../lib" CONTAINERS_CONF="$ST/containers.conf" \
  CONTAINERS_STORAGE_CONF="$ST/storage.conf" CONTAINERS_REGISTRIES_CONF="$ST/registries.conf"
exec "$HERE/podman" --root "$ST/root" --runroot "$ST/run" --cgroup-manager cgroupfs \
  --runtime "$HERE/runc" --conmon "$HERE/conmon" --events-backend file "$@"
WRAP
chmod 755 "$OUT/bin/"*
du -sh "$OUT" | cut -f1 | sed 's/^/podman_bundle: /'
