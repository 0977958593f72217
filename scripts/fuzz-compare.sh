#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Differential fuzzing verdict: the base and the patched kernel ran
# "x86/irq_routing_errno_test --fuzz-seed S --fuzz-cases N"; their result
# lines, a hash over every case's errno and the KVM_IRQ_LINE_STATUS of probe
# GSIs after it, must be equal.
#
#   scripts/fuzz-compare.sh BASE_CONSOLE PATCHED_CONSOLE
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 2 ] || die "usage: $0 BASE_CONSOLE PATCHED_CONSOLE"
line() {
	tr -d '\r' <"$1" | grep -o 'irq_routing_fuzz: seed=[0-9]* cases=[0-9]* hash=0x[0-9a-f]*' | tail -n 1
}
b=$(line "$1")
p=$(line "$2")
[ -n "$b" ] || die "no fuzz result in $1"
[ -n "$p" ] || die "no fuzz result in $2"
echo "base:    $b"
echo "patched: $p"
if [ "$b" != "$p" ]; then
	seed=$(echo "$b" | sed 's/.*seed=\([0-9]*\).*/\1/')
	cases=$(echo "$b" | sed 's/.*cases=\([0-9]*\).*/\1/')
	echo "FAIL: base and patched kernels diverge on fuzz seed $seed;" \
	     "rerun both with: x86/irq_routing_errno_test --fuzz-seed $seed --fuzz-cases K" \
	     "for K < $cases (the hash covers the first K cases) to find the first divergent case" >&2
	exit 1
fi
log "fuzz: base and patched agree ($p)"
