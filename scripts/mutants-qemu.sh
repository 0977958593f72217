#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make mutants-qemu: show that the QEMU series' tests can fail.  Each
# vmm/qemu/mutants/*.patch (a bug planted in the series) is applied to a
# worktree of build/qemu/src at branch "series" (build/qemu/mut/src), QEMU
# is rebuilt there (lean, as make check builds it: QEMU_LEAN=1), and the
# mutant runs against
# tests/qemu/fakekvm-test.sh and against make check-vmm's cell (the RFC
# kernel, 256 vectors).  A mutant is caught when a test it names fails.
# Writes results/mutants-qemu.md.  Builds the lean stock QEMU; needs
# build/obj-rfc (make check-vmm builds it).
set -euo pipefail
. "$(dirname "$0")/common.sh"

QTOP=$BUILD/qemu
MUT=$QTOP/mut
OUT=${MUTANTS_QEMU_OUT:-$TOP/results/mutants-qemu.md}
N=${VMM_CHECK_N:-256}
mapfile -t muts < <(ls "$TOP"/vmm/qemu/mutants/*.patch)
[ ${#muts[@]} -gt 0 ] || die "no vmm/qemu/mutants/*.patch"

if [ ! -f "$MUT/src/configure" ]; then
	mkdir -p "$MUT"
	git -C "$QTOP/src" worktree add -q --detach "$MUT/src" series
fi

QEMU_LEAN=1 QEMU_TREES=stock "$TOP/scripts/qemu.sh" build >&2
vdir=$BUILD/vmm-mutants
rows=()
caught=0
for m in "${muts[@]}"; do
	name=$(basename "$m" .patch)
	git -C "$MUT/src" checkout -q --detach series
	git -C "$MUT/src" reset -q --hard
	git -C "$MUT/src" apply "$m" || die "$name does not apply"
	QEMU_LEAN=1 QEMU_TREES=mut "$TOP/scripts/qemu.sh" build >&2
	bin=$MUT/obj-lean/qemu-system-x86_64
	f=ok v=ok
	"$TOP/tests/qemu/fakekvm-test.sh" "$QTOP/stock/obj-lean/qemu-system-x86_64" "$bin" \
		>"$LOGS/mutants-qemu-$name-fakekvm.log" 2>&1 || f=FAILED
	VMM_DIR=$vdir VMM_QEMU_PATCHED=$bin VMM_CONSOLE=mut-$name VMM_OUT=$vdir/mut-$name.md \
		VMM_CHECK_BUILD=0 "$TOP/scripts/check-vmm.sh" \
		>"$LOGS/mutants-qemu-$name-vmm.log" 2>&1 || v=FAILED
	fails=$(grep -h '^not ok' "$LOGS/mutants-qemu-$name-fakekvm.log" \
		"$LOGS/mutants-qemu-$name-vmm.log" | sed "s/^not ok [0-9]* - //; s|$TOP/||g; s/ *\$//" |
		paste -sd ';' | sed 's/;/; /g' || true)
	# A nested stall (L2 killed after VMM_CELL_TIMEOUT) is not the mutant's
	# doing: say so next to check-vmm's result.
	stalls=$(grep -ac 'killed after' "$vdir/mut-$name-rfc.log" 2>/dev/null || true)
	[ "${stalls:-0}" = 0 ] || fails="${fails:+$fails; }(check-vmm: L2 killed in $stalls attempt(s))"
	if [ $f = FAILED ] || [ $v = FAILED ]; then verdict=caught; caught=$((caught + 1)); else verdict=MISSED; fi
	log "$name: $verdict (fakekvm-test $f, check-vmm $v)"
	rows+=("| $name | $(sed -n 's/^Mutant: //p' "$m") | $f | $v | $verdict | ${fails:-} |")
done
git -C "$MUT/src" reset -q --hard

{
	echo "# QEMU series mutants (scripts/mutants-qemu.sh, $(date -u +%F))"
	echo
	echo "Each mutant of vmm/qemu/mutants/ applied to the series, QEMU rebuilt, then"
	echo "tests/qemu/fakekvm-test.sh (LD_PRELOAD model of the RFC's ioctl) and the"
	echo "check-vmm cell (patched QEMU in an L1 of the RFC kernel under QEMU TCG, an L2"
	echo "enabling $N MSI-X vectors).  Logs: build/logs/mutants-qemu-NAME-*.log."
	echo
	echo "| mutant | bug | fakekvm-test | check-vmm | verdict | failed checks |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "$caught of ${#muts[@]} caught."
} >"$OUT"
log "results: $OUT"
[ "$caught" = "${#muts[@]}" ]
