#!/usr/bin/env bash
# Installs the Debian 12 packages pinpoint needs to build and test, if any are missing.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libsqlite3-dev nlohmann-json3-dev
          libcli11-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev clang
          libclang-rt-14-dev procps libcpp-httplib-dev prometheus gnuplot-nox
          jq slurmctld slurmd slurm-client munge)
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
