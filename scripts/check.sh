#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The project's test command ("make check"): from the pinned base and
# patches/, build, boot and judge everything, and count every check.
#
#   scripts/check.sh [--full]
#
# Steps (each counted as one check, and every TAP result from a boot too):
#   base, apply, overlay consistency, base and patched kernels with
#   kvm-debug.config (KASAN, lockdep, PROVE_RCU, kmemleak, failslab,
#   -Werror), selftests, selftests on the host /dev/kvm (reported
#   separately), a boot of the patched debug kernel running tests/debug.list,
#   a boot of the base debug kernel running our tests of it, and static
#   checks (checkpatch, sparse, W=1, every prefix builds, a cross build);
#   the RFC's debug kernel, selftests and boot; the QEMU series built lean,
#   its fakekvm test and one end-to-end cell (patched QEMU, RFC kernel).
#   --full adds the normal kernels running tests/check.list (the long forms)
#   and the long forms of the static checks.
# BASE=6.12 runs the same against the 6.12 LTS base and backports/6.12/
# (with the 7.3 tree's selftests).  BASE=6.12 --smoke, which the default
# make check ends with, is the short form: apply backports/6.12/ and build
# its KVM objects with the debug config.
# --full (BASE=7.3) ends with the whole BASE=6.12 check.
# The last line is "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/common.sh"

FULL=0 SMOKE=0
case ${1:-} in
--full) FULL=1 ;;
--smoke) SMOKE=1 ;;
esac
[ $SMOKE = 0 ] || [ "$BASE" != 7.3 ] || die "--smoke is for BASE=6.12"

pass=0 fail=0 skip=0
failed=()
summary=$LOGS/check-summary.txt
: >"$summary"

record() {	# record NAME ok|FAIL|skip [detail]
	local name=$1 res=$2
	shift 2
	if [ "$res" = ok ]; then
		pass=$((pass + 1))
	elif [ "$res" = skip ]; then
		skip=$((skip + 1))
	else
		fail=$((fail + 1))
		failed+=("$name")
	fi
	printf 'check: %-40s %s %s\n' "$name" "$res" "$*" | tee -a "$summary"
}

step() {	# step NAME CMD...: run, record by exit status (4 = skipped)
	local name=$1 rc=0
	shift
	log "$name"
	"$@" || rc=$?
	case $rc in
	0) record "$name" ok ;;
	4) record "$name" skip ;;
	*) record "$name" FAIL "(exit $rc)"; return 1 ;;
	esac
}

# Count "check: NAME ok|FAIL" lines printed by a sub-script.
count_checks() {	# count_checks PREFIX LOGFILE
	local prefix=$1 file=$2 name res
	while read -r _ name res _; do
		[ -n "$name" ] || continue
		record "$prefix$name" "$res"
	done < <(grep -E '^check: [^ ]+ +(ok|FAIL|skip)' "$file")
}

# Count the TAP results of a boot, and its verdict.
count_boot() {	# count_boot PREFIX CONSOLE_LOG
	local prefix=$1 console=$2 st name rc=0
	# One verdict.sh run gives both the per-test lines and the verdict.
	"$TOP/scripts/verdict.sh" "$console" >"$console.verdict" 2>&1 || rc=$?
	while read -r st _ name; do
		case $st in
		PASS) record "$prefix$name" ok ;;
		SKIP) record "$prefix$name" skip ;;
		FAIL) record "$prefix$name" FAIL ;;
		esac
	done < <(grep -E '^(PASS|FAIL|SKIP) ' "$console.verdict")
	if [ $rc -eq 0 ]; then
		record "${prefix}verdict" ok
	else
		record "${prefix}verdict" FAIL "$(tail -n 1 "$console.verdict")"
		sed -n '/badness/,$p' "$console.verdict" | head -n 60 >&2
	fi
}

