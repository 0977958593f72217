#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-patch numbers: build the kernel at each listed prefix of the series
# (incrementally, in one objdir) and boot it under QEMU TCG -icount with a
# small irq_routing_perf_test matrix.  Prints one line per prefix and cell.
#
#   scripts/bench-series.sh [N...]     (default: 3 4 5, i.e. after patch N)
set -euo pipefail
. "$(dirname "$0")/common.sh"

prefixes=${*:-3 4 5}
wt=$BUILD/wt-bench-series
obj=$BUILD/obj-bench-series
out=$BUILD/bench-series
mkdir -p "$out"
"$TOP/scripts/apply.sh" >/dev/null
[ -d "$wt" ] || add_worktree "$wt" "$BASE_TAG"
[ -x "$BUILD/st-patched/irq_routing_perf_test" ] ||
	"$TOP/scripts/build-selftests.sh" "$SRC_PATCHED" "$BUILD/st-patched" >/dev/null
cat >"$out/list" <<EOL
full-r64 irq_routing_perf_test -s 1 -r 64 -i 5000 -m full
full-r512 irq_routing_perf_test -s 1 -r 512 -i 1000 -m full
full-r4096 irq_routing_perf_test -s 1 -r 4096 -i 200 -m full
same-r4096 irq_routing_perf_test -s 1 -r 4096 -i 200 -m same
grow-r4096 irq_routing_perf_test -s 1 -r 4096 -m grow
EOL
"$TOP/scripts/mkinitrd.sh" "$out/bench.cpio.gz" "$out/list" "$BUILD/st-patched" >/dev/null
for n in $prefixes; do
	rev=$(git -C "$SRC_PATCHED" rev-list --reverse "$BASE_TAG..applied" | sed -n "${n}p")
	[ -n "$rev" ] || die "no patch $n in the series"
	git -C "$wt" checkout -q --detach "$rev"
	# The first prefix starts from the base kernel's objects (same config).
	SEED_FROM=$BUILD/obj-base "$TOP/scripts/build-kernel.sh" "$wt" "$obj" \
		"$TOP/configs/kvm.config" >/dev/null
	QEMU_SMP=1 ICOUNT=1 "$TOP/scripts/boot.sh" "$obj/arch/x86/boot/bzImage" "$out/bench.cpio.gz" \
		"$out/console-$n.log" 1800 >/dev/null
	subj=$(git -C "$wt" log -1 --format=%s)
	tr -d '\r' <"$out/console-$n.log" | grep -o 'irq_routing_perf: .*' |
	while read -r line; do
		r=$(sed 's/.* routes=\([0-9]*\).*/\1/' <<<"$line")
		m=$(sed 's/.* mode=\([a-z]*\).*/\1/' <<<"$line")
		avg=$(sed 's/.* avg_us=\([0-9.]*\).*/\1/' <<<"$line")
		p50=$(sed 's/.* p50_us=\([0-9.]*\).*/\1/' <<<"$line")
		tot=$(sed 's/.* total_us=\([0-9.]*\).*/\1/' <<<"$line")
		echo "after patch $n ($subj): routes=$r mode=$m avg_us=$avg p50_us=$p50 total_us=$tot"
	done | tee -a "$out/results.txt"
done
