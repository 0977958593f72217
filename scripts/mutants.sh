#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make mutants": plant each bug of the catalogue in tests/mutants/ into the
# patched kernel, one at a time, and check that the tests catch it.
#
# Usage: scripts/mutants.sh [NAME...]     (default: every tests/mutants/*.patch)
# RFC=large-tables: the mutants of the RFC series instead (rfc/NAME/mutants/,
# planted in branch rfc-applied, booting tests/rfc.list; results/mutants-rfc.md).
#
# A mutant is a file tests/mutants/NN-NAME.patch: a header, then a diff
# against the patched tree (git apply).  Header lines:
#   Mutant: what the plant does (one line)
#   Patch: the patch of the series whose code it breaks ("0006")
#   Tests: NAME... the tests of tests/debug.list to boot with (default all)
#   Expect: what should catch it (a test, or a debug-kernel assertion)
#
# Each mutant: check the patched tree out in build/wt-mut (branch "applied"
# of build/src-patched, made by scripts/apply.sh), apply the plant, build
# incrementally in build/obj-mut with kvm.config + kvm-debug.config (started
# from the objects of the patched debug kernel when they exist), boot the
# listed tests, and judge with scripts/verdict.sh.  "caught" when the boot
# fails (a test fails, the kernel warns or crashes, or the run does not
# finish); "survived" when it passes.  A plant that does not apply or
# build is an error.  Before the mutants, the unmutated tree must pass the
# same boot (the control), or no result means anything.
# Writes build/mutants/summary.tsv and results/mutants.md; exits 0 when every
# mutant was caught.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# shellcheck disable=SC2086
install_deps $PKGS_KBUILD $PKGS_BOOT

RFC=${RFC:-}
if [ -n "$RFC" ]; then
	mdir=$TOP/rfc/$RFC/mutants tlist=$TOP/tests/rfc.list branch=rfc-applied
	out=$BUILD/mutants-rfc obj=$BUILD/obj-mut-rfc stdir=$BUILD/st-rfc
	seed=$BUILD/obj-rfc-debug report=$TOP/results/mutants-rfc.md
else
	mdir=$TOP/tests/mutants tlist=$TOP/tests/debug.list branch=applied
	out=$BUILD/mutants obj=$BUILD/obj-mut stdir=$BUILD/st-patched
	seed=${OBJ_PATCHED_DEBUG:-$BUILD/obj-patched-debug} report=$TOP/results/mutants.md
fi
wt=$BUILD/wt-mut
frags=("$TOP/configs/kvm.config" "$TOP/configs/kvm-debug.config")
timeout=${MUTANT_BOOT_TIMEOUT:-1200}
mkdir -p "$out"

if [ $# -gt 0 ]; then
	mutants=()
	for n; do
		m=$(ls "$mdir"/*"$n"*.patch 2>/dev/null | head -n 1) || true
		[ -n "$m" ] || die "no mutant matches $n in $mdir"
		mutants+=("$m")
	done
else
	mapfile -t mutants < <(ls "$mdir"/*.patch 2>/dev/null)
fi
[ "${#mutants[@]}" -gt 0 ] || die "no mutants in $mdir"

if [ -n "$RFC" ]; then
	"$TOP/scripts/rfc-apply.sh" "$RFC" >/dev/null
	SELFTESTS=$RFC_SELFTESTS \
	"$TOP/scripts/build-selftests.sh" "$SRC_RFC" "$stdir" >/dev/null
else
	"$TOP/scripts/apply.sh" >/dev/null
	"$TOP/scripts/build-selftests.sh" "$SRC_PATCHED" "$stdir" >/dev/null
fi

if ! git -C "$wt" rev-parse --git-dir >/dev/null 2>&1; then
	add_worktree "$wt" "$branch"
fi

# header FILE KEY: the value of "KEY: value" in the mutant's header.
header() {
	sed -n '/^diff --git /q; s/^'"$2"': *//p' "$1" | head -n 1
}

# run NAME TESTS: build the tree as it is, boot TESTS (blank: all), and
# print "pass" or "fail: REASON".
run() {
	local name=$1 tests=$2 console=$out/$1.console
	SEED_FROM=$seed "$TOP/scripts/build-kernel.sh" "$wt" "$obj" "${frags[@]}" \
		>"$out/$name.build" 2>&1 || { echo "error: does not build (log: $out/$name.build)"; return; }
	"$TOP/scripts/mkinitrd.sh" "$out/initrd.cpio.gz" "$tlist" "$stdir" >/dev/null
	APPEND=${tests:+irqroute.only=${tests// /,}} \
		"$TOP/scripts/boot.sh" "$obj/arch/x86/boot/bzImage" "$out/initrd.cpio.gz" \
		"$console" "$timeout" >/dev/null 2>&1 || true
	if "$TOP/scripts/verdict.sh" "$console" >"$console.verdict" 2>&1; then
		echo pass
	else
		echo "fail: $( { grep -E '^FAIL ' "$console.verdict" | awk '{ print $3 }' |
			paste -sd, -; grep -m1 -E '^verdict:' "$console.verdict"; } | paste -sd' ' -)"
	fi
}

t0=$(date +%s)
git -C "$wt" checkout -q -f --detach "$branch"
git -C "$wt" clean -q -fd
log "mutants: control (the patched tree, unmutated)"
control=$(run control "")
log "mutants: control: $control"
[ "$control" = pass ] || die "the unmutated patched kernel does not pass (log: $out/control.console.verdict): $control"

printf 'mutant\tpatch\tresult\tdetail\tseconds\n' >"$out/summary.tsv"
caught=0 survived=0 errors=0
for m in "${mutants[@]}"; do
	name=$(basename "$m" .patch)
	t1=$(date +%s)
	git -C "$wt" checkout -q -f --detach "$branch"
	git -C "$wt" clean -q -fd
	if ! git -C "$wt" apply "$m" 2>"$out/$name.apply"; then
		res=error detail="does not apply (log: $out/$name.apply)"
	else
		r=$(run "$name" "$(header "$m" Tests)")
		case $r in
		pass) res=survived detail="every test passed" ;;
		fail:*) res=caught detail=${r#fail: } ;;
		*) res=error detail=$r ;;
		esac
	fi
	case $res in
	caught) caught=$((caught + 1)) ;;
	survived) survived=$((survived + 1)) ;;
	*) errors=$((errors + 1)) ;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$(header "$m" Patch)" "$res" "$detail" \
		"$(( $(date +%s) - t1 ))" >>"$out/summary.tsv"
	echo "check: mutant-$name $([ "$res" = caught ] && echo ok || echo FAIL) $res: $detail"
	# After each mutant, so that an interrupted run still reports.
	"$TOP/scripts/mutants-report.py" "$mdir" "$out/summary.tsv" "$(( $(date +%s) - t0 ))" \
		"${#mutants[@]}" >"$report"
done
git -C "$wt" checkout -q -f --detach "$branch"
echo "mutants: $caught caught, $survived survived, $errors errors of ${#mutants[@]} ($(( $(date +%s) - t0 ))s); ${report#"$TOP"/}"
[ "$survived" = 0 ] && [ "$errors" = 0 ]
