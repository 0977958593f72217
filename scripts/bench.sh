#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench": A/B benchmark of KVM_SET_GSI_ROUTING, base kernel vs patched
# kernel, with irq_routing_perf_test under QEMU TCG -icount shift=0,sleep=off
# (guest time counts instructions, 1 ns each: repeatable, independent of the
# host's load, and not hardware time).
#
# Usage: scripts/bench.sh                (BASE=6.12: the 6.12 base and
#                                        backports/6.12/, report in
#                                        results/bench-6.12.{md,json,png})
#
# Steps: fetch-base.sh, apply.sh, build build/src-base -> build/obj-base and
# build/src-patched -> build/obj-patched (configs/kvm.config), build the
# selftests from build/src-patched (build/st-patched; the same test binary
# runs on both kernels), make one initramfs running the whole matrix, boot
# each kernel twice, with and without the memory controller (the two kernels
# in parallel), judge each boot with scripts/verdict.sh, then
# scripts/bench-report.py writes results/bench.{md,json,png} and the table
# goes to stdout, and scripts/readme-results.py updates the README results
# block (or results/README-results.md).
#
# The memcg boots run the tests in a child cgroup with the memory controller,
# as a VMM under systemd runs, so every GFP_KERNEL_ACCOUNT allocation is
# charged; the no-memcg boots add cgroup_disable=memory to the kernel command
# line, which turns the memory controller off altogether: no allocation is
# charged, and the charging code is skipped.  (Running in the root cgroup of
# a kernel with the controller on would still go through the charging hooks.)
#
# The matrix of the memcg boots (one initramfs test per cell, fixed seed, same
# for both kernels):
#   routes {1,64,512,1024,2048,4096} x mode {full,churn,same}
#   grow to 4096 routes (one pass: 4096 updates of 1..4096 routes; total_us)
#   4096 routes with 1024 irqfds, full and churn
#   allocations per update (full, same x 100, 512, 4096 routes) when the kernel has
#   kmem trace events; skipped otherwise (configs/kvm.config has no tracing)
#   memory kept per VM (memory.current of the test's cgroup, 16 VMs): empty,
#   with 512 and 4096 routes, after shrinking to 24 routes
# and of the no-memcg boots, fewer cells: routes {1,64,512,4096} full,
# 4096 same, grow to 4096.
#
# Environment (development overrides; the defaults are the real pipeline):
#   BASE_KERNEL=bzImage      use this base kernel, do not build obj-base
#   PATCHED_KERNEL=bzImage   use this patched kernel, do not build obj-patched
#   SELFTESTS_DIR=dir        take irq_routing_perf_test from dir, do not build
#                            the selftests (with all three set, fetch-base.sh
#                            and apply.sh are skipped too)
#   BENCH_OUT=dir            results directory (default results/)
#   BENCH_SCALE=F            multiply the iteration counts (not grow's), e.g.
#                            0.1 for a quick try; default 1
#   BENCH_SERIAL=1           boot the kernels one after the other
#   BENCH_NOMEMCG=0          skip the boots without the memory controller
#   BENCH_BASE_REV, BENCH_PATCHED_REV
#                            what to record as the tree of a given kernel
#   BENCH_TIMEOUT=S          hard limit per boot, seconds (default 1800)
#   BENCH_ONLY=a,b           run only these cells (irqroute.only=); the
#                            report then only expects these
#   BENCH_README=0           do not run scripts/readme-results.py (default:
#                            README.md's results block, or results/README-
#                            results.md when README.md has no markers; with
#                            BENCH_OUT, always BENCH_OUT/README-results.md)
# Logs: build/logs/bench-{base,patched}{,-nomemcg}.console, build/logs/bench.log.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# Everything the run needs, before the two boots run in parallel (two
# apt-get runs at once lose dpkg's lock).
# shellcheck disable=SC2086
install_deps $PKGS_KBUILD $PKGS_BOOT $PKGS_BENCH