finish() {
	echo
	[ ${#failed[@]} -eq 0 ] || echo "failed: ${failed[*]}"
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	exit $?
}

t0=$(date +%s)
# Every package of the run at once, before anything runs in parallel.
# shellcheck disable=SC2086
install_deps $PKGS_KBUILD $PKGS_BOOT $PKGS_STATIC $([ $FULL = 1 ] && echo $PKGS_CROSS)

# Disk first: a full disk fails much later, halfway through a checkout or a
# build, with a less clear message.  A cold run peaks at about 5 GiB under
# build/ (the base tree and its git objects 2.5 GiB, objdirs 1.6, ccache
# and downloads); the two worktrees are hard links into the base tree.
check_disk() {
	local need=${DISK_NEED_GIB:-6} have
	git -C "$SRC" rev-parse -q --verify "refs/tags/$BASE_TAG" >/dev/null 2>&1 &&
		need=${DISK_NEED_GIB:-3}
	have=$(df -Pk "$BUILD" | awk 'NR == 2 { print int($4 / 1048576) }')
	if [ "$have" -lt "$need" ]; then
		echo "FAIL: $have GiB free on the filesystem of $BUILD; make check needs about $need GiB (DISK_NEED_GIB)" >&2
		return 1
	fi
	log "disk: $have GiB free in $BUILD, about $need GiB needed"
}
step disk check_disk || finish
step base "$TOP/scripts/fetch-base.sh" || finish
[ $SMOKE = 1 ] || step base-provenance "$TOP/scripts/verify-base.sh"
step apply "$TOP/scripts/apply.sh" || finish
step overlay "$TOP/scripts/check-overlay.sh"

# The size of the kernel part of the series: lines of C added and removed
# outside tools/ (comments included), from git diff --numstat, at most
# KERNEL_LINES_MAX (250) added.
kernel_lines() {
	local add del
	read -r add del < <(git -C "$SRC_PATCHED" diff --numstat "$BASE_TAG" applied -- \
		'*.c' '*.h' ':!tools' | awk '{ a += $1; d += $2 } END { print a + 0, d + 0 }')
	log "kernel C code of the series: $add lines added, $del removed (at most ${KERNEL_LINES_MAX:-250} added)"
	[ "$add" -le "${KERNEL_LINES_MAX:-250}" ]
}
[ "$BASE" != 7.3 ] || step kernel-lines kernel_lines

# The selftests (selftests_73 in common.sh), which the 6.12 kernels run
# too; ST_READY=1: the 7.3 make check calling this one has just built them.
selftests() {
	if [ "$BASE" != 7.3 ] && [ "${ST_READY:-0}" = 1 ]; then
		[ -x "$ST_DIR/irq_routing_perf_test" ] || die "no selftests in $ST_DIR"
	else
		selftests_73
	fi
}

# make check builds debug kernels only (configs/kvm-debug.config on
# kvm.config: KASAN, lockdep, PROVE_RCU, kmemleak, failslab, -Werror):
# the base from nothing, the patched one from the base's objects, and the
# static checks start from them too.  One cold kernel build instead of
# three (base, patched, debug) is what keeps a cold run within time on 2
# cores.  The normal kernels, which "make bench" measures, and the long
# test forms are in make check-full.
DFRAGS="$TOP/configs/kvm.config $TOP/configs/kvm-debug.config"
export OBJ_BASE=$BUILD/obj-base-debug OBJ_PATCHED=$BUILD/obj-patched-debug
export KFRAGS=$DFRAGS PREFIX_FRAGS=$DFRAGS
read -r -a DCONF <<<"$DFRAGS"
if [ $SMOKE = 1 ]; then
	# The KVM objects of the patched tree only (arch/x86/kvm/, which builds
	# virt/kvm/ too), with the debug config and -Werror.  A cold 6.12 kernel
	# and its boot cost 15 minutes of a 2-core make check (measured);
	# make check BASE=6.12 builds and boots it.
	KBUILD_TARGETS=arch/x86/kvm/ \
	step kvm-objects-debug "$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$OBJ_PATCHED" "${DCONF[@]}"
	log "check took $(( $(date +%s) - t0 ))s"
	finish
else
	step kernel-base-debug "$TOP/scripts/build-kernel.sh" "$SRC_BASE" "$OBJ_BASE" "${DCONF[@]}" || finish
	SEED_FROM=$OBJ_BASE \
	step kernel-patched-debug "$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$OBJ_PATCHED" "${DCONF[@]}" || finish
fi
step selftests selftests || finish

# The same binaries against this machine's /dev/kvm: tests the tests.
# And the short form of "make host-bench": tests its code path, not the
# host's kernel.
if [ -c /dev/kvm ] && [ "$BASE" = 7.3 ]; then
	"$TOP/scripts/host-tests.sh" "$ST_DIR" >"$LOGS/host-tests.log" 2>&1
	count_checks host: "$LOGS/host-tests.log"
	if [ -f "$LOGS/host-novcpu" ]; then
		record host:host-bench skip "($(cat "$LOGS/host-novcpu"))"
	else
		SELFTESTS_DIR=$ST_DIR HOST_SHORT=1 HOST_OUT=$BUILD/host-bench-short \
			"$TOP/scripts/host-bench.sh" >"$LOGS/host-bench.log" 2>&1
		count_checks host: "$LOGS/host-bench.log"
	fi
fi

# ours LIST [PATTERN]: the tests of a list named by PATTERN (default: our
# own tests), for irqroute.only=.  The base kernels run only these: the
# upstream ones (irqfd_test & co.) say nothing about the series there, and
# cost minutes under TCG.
ours() {
	awk -v re="^(${2:-irq_routing|perf_})" '$1 ~ re { printf "%s%s", sep, $1; sep = "," }' "$1"
}

# Debug kernels: the patched one runs tests/debug.list (then a kmemleak
# scan), the base one our correctness tests of it (irq_routing*), which
# must pass without the series too.  Not the perf tests:
# under KASAN and kmemleak the base's allocation per entry makes them cost
# 150 s there (measured in a cold run), and "make bench" measures the base.
# ab_boots NAME LIST PATCHED_OBJDIR BASE_OBJDIR BASE_TESTS TIMEOUT: boot the
# patched kernel running LIST (checks "NAME:", console-NAME.log), the base
# kernel running the tests BASE_TESTS of it ("base-NAME:").
ab_boots() {
	local name=$1 list=$2 pobj=$3 bobj=$4 only=$5 timeout=$6
	local initrd=$BUILD/$name.cpio.gz p=$LOGS/console-$name.log b=$LOGS/console-base-$name.log
	"$TOP/scripts/mkinitrd.sh" "$initrd" "$list" "$ST_DIR" >/dev/null
	"$TOP/scripts/boot.sh" "$pobj/arch/x86/boot/bzImage" "$initrd" "$p" "$timeout"
	count_boot "$name:" "$p"
	APPEND="irqroute.only=$only" \
	"$TOP/scripts/boot.sh" "$bobj/arch/x86/boot/bzImage" "$initrd" "$b" "$timeout"
	count_boot "base-$name:" "$b"
}

dlist=$TOP/tests/debug.list
ab_boots debug "$dlist" "$OBJ_PATCHED" "$OBJ_BASE" "$(ours "$dlist" irq_routing)" \
	"${DEBUG_BOOT_TIMEOUT:-2400}"

# The RFC series (rfc/large-tables/) on top of patches/: applied, its
# checkpatch, its debug kernel built from the patched one's objects, its
# selftests, and a boot of them (tests/rfc.list).  Counted as "rfc:...".
RFC_OBJ=$BUILD/obj-rfc-debug
rfc_checks() {
	local st=$BUILD/st-rfc obj=$RFC_OBJ
	step rfc:apply "$TOP/scripts/rfc-apply.sh" || return 0
	step rfc:checkpatch "$TOP/scripts/check-checkpatch.sh" "$TOP/rfc/large-tables"
	SEED_FROM=$OBJ_PATCHED \
	step rfc:kernel-debug "$TOP/scripts/build-kernel.sh" "$SRC_RFC" "$obj" "${DCONF[@]}" ||
		return 0
	SELFTESTS=$RFC_SELFTESTS \
	step rfc:selftests "$TOP/scripts/build-selftests.sh" "$SRC_RFC" "$st" || return 0
	"$TOP/scripts/mkinitrd.sh" "$BUILD/rfc.cpio.gz" "$TOP/tests/rfc.list" "$st" >/dev/null
	"$TOP/scripts/boot.sh" "$obj/arch/x86/boot/bzImage" "$BUILD/rfc.cpio.gz" \
		"$LOGS/console-rfc.log" "${DEBUG_BOOT_TIMEOUT:-2400}"
	count_boot rfc: "$LOGS/console-rfc.log"
}
[ "$BASE" != 7.3 ] || [ $SMOKE = 1 ] || [ "${NO_RFC:-0}" = 1 ] || rfc_checks

# The QEMU series (vmm/qemu/), the RFC's user: QEMU built lean with and
# without it (scripts/qemu.sh with QEMU_LEAN=1: q35, virtio-blk, -O0), its
# routing calls against an LD_PRELOAD model of the RFC's ioctl
# (tests/qemu/fakekvm-test.sh), and one short end-to-end cell: the patched
# QEMU in an L1 of the RFC debug kernel, its L2 enabling 256 MSI-X vectors
# (scripts/check-vmm.sh).  Each TAP line counts, as "qemu:...".
count_tap() {	# count_tap PREFIX LOGFILE EXIT_STATUS
	local prefix=$1 file=$2 rc=$3 line res num bad=0
	while IFS= read -r line; do
		case $line in
		"ok "*) res=ok ;;
		"not ok "*) res=FAIL bad=1 ;;
		*) continue ;;
		esac
		num=${line#*ok }
		record "$prefix${num%% *}" "$res" "${line#* - }"
	done <"$file"
	[ "$rc" = 0 ] || [ $bad = 1 ] || record "${prefix}exit" FAIL "(exit $rc, log: $file)"
}
vmm_checks() {
	local q=$BUILD/qemu rc
	step qemu:build env QEMU_LEAN=1 "$TOP/scripts/qemu.sh" || return 0
	rc=0
	"$TOP/tests/qemu/fakekvm-test.sh" "$q/stock/obj-lean/qemu-system-x86_64" \
		"$q/patched/obj-lean/qemu-system-x86_64" >"$LOGS/qemu-fakekvm.log" 2>&1 || rc=$?
	count_tap qemu:fakekvm- "$LOGS/qemu-fakekvm.log" $rc
	rc=0
	VMM_CHECK_BUILD=0 VMM_OBJ_rfc=$RFC_OBJ \
		"$TOP/scripts/check-vmm.sh" >"$LOGS/qemu-check-vmm.log" 2>&1 || rc=$?
	count_tap qemu:l2-256- "$LOGS/qemu-check-vmm.log" $rc
}
[ "$BASE" != 7.3 ] || [ $SMOKE = 1 ] || [ "${NO_RFC:-0}" = 1 ] || [ "${NO_QEMU:-0}" = 1 ] ||
	[ ! -f "$RFC_OBJ/arch/x86/boot/bzImage" ] || vmm_checks

