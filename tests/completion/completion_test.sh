#!/usr/bin/env bash
# ctest completion: `pinpoint completion bash|zsh` completes every subcommand and option.
# What must be completed is read from the programs themselves, never from the generator: the
# subcommands and options of `pinpoint --help` and `pinpoint X --help`, the options of
# `pinpoint-bench --help`, and the commands and options that pinpoint-slurm and pinpoint-htcondor
# accept (their `case` patterns). The bash script is run as bash runs it on TAB (COMP_WORDS,
# COMP_CWORD); the zsh one is checked with `zsh -n` where zsh is installed.
# Usage: completion_test.sh BIN_DIR SOURCE_DIR
set -uo pipefail
BIN=$(readlink -f "${1:?usage: completion_test.sh BIN_DIR SOURCE_DIR}")
SRC=$(readlink -f "${2:?usage: completion_test.sh BIN_DIR SOURCE_DIR}")
# shellcheck source=../shell/lib.sh
source "$SRC/tests/shell/lib.sh"

# shellcheck disable=SC1090
source <("$BIN/pinpoint" completion bash)
# complete WORD...: what TAB offers after the words, the last one being the word being typed.
complete_words() {
  COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
  _pinpoint_complete 2>/dev/null
  echo " ${COMPREPLY[*]} "
}
# has LIST WORD...: every WORD is in the space-separated LIST.
has() { local list=$1 w; shift; for w in "$@"; do [[ $list == *" $w "* ]] || { echo "missing: $w"; return 1; }; done; }
# The long options of a CLI11 help text: the first field of its option lines ("  -n,--limit INT ...").
long_options() { grep -E '^ +-' | awk '{print $1}' | tr ',' '\n' | grep -E '^--[a-z]' | sort -u; }

# Subcommands: those `pinpoint --help` lists, and the companions.
mapfile -t commands < <("$BIN/pinpoint" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
check "pinpoint --help lists subcommands (${#commands[@]})" test "${#commands[@]}" -ge 10
top=$(complete_words pinpoint "")
check "pinpoint TAB: every subcommand and the companions" has "$top" "${commands[@]}" bench slurm htcondor
check "pinpoint TAB: the hidden completion command is not offered" test "${top/ completion /}" = "$top"
check "pinpoint --TAB: the global options" has "$(complete_words pinpoint --)" --socket --json --version --help

for c in "${commands[@]}"; do
  mapfile -t opts < <("$BIN/pinpoint" "$c" --help | long_options)
  check "pinpoint $c --TAB: its ${#opts[@]} options" has "$(complete_words pinpoint "$c" --)" "${opts[@]}"
done
check "pinpoint qu TAB: queue" test "$(complete_words pinpoint qu)" = " queue "
check "a value is not completed as an option (--gpu-mem TAB)" test "$(complete_words pinpoint submit --gpu-mem "")" = "  "
check "an option's value does not count as a subcommand" \
  has "$(complete_words pinpoint --socket /tmp/s "")" submit queue
check "after -- comes the job's command: no options" test "$(complete_words pinpoint submit --gpus 1 -- python --)" = "  "
check "after -- the first word completes as a command (bas TAB: bash)" \
  has "$(complete_words pinpoint submit --gpus 1 -- bas)" bash
check "options of the subcommand typed, not of others" \
  test "$(complete_words pinpoint logs --s)" = " --stderr "

if [[ -x $BIN/pinpoint-bench ]]; then
  mapfile -t opts < <("$BIN/pinpoint-bench" --help | long_options)
  check "pinpoint bench --TAB: its ${#opts[@]} options" has "$(complete_words pinpoint bench --)" "${opts[@]}"
fi
for companion in slurm htcondor; do
  script=$SRC/integrations/$companion/pinpoint-$companion
  # The dispatch's usage line names the commands: "unknown command '...' (conf, run, ...)".
  mapfile -t subs < <(grep -o "unknown command '\${1:-}' ([a-z, ]*)" "$script" | sed 's/.*(//; s/)//; s/, /\n/g')
  check "pinpoint $companion TAB: its ${#subs[@]} commands" has "$(complete_words pinpoint "$companion" "")" "${subs[@]}"
  for sub in "${subs[@]}"; do
    # The options a command accepts are the --patterns of its cmd_<sub> function.
    mapfile -t opts < <(sed -n "/^cmd_$sub() {/,/^}/p" "$script" | grep -oE -- '^ +--[a-z-]+\)' | tr -d ' )')
    [[ ${#opts[@]} -eq 0 ]] && continue
    check "pinpoint $companion $sub --TAB: its ${#opts[@]} options" \
      has "$(complete_words pinpoint "$companion" "$sub" --)" "${opts[@]}"
  done
done

"$BIN/pinpoint" completion zsh > "${TMPDIR:-/tmp}/_pinpoint.$$"
check "zsh: a #compdef function" test "$(head -n 1 "${TMPDIR:-/tmp}/_pinpoint.$$")" = "#compdef pinpoint"
if command -v zsh >/dev/null; then
  check "zsh: the function parses" zsh -n "${TMPDIR:-/tmp}/_pinpoint.$$"
fi
rm -f "${TMPDIR:-/tmp}/_pinpoint.$$"
"$BIN/pinpoint" completion fish > /dev/null 2>&1
check "an unknown shell is a usage error" test $? -eq 2

echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
