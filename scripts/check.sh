#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The project's test command ("make check"): from the pinned base and
# patches/, build, boot and judge everything, and count every check.
#
#   scripts/check.sh [--full]
#
# Steps (each counted as one check, and every TAP result from a boot too):
#   base, apply, overlay consistency, static checks (checkpatch, sparse, W=1,
#   every prefix builds, cross-builds), base and patched kernels, selftests,
#   selftests on the host /dev/kvm (reported separately), a boot of the
#   patched kernel running all our tests, a boot of the base kernel running
#   the differential fuzz and the same tests, the fuzz comparison, and a boot
#   of the patched kernel with kvm-debug.config (KASAN, lockdep, kmemleak,
#   failslab).
# The last line is "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/common.sh"

FULL=0
[ "${1:-}" = --full ] && FULL=1
FUZZ_CASES=${FUZZ_CASES:-20000}
[ $FULL = 1 ] && FUZZ_CASES=${FUZZ_CASES_FULL:-200000}
FUZZ_SEED=${FUZZ_SEED:-$(date -u +%Y%m%d)}

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
	done < <(grep -E '^check: [^ ]+ (ok|FAIL|skip)' "$file")
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
step base "$TOP/scripts/fetch-base.sh" || finish
step base-provenance "$TOP/scripts/verify-base.sh"
step apply "$TOP/scripts/apply.sh" || finish
step overlay "$TOP/scripts/check-overlay.sh"

KCONF=("$TOP/configs/kvm.config")
step kernel-base "$TOP/scripts/build-kernel.sh" "$SRC_BASE" "$BUILD/obj-base" "${KCONF[@]}"
SEED_FROM=$BUILD/obj-base \
step kernel-patched "$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched" "${KCONF[@]}" || finish
step selftests "$TOP/scripts/build-selftests.sh" "$SRC_PATCHED" "$BUILD/st-patched" || finish

# The same binaries against this machine's /dev/kvm: tests the tests.
# And the short form of "make host-bench": tests its code path, not the
# host's kernel.
if [ -c /dev/kvm ]; then
	"$TOP/scripts/host-tests.sh" "$BUILD/st-patched" >"$LOGS/host-tests.log" 2>&1
	count_checks host: "$LOGS/host-tests.log"
	SELFTESTS_DIR=$BUILD/st-patched HOST_SHORT=1 HOST_OUT=$BUILD/host-bench-short \
		"$TOP/scripts/host-bench.sh" >"$LOGS/host-bench.log" 2>&1
	count_checks host: "$LOGS/host-bench.log"
fi

# The patched kernel runs every test; the base kernel runs ours (the fuzz
# with the same seed, for the differential comparison).
list=$BUILD/check.list
sed "s/@FUZZ_SEED@/$FUZZ_SEED/; s/@FUZZ_CASES@/$FUZZ_CASES/" "$TOP/tests/check.list" >"$list"
"$TOP/scripts/mkinitrd.sh" "$BUILD/check.cpio.gz" "$list" "$BUILD/st-patched" >/dev/null

"$TOP/scripts/boot.sh" "$BUILD/obj-patched/arch/x86/boot/bzImage" "$BUILD/check.cpio.gz" \
	"$LOGS/console-patched.log" "${BOOT_TIMEOUT:-1500}"
count_boot patched: "$LOGS/console-patched.log"

# The base kernel runs our own tests only: the upstream ones (irqfd_test &
# co.) say nothing about the series there, and cost minutes under TCG.
ours=$(awk '$1 ~ /^(irq_routing|perf_)/ { printf "%s%s", sep, $1; sep = "," }' "$list")
APPEND="irqroute.only=$ours" \
"$TOP/scripts/boot.sh" "$BUILD/obj-base/arch/x86/boot/bzImage" "$BUILD/check.cpio.gz" \
	"$LOGS/console-base.log" "${BOOT_TIMEOUT:-1500}"
count_boot base: "$LOGS/console-base.log"

step fuzz-differential "$TOP/scripts/fuzz-compare.sh" "$LOGS/console-base.log" "$LOGS/console-patched.log"

# Debug kernel: KASAN, lockdep, PROVE_RCU, kmemleak, failslab.
if step kernel-patched-debug "$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched-debug" \
	"${KCONF[@]}" "$TOP/configs/kvm-debug.config"; then
	"$TOP/scripts/mkinitrd.sh" "$BUILD/debug.cpio.gz" "$TOP/tests/debug.list" "$BUILD/st-patched" >/dev/null
	"$TOP/scripts/boot.sh" "$BUILD/obj-patched-debug/arch/x86/boot/bzImage" "$BUILD/debug.cpio.gz" \
		"$LOGS/console-debug.log" "${DEBUG_BOOT_TIMEOUT:-2400}"
	count_boot debug: "$LOGS/console-debug.log"
fi

# Static checks last: they are the slowest, and need nothing booted.
# make check: every prefix builds arch/x86/kvm/ (which includes virt/kvm)
# with -Werror, and the cross build is the one that compiles the touched
# PowerPC file (mpic.c).  make check-full: every prefix builds a bzImage,
# and all cross builds run.
if [ $FULL = 1 ]; then
	"$TOP/scripts/check-static.sh" >"$LOGS/check-static.log" 2>&1
else
	PREFIX_TARGETS=${PREFIX_TARGETS:-arch/x86/kvm/} \
	CROSS_TARGETS=${CROSS_TARGETS:-ppc64-e5500} \
	NO_CROSS=${NO_CROSS:-0} "$TOP/scripts/check-static.sh" >"$LOGS/check-static.log" 2>&1
fi
count_checks static: "$LOGS/check-static.log"

log "check took $(( $(date +%s) - t0 ))s"
finish
