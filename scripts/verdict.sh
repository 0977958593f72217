#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Verdict of one boot: the TAP results printed by the initramfs /init plus
# scripts/console-badness.sh.
#
# Usage: scripts/verdict.sh CONSOLE_LOG
#
# Prints one line per test ("PASS|FAIL|SKIP  K NAME"), any badness excerpt,
# and a last line "verdict: PASS" (exit 0) or "verdict: FAIL (reasons)"
# (exit 1).  FAIL when: the "irqroute-tests: done" line is missing, a test
# failed, fewer results than planned, or the console shows kernel badness.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 1 ] || die "usage: $0 CONSOLE_LOG"
file=$1
[ -r "$file" ] || die "console log not found: $file"

clean=$(mktemp)
trap 'rm -f "$clean"' EXIT
tr -d '\r' <"$file" >"$clean"

reasons=()

# Only the top-level results of /init count: "ok K NAME", "not ok K NAME",
# "ok K NAME # SKIP", at column 0 (test output is indented with "# ").
plan=$(grep -E -m1 '^1\.\.[0-9]+$' "$clean" | cut -c4- || true)
results=$(grep -E '^(not )?ok [0-9]+ [^ ]+( # SKIP.*)?$' "$clean" || true)
npass=0 nfail=0 nskip=0
failed=()
while read -r a b c d; do
	[ -n "$a" ] || continue
	if [ "$a" = not ]; then			# not ok K NAME
		printf 'FAIL  %s %s\n' "$c" "$d"
		nfail=$((nfail + 1))
		failed+=("${d%% *}")
	elif [[ $d == *'# SKIP'* ]]; then	# ok K NAME # SKIP
		printf 'SKIP  %s %s\n' "$b" "${c}"
		nskip=$((nskip + 1))
	else					# ok K NAME
		printf 'PASS  %s %s\n' "$b" "$c"
		npass=$((npass + 1))
	fi
done <<<"$results"

done_line=$(grep -E -m1 '^irqroute-tests: done ' "$clean" || true)
if [ -z "$done_line" ]; then
	reasons+=("no 'irqroute-tests: done' line: kernel crashed, hung or timed out")
else
	echo "$done_line"
	if [ "$done_line" != "irqroute-tests: done pass=$npass fail=$nfail skip=$nskip" ]; then
		reasons+=("TAP lines (pass=$npass fail=$nfail skip=$nskip) disagree with the done line")
	fi
fi
[ -n "$plan" ] || reasons+=("no TAP plan line")
if [ -n "$plan" ] && [ $((npass + nfail + nskip)) -ne "$plan" ]; then
	reasons+=("$((npass + nfail + nskip)) of $plan test results")
fi
[ "$nfail" -eq 0 ] || reasons+=("$nfail failed: ${failed[*]}")

rc=0
badness=$("$(dirname "$0")/console-badness.sh" "$file") || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "$badness"
	first=$(head -n1 <<<"$badness")
	reasons+=("kernel badness: ${first#console-badness: }")
fi

if [ ${#reasons[@]} -eq 0 ]; then
	echo "verdict: PASS"
	exit 0
fi
msg=$(printf '%s; ' "${reasons[@]}")
echo "verdict: FAIL (${msg%; })"
exit 1
