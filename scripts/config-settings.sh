#!/usr/bin/env bash
# Prints the settings of a pinpointd.json in the shape of packaging/pinpointd.json as one sorted
# JSON object: its active settings and its commented-out ones ("// "key": value,") together.
# tests/package compares this with `pinpointd --print-default-config`, so the shipped file
# cannot drift from the defaults. Needs jq. Usage: config-settings.sh FILE
set -euo pipefail
sed -n 's|^ *\(// \)\{0,1\}\("[a-z_]*": .*\)$|\2|p' "$1" | sed 's| *//.*$||; s|,$||' | paste -sd, |
  sed 's/^/{/; s/$/}/' | jq -S .
