#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the scripts/check-*.sh static checks.  Sourced after common.sh.

# --- per-check results: "check: NAME ok|FAIL" lines at the end -------------
CHECK_RESULTS=()
CHECK_FAILED=0

# result NAME ok|FAIL
result() {
	CHECK_RESULTS+=("check: $1 $2")
	[ "$2" = ok ] || CHECK_FAILED=1
}

print_results() {
	local r
	for r in "${CHECK_RESULTS[@]}"; do
		echo "$r"
	done
}

# finish SUMMARY: print the results and exit 0/1.
finish() {
	print_results
	exit "$CHECK_FAILED"
}

# elapsed START: seconds since START (date +%s)
elapsed() {
	echo $(( $(date +%s) - $1 ))
}

# --- x86_64 kernel builds, the same way scripts/build-kernel.sh does -------
x86_kmake_init() {
	X86_CC=gcc
	if command -v ccache >/dev/null 2>&1; then
		X86_CC="ccache gcc"
		export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
		mkdir -p "$CCACHE_DIR"
	fi
}

# kmake_x86 SRCDIR OBJDIR ARGS...: make for x86_64 with the harness' CC.
kmake_x86() {
	local src=$1 obj=$2
	shift 2
	make -C "$src" O="$obj" ARCH=x86_64 CC="$X86_CC" HOSTCC=gcc "$@"
}

# The kernel builds of the harness run one at a time (scripts/build-kernel.sh
# takes the same lock).  Held until the script exits.
take_build_lock() {
	need flock util-linux
	exec 9>"$BUILD/.kernel-build.lock"
	if ! flock -n 9; then
		log "another kernel build is running; waiting for it"
		flock 9
	fi
}

release_build_lock() {
	{ flock -u 9; } 2>/dev/null || true
}

# x86_config SRCDIR OBJDIR LOG FRAGMENT...: tinyconfig + fragments +
# olddefconfig, with the stamp file of scripts/build-kernel.sh (so either
# script keeps the other's .config).  No-op when the stamp matches.
x86_config() {
	local src=$1 obj=$2 logf=$3 f want stamp
	shift 3
	local frags=()
	for f; do frags+=("$(readlink -f "$f")"); done
	stamp=$obj/.irqroute-config.sha256
	want=$( { echo "cc=$(gcc --version | head -n1) ccache=${X86_CC%% *}";
		  for f in "${frags[@]}"; do echo "== $(basename "$f")"; cat "$f"; done; } |
		sha256sum | cut -d' ' -f1)
	if [ -f "$obj/.config" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return 0
	fi
	mkdir -p "$obj"
	rm -f "$stamp"
	{
		kmake_x86 "$src" "$obj" tinyconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
			"$obj/.config" "${frags[@]}" &&
		kmake_x86 "$src" "$obj" olddefconfig
	} >>"$logf" 2>&1 || return 1
	echo "$want" >"$stamp"
}

# objdir_for SRCDIR SHARED_OBJDIR OWN_OBJDIR: the shared objdir when it is
# configured for SRCDIR with KVM (so reusing it costs nothing), else OWN.
objdir_for() {
	local src shared=$2 own=$3
	src=$(readlink -f "$1")
	if [ -f "$shared/.config" ] && [ "$(readlink -f "$shared/source" 2>/dev/null)" = "$src" ] &&
	   grep -q '^CONFIG_KVM_AMD=y' "$shared/.config" &&
	   grep -q '^CONFIG_KVM_INTEL=y' "$shared/.config"; then
		echo "$shared"
	else
		echo "$own"
	fi
}

# series_files PATCHED_SRC BASE_SRC: files changed by the series (and by
# uncommitted edits in PATCHED_SRC).
series_files() {
	local base
	base=$(git -C "$2" rev-parse HEAD)
	git -C "$1" diff --name-only "$base"
}

# x86_kvm_objects FILE...: the x86_64 kbuild targets for the KVM .c files
# among FILE (virt/kvm is built from arch/x86/kvm/Makefile); kvm_main.o too
# when include/linux/kvm_host.h changed.
x86_kvm_objects() {
	local f
	for f; do
		case "$f" in
		include/linux/kvm_host.h) echo "arch/x86/kvm/../../../virt/kvm/kvm_main.o" ;;
		virt/kvm/*.c) f=${f%.c}.o; echo "arch/x86/kvm/../../../$f" ;;
		arch/x86/kvm/*.c) echo "${f%.c}.o" ;;
		esac
	done | sort -u
}

# norm_diag SRCDIR OBJDIR: read compiler/sparse output, keep the diagnostic
# lines ("file:line:col: warning|error: ..."), without the tree paths and
# without line/column numbers, sorted (so comm(1) finds the new ones).
norm_diag() {
	local src obj
	src=$(readlink -f "$1")
	obj=$(readlink -f "$2")
	{ grep -E '^[^ ]+:[0-9]+(:[0-9]+)?: (warning|error):' || true; } |
	sed -E -e "s#$src/##g" -e "s#$obj/##g" -e 's#^(\.\./)+##' \
		-e 's#arch/[a-z0-9_]+/kvm/\.\./\.\./\.\./##g' \
		-e 's#^([^ :]+):[0-9]+(:[0-9]+)?: #\1: #' |
	LC_ALL=C sort
}
