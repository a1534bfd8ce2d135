#!/usr/bin/env bash
# Installs the Debian 12 packages that one kind of work needs, if any are missing.
#   install-deps.sh build   what `make build`, `make package` and `make install` need: the compiler,
#                           the libraries' -dev packages (gRPC and protobuf for pinpoint-k8s),
#                           pandoc for the man pages (the default)
#   install-deps.sh test    build, plus what the tests need: GoogleTest, clang and its fuzzer
#                           runtime, promtool, a one-node Slurm, jq, gnuplot, systemd-analyze, podman (CDI test)
# Nothing that the tests need is installed for a build: a GPU node built with `make build` gets
# no Slurm daemons, no munge and no Prometheus server.
set -euo pipefail
build=(build-essential cmake ninja-build pkg-config git libsqlite3-dev nlohmann-json3-dev
       libcli11-dev libspdlog-dev libfmt-dev libcpp-httplib-dev pandoc
       libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc)
test=(libgtest-dev libgmock-dev clang clang-format libclang-rt-14-dev procps prometheus gnuplot-nox jq zsh
      slurmctld slurmd slurm-client munge systemd podman runc busybox-static)
case ${1:-build} in
  build) packages=("${build[@]}") ;;
  test) packages=("${build[@]}" "${test[@]}") ;;
  *) echo "usage: install-deps.sh [build|test]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "pinpoint: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "pinpoint: run as root, or install them yourself: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
