#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a kernel + test initramfs under QEMU TCG (no host KVM) and record the
# serial console.  Succeeds when the initramfs printed its final
# "irqroute-tests: done" line; the verdict itself is scripts/verdict.sh.
#
# Usage: scripts/boot.sh BZIMAGE INITRD CONSOLE_LOG [TIMEOUT_SECONDS] [-- QEMU_ARGS...]
#
# TIMEOUT_SECONDS defaults to 600 (whole boot, hard limit).  Measured on the
# 2-core build machine, with the kvm-smoke test: kvm.config boots to /init in
# ~1.5s and finishes in ~3s; kvm.config+kvm-debug.config (KASAN, lockdep,
# kmemleak) reaches /init in 25-40s and finishes in 50-80s, of which ~25s are
# the kmemleak scans.  Budget for a debug boot: 180s + the tests' own time
# (per-test limit: testtimeout=, default 600s).
# Environment:
#   ICOUNT=1          add "-icount shift=0,sleep=off" (deterministic, 1 vCPU thread)
#   APPEND="..."      extra kernel command line, e.g.
#                     "testtimeout=300 irqroute.only=kvm-smoke"
#   QEMU_CPU, QEMU_SMP, QEMU_MEM  override -cpu EPYC,+svm / -smp 2 / -m 2G
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -ge 3 ] || die "usage: $0 BZIMAGE INITRD CONSOLE_LOG [TIMEOUT_SECONDS] [-- QEMU_ARGS...]"
bzimage=$1 initrd=$2 console=$3
shift 3
tmo=600
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	tmo=$1
	shift
fi
if [ $# -gt 0 ]; then
	[ "$1" = -- ] || die "unexpected argument '$1' (extra QEMU arguments go after --)"
	shift
fi
[[ $tmo =~ ^[0-9]+$ ]] || die "TIMEOUT_SECONDS must be a number: $tmo"
[ -f "$bzimage" ] || die "kernel image not found: $bzimage"
[ -f "$initrd" ] || die "initramfs not found: $initrd"

need qemu-system-x86_64 qemu-system-x86
need timeout coreutils

mkdir -p "$(dirname "$console")"
qemu=(qemu-system-x86_64 -M q35 -accel tcg
	-cpu "${QEMU_CPU:-EPYC,+svm}" -smp "${QEMU_SMP:-2}" -m "${QEMU_MEM:-2G}"
	-nographic -no-reboot -nodefaults -serial stdio
	-kernel "$bzimage" -initrd "$initrd"
	-append "console=ttyS0 earlyprintk=serial panic=-1 reboot=t ${APPEND:-}")
[ "${ICOUNT:-0}" = 1 ] && qemu+=(-icount "shift=0,sleep=off")
qemu+=("$@")

{
	echo "# boot.sh: $(date -u +%FT%TZ) timeout ${tmo}s"
	echo "# ${qemu[*]}"
} >"$console"
start=$(date +%s)
rc=0
timeout --foreground -k 10 "$tmo" "${qemu[@]}" </dev/null >>"$console" 2>&1 || rc=$?
secs=$(( $(date +%s) - start ))
printf '\n# boot.sh: qemu exit status %s after %ss\n' "$rc" "$secs" >>"$console"

if ! tr -d '\r' <"$console" | grep -q '^irqroute-tests: done'; then
	if [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$secs" -lt "$tmo" ]; then
		die "kernel stopped after ${secs}s before the tests finished, qemu exit status $rc (log: $console)"
	fi
	die "kernel did not finish within ${tmo}s (log: $console)"
fi
log "boot finished in ${secs}s (log: $console)"
