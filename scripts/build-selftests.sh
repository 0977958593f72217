#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the KVM selftests we run, statically, from a kernel source tree:
#   scripts/build-selftests.sh SRCDIR OUTDIR
# Ours (irq_routing_perf_test and the three irq_routing_*_test correctness
# tests, in x86/) plus the upstream tests we depend on.  The source tree stays clean: headers and objects go to OUTDIR.
set -euo pipefail
. "$(dirname "$0")/common.sh"

src=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
TESTS=${SELFTESTS:-"irq_routing_perf_test irq_routing_errno_test irq_routing_delivery_test
	irq_routing_concurrency_test irqfd_test set_memory_region_test kvm_create_max_vcpus irq_test"}
# shellcheck disable=SC2086 # one blank between names
TESTS=$(echo $TESTS)

need gcc gcc
need make make
need_file /usr/lib/x86_64-linux-gnu/libc.a libc6-dev
mkdir -p "$out"
blog=$LOGS/selftests-$(basename "$out").log

log "kernel headers for $src"
make -C "$src" O="$out/kobj" -j"$JOBS" headers >"$blog" 2>&1 ||
	die "make headers failed (log: $blog)"

# A test is tools/testing/selftests/kvm/NAME.c or, x86 only, x86/NAME.c; the
# binary is OUTDIR/NAME either way (OUTDIR/x86/NAME linked there).
targets=() links=()
for t in $TESTS; do
	if [ -f "$src/tools/testing/selftests/kvm/$t.c" ]; then
		targets+=("$out/$t")
	elif [ -f "$src/tools/testing/selftests/kvm/x86/$t.c" ]; then
		targets+=("$out/x86/$t")
		links+=("$t")
	else
		log "skipping $t: not in $src"
	fi
done
log "building ${TESTS// /, } into $out"
make -C "$src/tools/testing/selftests/kvm" -j"$JOBS" OUTPUT="$out" \
	KHDR_INCLUDES="-isystem $out/kobj/usr/include" \
	LDFLAGS="-static -pthread -no-pie" "${targets[@]}" >>"$blog" 2>&1 ||
	die "selftests build failed (log: $blog)"
for t in "${links[@]}"; do
	ln -f "$out/x86/$t" "$out/$t"
done
for t in "${targets[@]}"; do
	file "$t" 2>/dev/null | grep -q "statically linked" ||
		[ "$(command -v file)" = "" ] || die "$t is not static (log: $blog)"
done
echo "$out"
