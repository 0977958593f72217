#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the KVM selftests we run, statically, from a kernel source tree:
#   scripts/build-selftests.sh SRCDIR OUTDIR
# Ours (irq_routing_perf_test, irq_routing_test) plus the upstream tests we
# depend on.  The source tree stays clean: headers and objects go to OUTDIR.
set -euo pipefail
. "$(dirname "$0")/common.sh"

src=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
TESTS=${SELFTESTS:-"irq_routing_perf_test irq_routing_test irqfd_test set_memory_region_test kvm_create_max_vcpus irq_test"}

need gcc gcc
need make make
need_file /usr/lib/x86_64-linux-gnu/libc.a libc6-dev
mkdir -p "$out"
blog=$LOGS/selftests-$(basename "$out").log

log "kernel headers for $src"
make -C "$src" O="$out/kobj" -j"$JOBS" headers >"$blog" 2>&1 ||
	die "make headers failed (log: $blog)"

targets=()
for t in $TESTS; do
	[ -f "$src/tools/testing/selftests/kvm/$t.c" ] || {
		log "skipping $t: not in $src"
		continue
	}
	targets+=("$out/$t")
done
log "building ${TESTS// /, } into $out"
make -C "$src/tools/testing/selftests/kvm" -j"$JOBS" OUTPUT="$out" \
	KHDR_INCLUDES="-isystem $out/kobj/usr/include" \
	LDFLAGS="-static -pthread -no-pie" "${targets[@]}" >>"$blog" 2>&1 ||
	die "selftests build failed (log: $blog)"
for t in "${targets[@]}"; do
	file "$t" 2>/dev/null | grep -q "statically linked" ||
		[ "$(command -v file)" = "" ] || die "$t is not static (log: $blog)"
done
echo "$out"
