#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-vmm: the QEMU series of vmm/qemu/ end to end, one short case.
# Builds QEMU with the series (scripts/qemu.sh, the patched tree only), the
# v4 + RFC kernel (configs/kvm.config, build/obj-rfc), and runs one cell of
# scripts/vmm-bench.sh: that QEMU in an L1 of the RFC kernel (plain TCG),
# its L2 enabling VMM_CHECK_N (default 256) MSI-X vectors one at a time.
#
# Passes when QEMU and L2's msix-enable exit 0, every vector delivered, and
# QEMU sent one whole table and then only partial updates.  Prints one TAP
# line per check and "N passed, N failed".  Console:
# build/vmm/check-console-rfc.log; report: build/vmm/check.md.
# Environment: VMM_CHECK_N, VMM_CHECK_BUILD=0 (use what is built),
# VMM_QEMU_PATCHED (the QEMU binary to run, as scripts/vmm-bench.sh),
# VMM_CONSOLE, VMM_OUT.
#
# Not part of "make check": cold, the QEMU build alone takes about 23 min
# on 2 cores (README), which a cold .ci/run cannot add.
set -euo pipefail
. "$(dirname "$0")/common.sh"

N=${VMM_CHECK_N:-256}
[[ $N =~ ^[1-9][0-9]*$ ]] && [ "$N" -le 1024 ] || die "VMM_CHECK_N must be 1..1024"

if [ "${VMM_CHECK_BUILD:-1}" = 1 ]; then
	QEMU_TREES=patched "$TOP/scripts/qemu.sh" >&2
	"$TOP/scripts/apply.sh" >/dev/null
	"$TOP/scripts/rfc-apply.sh" >/dev/null
	"$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched" "$TOP/configs/kvm.config" >/dev/null
	SEED_FROM=$BUILD/obj-patched "$TOP/scripts/build-kernel.sh" "$SRC_RFC" "$BUILD/obj-rfc" \
		"$TOP/configs/kvm.config" >/dev/null
fi

V=$BUILD/vmm
cname=${VMM_CONSOLE:-check-console}
con=$V/$cname-rfc.log
VMM_REPS=1 VMM_REFRESH=1 VMM_OUT=${VMM_OUT:-$V/check.md} VMM_CONSOLE=$cname \
	VMM_TIMEOUT=${VMM_TIMEOUT:-1800} "$TOP/scripts/vmm-bench.sh" "rfc:patched:$N" >&2 || true

pass=0 fail=0
t() {	# t DESCRIPTION COMMAND...
	if "${@:2}"; then
		pass=$((pass + 1)); echo "ok $((pass + fail)) - $1"
	else
		fail=$((fail + 1)); echo "not ok $((pass + fail)) - $1"
	fi
}
shim=$(grep -m1 '# vmm: cell 1: routeshim: exit' "$con" 2>/dev/null || true)
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$shim"; }
t "QEMU exited 0" grep -q '# l2 .*: qemu exit status 0' "$con"
t "msix-enable exited 0" grep -q 'l2-init: msix-enable exit status 0' "$con"
t "$N of $N vectors delivered" grep -q "delivered=$N/$N" "$con"
t "one whole table, then partial updates" \
	test "$(field full)" = 1 -a "$(field partial)" -ge "$N" -a "$(field failed)" = 0
"$TOP/scripts/console-badness.sh" "$con" >/dev/null 2>&1 && bad=0 || bad=1
t "no kernel warning in L1's console" test $bad = 0
echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
