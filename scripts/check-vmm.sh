#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-vmm: the QEMU series of vmm/qemu/ end to end, one short case.
# Builds QEMU with the series, lean (scripts/qemu.sh with QEMU_LEAN=1, the
# patched tree only), the v4 + RFC kernel (configs/kvm.config,
# build/obj-rfc), and runs one cell of scripts/vmm-bench.sh: that QEMU in an
# L1 of the RFC kernel (plain TCG), its L2 enabling VMM_CHECK_N (default
# 256) MSI-X vectors one at a time.  make check runs the same cell with
# VMM_CHECK_BUILD=0 on what it has built: the lean QEMU and the RFC debug
# kernel (VMM_OBJ_rfc).
#
# Passes when QEMU and L2's msix-enable exit 0, every vector delivered, and
# QEMU sent one whole table and then only partial updates.  Prints one TAP
# line per check and "N passed, N failed".  Copies, initramfs and console
# in VMM_DIR (default build/vmm-check, never build/vmm, which make
# vmm-bench measures with): console VMM_DIR/check-console-rfc.log, report
# VMM_DIR/check.md.  Environment: VMM_CHECK_N, VMM_CHECK_BUILD=0 (use what
# is built), VMM_QEMU_PATCHED (the QEMU binary to run; default the lean
# build), VMM_OBJ_rfc (the L1 kernel's objdir), VMM_DIR, VMM_CONSOLE,
# VMM_OUT, VMM_TIMEOUT.
set -euo pipefail
. "$(dirname "$0")/common.sh"

N=${VMM_CHECK_N:-256}
[[ $N =~ ^[1-9][0-9]*$ ]] && [ "$N" -le 1024 ] || die "VMM_CHECK_N must be 1..1024"

if [ "${VMM_CHECK_BUILD:-1}" = 1 ]; then
	QEMU_LEAN=1 QEMU_TREES=patched "$TOP/scripts/qemu.sh" >&2
	"$TOP/scripts/apply.sh" >/dev/null
	"$TOP/scripts/rfc-apply.sh" >/dev/null
	"$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched" "$TOP/configs/kvm.config" >/dev/null
	SEED_FROM=$BUILD/obj-patched "$TOP/scripts/build-kernel.sh" "$SRC_RFC" "$BUILD/obj-rfc" \
		"$TOP/configs/kvm.config" >/dev/null
fi

export VMM_DIR=${VMM_DIR:-$BUILD/vmm-check}
export VMM_QEMU_PATCHED=${VMM_QEMU_PATCHED:-$BUILD/qemu/patched/obj-lean/qemu-system-x86_64}
cname=${VMM_CONSOLE:-check-console}
con=$VMM_DIR/$cname-rfc.log
rm -f "$con"
VMM_REPS=1 VMM_REFRESH=1 VMM_OUT=${VMM_OUT:-$VMM_DIR/check.md} VMM_CONSOLE=$cname \
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
field() { local v; v=$(sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$shim"); echo "${v:--1}"; }
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