if [ "$BASE" = 7.3 ]; then
	OUT=$(realpath -m "${BENCH_OUT:-$TOP/results}")
else
	# Written here, then copied to results/bench-$BASE.*.
	OUT=$(realpath -m "${BENCH_OUT:-$BUILD/bench-results}")
	BENCH_README=0
fi
SCALE=${BENCH_SCALE:-1}
TMO=${BENCH_TIMEOUT:-1800}
SEED=1
BDIR=$BUILD/bench
# One guest CPU: with two, how QEMU's round-robin interleaves the vCPUs
# around each SRCU grace period moves the 1-route cells by up to 25 %
# between runs.  With one, instruction time repeats.
export QEMU_SMP=${QEMU_SMP:-1}
mkdir -p "$OUT" "$BDIR"
t0=$(date +%s)
# What the caller set, before this script sets BASE_KERNEL & co. itself.
given=$(for v in BASE_KERNEL PATCHED_KERNEL SELFTESTS_DIR BENCH_SCALE BENCH_ONLY; do
	[ -n "${!v:-}" ] && printf '%s=%s ' "$v" "${!v}"; done || true)
if [ "$BASE" != 7.3 ]; then
	# The selftests come from the 7.3 tree (selftests_73 in common.sh);
	# build-selftests.sh reads $SELFTESTS as its list of tests: default list.
	if [ -z "${SELFTESTS_DIR:-}" ]; then
		[ -x "$ST_DIR/irq_routing_perf_test" ] || (unset SELFTESTS; selftests_73 >/dev/null) ||
			die "bench: cannot build the selftests from the 7.3 tree"
		SELFTESTS_DIR=$ST_DIR
	fi
fi

# --- kernels and the test binary ---------------------------------------------
if [ -z "${BASE_KERNEL:-}" ] || [ -z "${PATCHED_KERNEL:-}" ] || [ -z "${SELFTESTS_DIR:-}" ]; then
	"$TOP/scripts/fetch-base.sh" || die "bench: fetch-base.sh failed (log: $LOGS/fetch.log)"
	"$TOP/scripts/apply.sh" || die "bench: apply.sh failed (log: $LOGS/apply.log)"
fi
if [ -z "${BASE_KERNEL:-}" ]; then
	if [ ! -f "$SRC_BASE/Makefile" ]; then
		log "creating $SRC_BASE (worktree at $BASE_TAG)"
		add_worktree "$SRC_BASE" "$BASE_TAG" ||
			die "bench: cannot check out $BASE_TAG in $SRC_BASE"
	fi
	BASE_KERNEL=$("$TOP/scripts/build-kernel.sh" "$SRC_BASE" "$BUILD/obj-base" \
		"$TOP/configs/kvm.config") || die "bench: base kernel build failed (log: $LOGS/build-obj-base.log)"
fi
if [ -z "${PATCHED_KERNEL:-}" ]; then
	PATCHED_KERNEL=$(SEED_FROM=$BUILD/obj-base "$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched" \
		"$TOP/configs/kvm.config") || die "bench: patched kernel build failed (log: $LOGS/build-obj-patched.log)"
fi
if [ -z "${SELFTESTS_DIR:-}" ]; then
	# build-selftests.sh reads $SELFTESTS as its list of tests: default list.
	SELFTESTS_DIR=$(env -u SELFTESTS "$TOP/scripts/build-selftests.sh" \
		"$SRC_PATCHED" "$BUILD/st-patched") ||
		die "bench: selftests build failed (log: $LOGS/selftests-st-patched.log)"
fi
[ -f "$BASE_KERNEL" ] || die "bench: base kernel not found: $BASE_KERNEL"
[ -f "$PATCHED_KERNEL" ] || die "bench: patched kernel not found: $PATCHED_KERNEL"
[ -x "$SELFTESTS_DIR/irq_routing_perf_test" ] ||
	die "bench: $SELFTESTS_DIR/irq_routing_perf_test not found"
