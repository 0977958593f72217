#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# W=1 build of the x86 KVM code (x86_64, the config fragments in $KFRAGS,
# default configs/kvm.config), base vs patched; fails on a warning the base
# does not have.
#
# Usage: scripts/check-w1.sh [BASE_SRC [PATCHED_SRC]]
#   defaults: build/src-base, build/src-patched
# Environment:
#   W1_SCOPE=dir      all of arch/x86/kvm/ and virt/kvm (the default)
#   W1_SCOPE=series   only the objects of the .c files the series changes,
#                     plus kvm_main.o when it changes kvm_host.h (the
#                     objects scripts/check-sparse.sh checks): what
#                     "make check" runs; a warning that a changed header
#                     causes shows in them too
#   W1_BASE=0         do not build the base: fail on any W=1 warning (the
#                     base has none in arch/x86/kvm + virt/kvm: measured
#                     by "make check-full", which builds both)
#
# Objdirs build/obj-w1-base and build/obj-w1-patched (the normal objdirs
# keep their flags) start as copies of $OBJ_BASE and $OBJ_PATCHED and are
# kept between runs.  To see the warnings of every object on every run, the
# objects are deleted before the W=1 build and rebuilt through ccache,
# which replays the warnings of unchanged files from its cache: only changed
# files really compile.
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
scope=${W1_SCOPE:-dir}
with_base=${W1_BASE:-1}

if [ "$scope" = series ]; then
	mapfile -t files < <(series_files "$patched_src" "$base_src")
	mapfile -t targets < <(x86_kvm_objects "${files[@]}")
	[ "${#targets[@]}" -gt 0 ] || die "the series touches no x86 KVM object"
	what="${#targets[@]} objects of the series (${targets[*]##*/})"
else
	targets=(arch/x86/kvm/)
	what="arch/x86/kvm + virt/kvm"
fi

start=$(date +%s)
# run_w1 NAME SRC OBJDIR OUT
run_w1() {	# run_w1 NAME SRC OBJDIR OUT SEED_OBJDIR
	local name=$1 src=$2 obj=$3 out=$4 wlog=$LOGS/check-w1-$1.log t0
	t0=$(date +%s)
	: >"$wlog"
	# The kernel build's objects spare "make prepare" (scripts, objtool).
	seed_objdir "$5" "$obj" "$src"
	x86_config "$src" "$obj" "$wlog" "${KFRAG_FILES[@]}" ||
		die "$name: cannot configure $obj (log: $wlog)"
	kmake_x86 "$src" "$obj" -j"$JOBS" W=1 KCFLAGS=-Wno-error prepare >>"$wlog" 2>&1 ||
		die "$name: make prepare failed (log: $wlog)"
	if [ "$scope" = series ]; then
		(cd "$obj" && rm -f "${targets[@]}")
	else
		find "$obj/arch/x86/kvm" "$obj/virt/kvm" -name '*.o' -delete 2>/dev/null || true
	fi
	# -Wno-error: list the warnings even where CONFIG_WERROR makes them
	# errors (configs/kvm-debug.config).
	kmake_x86 "$src" "$obj" -j"$JOBS" W=1 KCFLAGS=-Wno-error "${targets[@]}" >"$out.raw" 2>&1 ||
		die "$name: W=1 build of $what failed (log: $out.raw)"
	grep -q '  CC .*virt/kvm/.*\.o' "$out.raw" ||
		die "$name: virt/kvm was not built (log: $out.raw)"
	norm_diag "$src" "$obj" <"$out.raw" >"$out"
	log "$name: W=1 $what in $(elapsed "$t0")s, $(wc -l <"$out") warnings"
}
if [ "$with_base" = 1 ]; then
	run_w1 base "$base_src" "$BUILD/obj-w1-base" "$LOGS/w1-base.txt" "$OBJ_BASE"
else
	: >"$LOGS/w1-base.txt"
fi
run_w1 patched "$patched_src" "$BUILD/obj-w1-patched" "$LOGS/w1-patched.txt" "$OBJ_PATCHED"

new=$(LC_ALL=C comm -13 "$LOGS/w1-base.txt" "$LOGS/w1-patched.txt")
if [ -n "$new" ]; then
	echo "FAIL: $(wc -l <<<"$new") new W=1 warning(s): $(head -n1 <<<"$new") (log: $LOGS/w1-patched.txt.raw)" >&2
	sed 's/^/  /' <<<"$new" >&2
	result w1 FAIL
else
	if [ "$with_base" = 1 ]; then
		echo "w1: no new W=1 warnings in $what (base has $(wc -l <"$LOGS/w1-base.txt")) in $(elapsed "$start")s"
	else
		echo "w1: no W=1 warnings in $what (base not built: W1_BASE=0) in $(elapsed "$start")s"
	fi
	result w1 ok
fi
finish