# make check-full: the normal kernels too (what "make bench" measures), the
# base from nothing and the patched one from its objects, running
# tests/check.list (the long forms, and upstream tests about memslots and
# vCPU limits).
if [ $FULL = 1 ] && [ "$BASE" = 7.3 ]; then
	KCONF=("$TOP/configs/kvm.config")
	step kernel-base "$TOP/scripts/build-kernel.sh" "$SRC_BASE" "$BUILD/obj-base" "${KCONF[@]}"
	SEED_FROM=$BUILD/obj-base \
	step kernel-patched "$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched" "${KCONF[@]}"
	list=$TOP/tests/check.list
	ab_boots full "$list" "$BUILD/obj-patched" "$BUILD/obj-base" "$(ours "$list")" \
		"${BOOT_TIMEOUT:-1500}"
fi

# Static checks last: they need nothing booted.
# make check: every prefix builds arch/x86/kvm/ (which includes virt/kvm)
# with -Werror, W=1 builds the objects the series changes (no warning
# allowed: the base has none), and the cross build is the one that compiles
# the touched PowerPC file (mpic.c).  make check-full: every prefix builds a
# bzImage, W=1 builds all of the KVM code of base and patched and compares,
# and all cross builds run.
if [ $FULL = 1 ]; then
	"$TOP/scripts/check-static.sh" >"$LOGS/check-static.log" 2>&1