build_s=$(( $(date +%s) - t0 ))

# --- the matrix ----------------------------------------------------------------
# Iterations per routes count: about 2 s of guest time per cell on the base
# kernel (4.6 ms/update at 4096 routes, 0.59 ms at 512, 16-22 us at 1), at
# least ~40 ms on the patched one.  Wall time per boot: ~3 min base (TCG
# runs ~10x slower than guest time), ~2 min patched, in parallel.
declare -A ITERS=([1]=100000 [64]=20000 [512]=3000 [1024]=1600 [2048]=800 [4096]=400)
scale() { python3 -c "import sys; print(max(2, round($1 * float(sys.argv[1]))))" "$SCALE"; }

# Each boot starts with an untimed cell (not reported): in a boot's first
# cells, 1-route updates took about 4 % fewer instructions (p50) than the
# same updates later in the same boot, whatever the mode, so without it
# the matrix's first cell (full at 1 route) looked faster than churn and
# same.  Measured in one boot of the patched kvm.config kernel, icount:
# irq_routing_perf_test -q -r 1 -i 20000, modes full, churn and same,
# seeds 1-3, -w 10 and 11, 18 cells: p50 12.18 and 12.19 us in the first
# two, 12.71 in each of the other 16.
WARMUP="warmup-r1 irq_routing_perf_test -q -s $SEED -r 1 -m full -i $(scale 100000)"

bindir=$BDIR/bin
rm -rf "$bindir"
mkdir -p "$bindir"
cp "$SELFTESTS_DIR/irq_routing_perf_test" "$bindir/"
cp "$TOP/scripts/bench-allocs.sh" "$bindir/"
matrix=$BDIR/matrix.list
{
	echo "# kvm-irqroute bench matrix: NAME COMMAND ARGS (generated by scripts/bench.sh)"
	declare -A SITERS
	for r in "${!ITERS[@]}"; do SITERS[$r]=$(scale "${ITERS[$r]}"); done
	echo "$WARMUP"
	bench_cells SITERS "$SEED"
	# Allocations per update: runs with N1 and N2 updates, difference.
	for r in 100 512 4096; do
		for m in full same; do
			echo "allocs-$m-r$r bench-allocs.sh $r $m 10 50 $SEED"
		done
	done
	# Memory kept per VM, from memory.current: needs the memory controller.
	for r in 512 4096; do
		echo "mem-r$r-vms16 irq_routing_perf_test -q --mem-vms 16 -r $r --mem-shrink 24"
	done
} >"$matrix"
"$TOP/scripts/mkinitrd.sh" "$BDIR/bench.cpio.gz" "$matrix" "$bindir" >/dev/null ||
	die "bench: mkinitrd.sh failed"
NOMEMCG=${BENCH_NOMEMCG:-1}
nomatrix=$BDIR/matrix-nomemcg.list
{
	echo "# kvm-irqroute bench matrix without the memory controller (cgroup_disable=memory; generated by scripts/bench.sh)"
	P="irq_routing_perf_test -q -s $SEED"
	echo "$WARMUP"
	for r in 1 64 512 4096; do
		echo "full-r$r $P -r $r -m full -i $(scale "${ITERS[$r]}")"
	done
	echo "same-r4096 $P -r 4096 -m same -i $(scale "${ITERS[4096]}")"
	echo "grow-r4096 $P -r 4096 -m grow -i 4096"
} >"$nomatrix"
if [ "$NOMEMCG" = 1 ]; then
	"$TOP/scripts/mkinitrd.sh" "$BDIR/bench-nomemcg.cpio.gz" "$nomatrix" "$bindir" >/dev/null ||
		die "bench: mkinitrd.sh failed"
fi

