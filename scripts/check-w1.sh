#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# W=1 build of arch/x86/kvm and virt/kvm (x86_64, configs/kvm.config),
# base vs patched; fails on a warning the base does not have.
#
# Usage: scripts/check-w1.sh [BASE_SRC [PATCHED_SRC]]
#   defaults: build/src-base, build/src-patched
#
# Objdirs build/obj-w1-base and build/obj-w1-patched (the normal objdirs
# keep their flags) are kept between runs.  To see the warnings of every KVM
# object on every run, the KVM objects are deleted before "make W=1
# arch/x86/kvm/" and rebuilt through ccache, which replays the warnings of
# unchanged files from its cache: only changed files really compile.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$TOP/scripts/check-lib.sh"

base_src=$(readlink -f "${1:-$SRC_BASE}")
patched_src=$(readlink -f "${2:-$SRC_PATCHED}")
for d in "$base_src" "$patched_src"; do
	[ -f "$d/Makefile" ] && [ -d "$d/arch/x86/kvm" ] || die "not a kernel tree: $d"
done
need_kbuild_tools
need ccache ccache
x86_kmake_init

start=$(date +%s)
# run_w1 NAME SRC OBJDIR OUT
run_w1() {	# run_w1 NAME SRC OBJDIR OUT SEED_OBJDIR
	local name=$1 src=$2 obj=$3 out=$4 wlog=$LOGS/check-w1-$1.log t0
	t0=$(date +%s)
	: >"$wlog"
	# The kernel build's objects spare "make prepare" (scripts, objtool).
	seed_objdir "$5" "$obj" "$src"
	x86_config "$src" "$obj" "$wlog" "$TOP/configs/kvm.config" ||
		die "$name: cannot configure $obj (log: $wlog)"
	kmake_x86 "$src" "$obj" -j"$JOBS" W=1 prepare >>"$wlog" 2>&1 ||
		die "$name: make prepare failed (log: $wlog)"
	find "$obj/arch/x86/kvm" "$obj/virt/kvm" -name '*.o' -delete 2>/dev/null || true
	kmake_x86 "$src" "$obj" -j"$JOBS" W=1 arch/x86/kvm/ >"$out.raw" 2>&1 ||
		die "$name: W=1 build of arch/x86/kvm/ failed (log: $out.raw)"
	grep -q '  CC .*virt/kvm/kvm_main.o' "$out.raw" ||
		die "$name: virt/kvm was not built (log: $out.raw)"
	norm_diag "$src" "$obj" <"$out.raw" >"$out"
	log "$name: W=1 arch/x86/kvm/ in $(elapsed "$t0")s, $(wc -l <"$out") warnings"
}
run_w1 base "$base_src" "$BUILD/obj-w1-base" "$LOGS/w1-base.txt" "$BUILD/obj-base"
run_w1 patched "$patched_src" "$BUILD/obj-w1-patched" "$LOGS/w1-patched.txt" "$BUILD/obj-patched"

new=$(LC_ALL=C comm -13 "$LOGS/w1-base.txt" "$LOGS/w1-patched.txt")
if [ -n "$new" ]; then
	echo "FAIL: $(wc -l <<<"$new") new W=1 warning(s): $(head -n1 <<<"$new") (log: $LOGS/w1-patched.txt.raw)" >&2
	sed 's/^/  /' <<<"$new" >&2
	result w1 FAIL
else
	echo "w1: no new W=1 warnings in arch/x86/kvm + virt/kvm (base has $(wc -l <"$LOGS/w1-base.txt")) in $(elapsed "$start")s"
	result w1 ok
fi
finish
