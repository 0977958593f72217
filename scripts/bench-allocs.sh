#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of "make bench" (busybox sh, runs from the test initramfs):
# kernel allocations per KVM_SET_GSI_ROUTING in steady state.
#
# Usage: bench-allocs.sh ROUTES MODE N1 N2 [SEED]
#
# Enables the trace events kmem:kmalloc, kmem:kmem_cache_alloc and
# kmem:mm_page_alloc, restricted with set_event_pid (+ options/event-fork, so
# the test's threads count too) to the irq_routing_perf_test process, runs
# the test with N1 and then N2 updates (N1 < N2) and prints
#   bench-allocs: routes=R mode=M n1=N1 n2=N2 kmalloc=A,B kmem_cache_alloc=A,B
#     mm_page_alloc=A,B per_update_kmalloc=X per_update_kmem_cache_alloc=Y
#     per_update_mm_page_alloc=Z per_update=X+Y+Z
# where A,B are the event counts of the two runs and X = (B - A) / (N2 - N1):
# everything the two runs share (exec, VM and vCPU creation, the first
# table) cancels out.  Exit 4 (KTAP skip) when the kernel has no kmem trace
# events, 1 when the trace buffer overflowed or the test failed.
set -u
R=$1 M=$2 N1=$3 N2=$4 SEED=${5:-1}
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null
[ -d $T/events/kmem ] || T=/sys/kernel/debug/tracing
if [ ! -d $T/events/kmem ]; then
	echo "bench-allocs: SKIP routes=$R mode=$M: no kmem trace events (kernel built without tracing)"
	exit 4
fi
EVENTS="kmalloc kmem_cache_alloc mm_page_alloc"

reset() {
	echo 0 >$T/tracing_on
	echo >$T/set_event
	echo >$T/set_event_pid
	echo >$T/trace
}

run() {	# run N: prints "kmalloc kmem_cache_alloc mm_page_alloc" counts
	reset
	echo 32768 >$T/buffer_size_kb
	echo 1 >$T/options/event-fork
	for e in $EVENTS; do echo 1 >$T/events/kmem/$e/enable; done
	# The child puts itself in set_event_pid, starts tracing and execs.
	sh -c "echo \$\$ >$T/set_event_pid; echo 1 >$T/tracing_on;
	       exec /tests/irq_routing_perf_test -q -s $SEED -r $R -m $M -i $1" \
		>/tmp/allocs.out 2>&1
	rc=$?
	echo 0 >$T/tracing_on
	grep irq_routing_perf: /tmp/allocs.out >&2
	if [ $rc -ne 0 ]; then
		cat /tmp/allocs.out >&2
		echo "bench-allocs: FAIL irq_routing_perf_test -r $R -m $M -i $1: exit $rc" >&2
		return 1
	fi
	over=$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
	if [ "$over" != 0 ]; then
		echo "bench-allocs: FAIL trace buffer overrun ($over events lost)" >&2
		return 1
	fi
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(kmalloc|kmem_cache_alloc|mm_page_alloc):$/) { c[$i]++; break } }
	     END { printf "%d %d %d\n", c["kmalloc:"], c["kmem_cache_alloc:"], c["mm_page_alloc:"] }' $T/trace
}

a=$(run "$N1") || { reset; exit 1; }
b=$(run "$N2") || { reset; exit 1; }
for e in $EVENTS; do echo 0 >$T/events/kmem/$e/enable; done
reset
echo 1408 >$T/buffer_size_kb
set -- $a $b
echo "$@" | awk -v r="$R" -v m="$M" -v n1="$N1" -v n2="$N2" '{
	d = n2 - n1
	x = ($4 - $1) / d; y = ($5 - $2) / d; z = ($6 - $3) / d
	printf "bench-allocs: routes=%s mode=%s n1=%s n2=%s kmalloc=%d,%d kmem_cache_alloc=%d,%d mm_page_alloc=%d,%d", r, m, n1, n2, $1, $4, $2, $5, $3, $6
	printf " per_update_kmalloc=%.2f per_update_kmem_cache_alloc=%.2f per_update_mm_page_alloc=%.2f per_update=%.2f\n", x, y, z, x + y + z
}'