# --- boots -------------------------------------------------------------------------
append="testtimeout=900"
[ -n "${BENCH_ONLY:-}" ] && append+=" irqroute.only=$BENCH_ONLY"
boot() {	# boot NAME BZIMAGE [nomemcg]: console in $LOGS/bench-NAME.console
	local name=$1 bz=$2 s rc=0 initrd=$BDIR/bench.cpio.gz app=$append
	if [ "${3:-}" = nomemcg ]; then
		initrd=$BDIR/bench-nomemcg.cpio.gz
		app+=" cgroup_disable=memory"
	fi
	s=$(date +%s)
	ICOUNT=1 APPEND="$app" "$TOP/scripts/boot.sh" "$bz" "$initrd" \
		"$LOGS/bench-$name.console" "$TMO" >"$LOGS/bench-$name.boot" 2>&1 || rc=$?
	echo $(( $(date +%s) - s )) >"$BDIR/$name.wall"
	return $rc
}
boot_pair() {	# boot_pair SUFFIX [nomemcg]: base and patched; sets rc_base$SUFFIX, rc_patched$SUFFIX
	local sfx=$1 mode=${2:-} pb pp
	declare -g "rc_base$sfx=0" "rc_patched$sfx=0"
	if [ "${BENCH_SERIAL:-0}" = 1 ]; then
		boot "base${sfx/_/-}" "$BASE_KERNEL" "$mode" || declare -g "rc_base$sfx=$?"
		boot "patched${sfx/_/-}" "$PATCHED_KERNEL" "$mode" || declare -g "rc_patched$sfx=$?"
	else
		boot "base${sfx/_/-}" "$BASE_KERNEL" "$mode" &
		pb=$!
		boot "patched${sfx/_/-}" "$PATCHED_KERNEL" "$mode" &
		pp=$!
		wait $pb || declare -g "rc_base$sfx=$?"
		wait $pp || declare -g "rc_patched$sfx=$?"
	fi
}
log "booting base and patched kernels$([ "${BENCH_SERIAL:-0}" = 1 ] && echo ", one after the other" || echo " in parallel") (icount; consoles: $LOGS/bench-{base,patched}.console)"
tb=$(date +%s)
rm -f "$BDIR"/*.wall
boot_pair ""
boots="base patched"
if [ "$NOMEMCG" = 1 ]; then
	log "booting them again with cgroup_disable=memory (consoles: $LOGS/bench-{base,patched}-nomemcg.console)"
	boot_pair _nomemcg nomemcg
	boots+=" base_nomemcg patched_nomemcg"
fi
boot_s=$(( $(date +%s) - tb ))
for k in $boots; do
	rc=rc_$k
	k=${k/_/-}
	if [ "${!rc}" -ne 0 ]; then
		# The kernel's own complaint if any, else boot.sh's reason.
		why=$("$TOP/scripts/console-badness.sh" "$LOGS/bench-$k.console" 2>/dev/null | head -n1 |
			sed -e 's/^console-badness: //' -e 's/ in [^ ]*, first:/, first:/') || true
		[ -n "$why" ] || why=$(grep -m1 '^FAIL' "$LOGS/bench-$k.boot" ||
			tail -n1 "$LOGS/bench-$k.boot")
		why=${why#FAIL: }
		die "bench: $k boot failed: ${why% (log: *} (log: $LOGS/bench-$k.console)"
	fi
	if ! "$TOP/scripts/verdict.sh" "$LOGS/bench-$k.console" >"$LOGS/bench-$k.verdict" 2>&1; then
		die "bench: $k kernel: $(tail -n1 "$LOGS/bench-$k.verdict") (log: $LOGS/bench-$k.console)"
	fi
done

# --- report --------------------------------------------------------------------
meta=$BDIR/meta.env
{
	echo "base_image=$(realpath "$BASE_KERNEL")"
	echo "patched_image=$(realpath "$PATCHED_KERNEL")"
	echo "selftests=$(realpath "$SELFTESTS_DIR")/irq_routing_perf_test"
	# With a kernel given, its tree is the caller's to name (BENCH_*_REV).
	if [[ $given == *BASE_KERNEL=* ]]; then
		echo "base_rev=${BENCH_BASE_REV:-unknown (BASE_KERNEL given)}"
	else
		echo "base_rev=$(git -C "$SRC_BASE" rev-parse -q HEAD 2>/dev/null || true)"
	fi
	if [[ $given == *PATCHED_KERNEL=* ]]; then
		echo "patched_rev=${BENCH_PATCHED_REV:-unknown (PATCHED_KERNEL given)}"
	else
		echo "patched_rev=$(git -C "$SRC_PATCHED" rev-parse -q HEAD 2>/dev/null || true)"
	fi
	echo "overrides=$given"
	echo "base_desc=$BASE_DESC"
	echo "patch_dir=${PATCHDIR#"$TOP"/}/"
	echo "kvm_config_sha256=$(sha256sum "$TOP/configs/kvm.config" | cut -d' ' -f1)"
	echo "qemu_version=$(qemu-system-x86_64 --version | head -n1)"
	echo "qemu_mode=TCG, -icount shift=0,sleep=off, -smp ${QEMU_SMP:-2}, -cpu ${QEMU_CPU:-EPYC,+svm}, -m ${QEMU_MEM:-2G}"
	echo "date=$(date -u +%FT%TZ)"
	echo "host=$(uname -n) $(nproc) CPUs"
	echo "parallel=$([ "${BENCH_SERIAL:-0}" = 1 ] && echo 0 || echo 1)"
	echo "wall_build_s=$build_s"
	echo "wall_boot_base_s=$(cat "$BDIR/base.wall")"
	echo "wall_boot_patched_s=$(cat "$BDIR/patched.wall")"
	if [ "$NOMEMCG" = 1 ]; then
		echo "wall_boot_base_nomemcg_s=$(cat "$BDIR/base-nomemcg.wall")"
		echo "wall_boot_patched_nomemcg_s=$(cat "$BDIR/patched-nomemcg.wall")"
	fi
	echo "wall_boots_s=$boot_s"
	echo "only=${BENCH_ONLY:-}"
} >"$meta"
nomemcg_args=()
[ "$NOMEMCG" = 1 ] && nomemcg_args=(--matrix-nomemcg "$nomatrix"
	--base-nomemcg "$LOGS/bench-base-nomemcg.console"
	--patched-nomemcg "$LOGS/bench-patched-nomemcg.console")
python3 "$TOP/scripts/bench-report.py" --matrix "$matrix" --meta "$meta" \
	--base "$LOGS/bench-base.console" --patched "$LOGS/bench-patched.console" \
	"${nomemcg_args[@]}" --out "$OUT" || die "bench: report failed (logs: $LOGS/bench-{base,patched}.console)"
if [ "${BENCH_README:-1}" = 1 ]; then
	# README.md only from the default results directory; elsewhere the
	# block goes to $OUT/README-results.md.
	readme=$TOP/README.md
	[ "$OUT" = "$TOP/results" ] || readme=$OUT/README.md
	python3 "$TOP/scripts/readme-results.py" --bench "$OUT/bench.md" --readme "$readme" >&2 ||
		die "bench: readme-results.py failed"
fi
if [ "$BASE" != 7.3 ] && [ -z "${BENCH_OUT:-}" ]; then
	for f in md json png; do
		[ ! -f "$OUT/bench.$f" ] || cp "$OUT/bench.$f" "$TOP/results/bench-$BASE.$f"
	done
	log "bench: results/bench-$BASE.{md,json,png} written"
fi
cat "$OUT/bench.md"
log "bench: wall time $(( $(date +%s) - t0 ))s (builds ${build_s}s, boots ${boot_s}s: $(for k in $boots; do printf '%s %ss ' "${k/_/-}" "$(cat "$BDIR/${k/_/-}.wall")"; done)); results in $OUT/bench.{md,json,png}"