else
	W1_SCOPE=${W1_SCOPE:-series} W1_BASE=${W1_BASE:-0} \
	PREFIX_TARGETS=${PREFIX_TARGETS:-arch/x86/kvm/} \
	CROSS_TARGETS=${CROSS_TARGETS:-ppc64-e5500} \
	NO_CROSS=${NO_CROSS:-0} "$TOP/scripts/check-static.sh" >"$LOGS/check-static.log" 2>&1
fi
count_checks static: "$LOGS/check-static.log"

# The 6.12 backport (backports/6.12/): make check applies it and builds its
# KVM objects; make check-full and make check BASE=6.12 run the whole check
# against the 6.12 base.  Its checks count here as "6.12:...".
if [ "$BASE" = 7.3 ] && [ "${NO_BACKPORTS:-0}" = 0 ]; then
	log "backport 6.12 ($([ $FULL = 1 ] && echo full || echo smoke))"
	rc=0
	mode=(--smoke)
	[ $FULL = 0 ] || mode=()
	env -u OBJ_BASE -u OBJ_PATCHED -u KFRAGS -u PREFIX_FRAGS BASE=6.12 ST_READY=1 \
		"$TOP/scripts/check.sh" "${mode[@]}" >"$LOGS/check-6.12.log" 2>&1 || rc=$?
	count_checks 6.12: "$LOGS/check-6.12.log"
	if [ $rc -ne 0 ] && ! grep -Eq '^check: [^ ]+ +FAIL' "$LOGS/check-6.12.log"; then
		record 6.12 FAIL "(exit $rc, log: $LOGS/check-6.12.log)"
	fi
fi

log "check took $(( $(date +%s) - t0 ))s"
finish
