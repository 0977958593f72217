#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Data races in the routing code: KCSAN kernels of the series and of the RFC
# on top, each booted once running x86/irq_routing_concurrency_test, and the
# "BUG: KCSAN: data-race" reports of their consoles in results/kcsan.md.
#
# Usage: scripts/kcsan.sh            ("make kcsan")
#
#   kernels    configs/kvm.config + configs/kvm-kcsan.config:
#              build/src-patched -> build/obj-kcsan-patched,
#              build/src-rfc     -> build/obj-kcsan-rfc (seeded from the first)
#   selftests  irq_routing_concurrency_test of each kernel's own tree:
#              build/st-kcsan-patched, build/st-kcsan-rfc
#   boots      tests/kcsan.list, QEMU TCG as scripts/boot.sh runs it (no
#              -icount: two vCPU threads, so that the test's threads really
#              run at once): build/logs/console-kcsan-{patched,rfc}.log.  The
#              series' kernel boots while the RFC's builds (a cold KCSAN
#              kernel took ~60 min on the loaded 2-core machine); the two
#              boots never overlap (the test's waits are timed).
#              KCSAN_SERIAL=1: build both, then boot one after the other.
#   report     scripts/kcsan-report.py -> results/kcsan.md
#
# The trees must exist (make apply; the RFC's: scripts/rfc-apply.sh): this
# script does not reset them, others may be using them.
# Environment: KCSAN_BOOT_TIMEOUT (whole boot, default 2400 s),
# KCSAN_TESTTIMEOUT (per test in the guest, default 1200 s), KCSAN_APPEND
# (more kernel command line, e.g. "kcsan.skip_watch=1000"), KCSAN_KERNELS
# (default "patched rfc"), KCSAN_OUT (default results/kcsan.md).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ "$BASE" = 7.3 ] || die "the RFC and its KCSAN run exist for BASE=7.3 only"
install_deps $PKGS_KBUILD $PKGS_BOOT

frags=("$TOP/configs/kvm.config" "$TOP/configs/kvm-kcsan.config")
list=$TOP/tests/kcsan.list
out=${KCSAN_OUT:-$TOP/results/kcsan.md}
kernels=${KCSAN_KERNELS:-patched rfc}
kdir=$BUILD/kcsan
times=$kdir/times.tsv
mkdir -p "$kdir"
: >"$times"

declare -A srcdir=([patched]=$SRC_PATCHED [rfc]=$SRC_RFC)
for k in $kernels; do
	[ -n "${srcdir[$k]:-}" ] || die "KCSAN_KERNELS: unknown kernel '$k' (patched, rfc)"
	[ -f "${srcdir[$k]}/Makefile" ] ||
		die "no tree ${srcdir[$k]}: run make apply (and scripts/rfc-apply.sh for rfc)"
done

# timed NAME CMD...: run CMD, append "NAME seconds status" to $times.
timed() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	"$@" || rc=$?
	printf '%s\t%s\t%s\n' "$name" "$(( $(date +%s) - t0 ))" "$rc" >>"$times"
	return "$rc"
}

t_start=$(date +%s)
log "kcsan: start $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Selftests first (minutes, no build lock): a broken tree stops us early.
# Not again when the binary is newer than the selftests and uapi headers.
for k in $kernels; do
	bin=$BUILD/st-kcsan-$k/irq_routing_concurrency_test
	if [ -x "$bin" ] && [ -z "$(find "${srcdir[$k]}/tools/testing/selftests/kvm" \
		"${srcdir[$k]}/include/uapi" -newer "$bin" -print -quit)" ]; then
		log "kcsan: $bin is up to date"
	else
		timed "selftests-$k" env SELFTESTS=irq_routing_concurrency_test \
			"$TOP/scripts/build-selftests.sh" "${srcdir[$k]}" "$BUILD/st-kcsan-$k" >/dev/null
	fi
	"$TOP/scripts/mkinitrd.sh" "$BUILD/kcsan-$k.cpio.gz" "$list" "$BUILD/st-kcsan-$k" >/dev/null
done

# build K: the KCSAN kernel of K; the RFC's seeded from the series' (it then
# recompiles what the RFC touches).  Queued behind other builds of this
# checkout (flock).
build() {
	local seed=
	[ "$1" != rfc ] || seed=$BUILD/obj-kcsan-patched
	timed "kernel-$1" env SEED_FROM="$seed" "$TOP/scripts/build-kernel.sh" \
		"${srcdir[$1]}" "$BUILD/obj-kcsan-$1" "${frags[@]}" >/dev/null
}

# boot K: a failed boot is recorded, not fatal: its console still goes into
# the report.
boot() {
	timed "boot-$1" env APPEND="testtimeout=${KCSAN_TESTTIMEOUT:-1200} ${KCSAN_APPEND:-}" \
		"$TOP/scripts/boot.sh" "$BUILD/obj-kcsan-$1/arch/x86/boot/bzImage" \
		"$BUILD/kcsan-$1.cpio.gz" "$LOGS/console-kcsan-$1.log" \
		"${KCSAN_BOOT_TIMEOUT:-2400}" ||
		log "kcsan: boot of $1 failed (log: $LOGS/console-kcsan-$1.log)"
}

if [ "${KCSAN_SERIAL:-0}" = 1 ]; then
	for k in $kernels; do build "$k"; done
	for k in $kernels; do boot "$k"; done
else
	pending=
	for k in $kernels; do
		build "$k"
		[ -z "$pending" ] || wait "$pending"
		boot "$k" &
		pending=$!
	done
	[ -z "$pending" ] || wait "$pending"
fi
printf 'total\t%s\t0\n' "$(( $(date +%s) - t_start ))" >>"$times"

args=()
for k in $kernels; do
	args+=("$k=$BUILD/obj-kcsan-$k:$LOGS/console-kcsan-$k.log")
done
python3 "$TOP/scripts/kcsan-report.py" --times "$times" --out "$out" "${args[@]}"
log "kcsan: $out ($(grep -c '^### ' "$out" || true) distinct reports), $(( $(date +%s) - t_start ))s"
