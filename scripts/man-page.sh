#!/usr/bin/env bash
# Makes a man page from a page of docs/ with pandoc, so that the man pages say what the docs say.
#   man-page.sh OUT NAME SECTION SUMMARY VERSION DOC.md [HEADING]
# OUT: the page, gzip'ed (pinpoint.1.gz). DOC.md without its title; with HEADING, only the
# "## HEADING" section of it (the configuration reference of docs/admin.md for pinpointd.json(5)).
# Run by the build (cmake/man.cmake); needs pandoc (scripts/install-deps.sh build).
set -euo pipefail
out=$1 name=$2 section=$3 summary=$4 version=$5 doc=$6 heading=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
body() {
  if [[ -n $heading ]]; then
    echo "## DESCRIPTION"
    awk -v h="## $heading" '$0 == h {on = 1; next} on && /^## / {exit} on' "$doc"
  else
    echo "## DESCRIPTION"
    awk 'NR == 1 && /^# / {next} {print}' "$doc"
  fi
}
upper=$(tr '[:lower:].' '[:upper:]_' <<< "$name")
{
  printf '## NAME\n\n%s - %s\n\n' "$name" "$summary"
  body
  printf '\n## SEE ALSO\n\npinpoint(1), pinpointd(8), pinpointd.json(5), and /usr/share/doc/pinpoint/\n'
} | pandoc -f gfm -t man -s --shift-heading-level-by=-1 --lua-filter="$here/../docs/man/man.lua" \
      -M title="$upper" -M section="$section" -M header="pinpoint manual" -M footer="pinpoint $version" \
  | gzip -9n > "$out.tmp"
mv "$out.tmp" "$out"
