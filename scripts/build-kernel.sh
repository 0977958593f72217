#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build an x86_64 bzImage out of tree: tinyconfig + config fragments.
#
# Usage: scripts/build-kernel.sh SRCDIR OBJDIR FRAGMENT...
#
# .config is regenerated (tinyconfig, merge_config.sh -m, olddefconfig) only
# when the fragments, their order or the compiler changed, so a rebuild after
# a source change is incremental.  Every CONFIG_X=y of the fragments (the
# last fragment wins) must be =y in the final .config, every
# "# CONFIG_X is not set" must not be =y.  Uses ccache when installed
# (CCACHE_DIR=build/ccache).  Only one build runs at a time (flock).
# Prints the bzImage path on success.
#
# SEED_FROM=SEEDDIR: when OBJDIR has never been built, start it as a copy
# of SEEDDIR (seed_objdir in common.sh): the patched kernel after the base
# one then costs what the series touches, not a second cold build.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -ge 3 ] || die "usage: $0 SRCDIR OBJDIR FRAGMENT..."
srcdir=$(readlink -f "$1")
mkdir -p "$2"
objdir=$(readlink -f "$2")
shift 2
frags=()
for f; do
	[ -r "$f" ] || die "config fragment not found: $f"
	frags+=("$(readlink -f "$f")")
done
[ -f "$srcdir/Makefile" ] && [ -d "$srcdir/arch/x86" ] ||
	die "not a kernel source tree: $srcdir"

need_kbuild_tools
need flock util-linux

name=$(basename "$objdir")
buildlog=$LOGS/build-$name.log
: >"$buildlog"

cc=gcc
if command -v ccache >/dev/null 2>&1; then
	cc="ccache gcc"
	export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
	mkdir -p "$CCACHE_DIR"
fi
kmake=(make -C "$srcdir" O="$objdir" ARCH=x86_64 CC="$cc" HOSTCC=gcc)

fail_build() {
	echo "FAIL: kernel build failed (log: $buildlog)" >&2
	{ grep -E -i 'error|fatal|undefined reference|\*\*\*' "$buildlog" ||
		tail -n 20 "$buildlog"; } | tail -n 20 >&2
	exit 1
}

# One kernel build at a time on this machine.
exec 9>"$BUILD/.kernel-build.lock"
if ! flock -n 9; then
	log "another kernel build is running; waiting for it"
	flock 9
fi

start=$(date +%s)

# --- seed from another objdir (SEED_FROM) ----------------------------------
[ -z "${SEED_FROM:-}" ] || seed_objdir "$SEED_FROM" "$objdir" "$srcdir"

# --- .config ------------------------------------------------------------
stamp=$objdir/.irqroute-config.sha256
want=$( { echo "cc=$(gcc --version | head -n1) ccache=${cc%% *}";
	  for f in "${frags[@]}"; do echo "== $(basename "$f")"; cat "$f"; done; } |
	sha256sum | cut -d' ' -f1)
if [ -f "$objdir/.config" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	log "$name: fragments unchanged, keeping .config"
else
	log "$name: generating .config (tinyconfig + ${frags[*]##*/})"
	rm -f "$stamp"
	{
		"${kmake[@]}" tinyconfig &&
		"$srcdir/scripts/kconfig/merge_config.sh" -m -O "$objdir" \
			"$objdir/.config" "${frags[@]}" &&
		"${kmake[@]}" olddefconfig
	} >>"$buildlog" 2>&1 || fail_build

	# Verify: last assignment of each symbol over all fragments wins.
	bad=$(awk '
		/^CONFIG_[A-Za-z0-9_]+=y$/ { s = $0; sub(/=y$/, "", s); want[s] = "y"; next }
		/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { want[$2] = "n"; next }
		/^CONFIG_[A-Za-z0-9_]+=/ { s = $0; sub(/=.*/, "", s); delete want[s]; next }
		END { for (s in want) print s, want[s] }' "${frags[@]}" |
	while read -r sym val; do
		got=$(grep -E "^$sym=" "$objdir/.config" | cut -d= -f2- || true)
		if [ "$val" = y ] && [ "$got" != y ]; then
			echo "  $sym=y requested, got ${got:-not set}"
		elif [ "$val" = n ] && [ "$got" = y ]; then
			echo "  $sym unset requested, got y"
		fi
	done | sort)
	if [ -n "$bad" ]; then
		echo "FAIL: config fragments not honoured in $objdir/.config (log: $buildlog):" >&2
		echo "$bad" >&2
		exit 1
	fi
	echo "$want" >"$stamp"
fi

# --- bzImage (or KBUILD_TARGETS, e.g. "arch/x86/kvm/", for a quick check) ---
if [ -n "${KBUILD_TARGETS:-}" ]; then
	log "$name: make -j$JOBS $KBUILD_TARGETS (log: $buildlog)"
	# shellcheck disable=SC2086
	"${kmake[@]}" -j"$JOBS" $KBUILD_TARGETS >>"$buildlog" 2>&1 || fail_build
	log "$name: built in $(( $(date +%s) - start ))s"
	exit 0
fi
log "$name: make -j$JOBS bzImage (log: $buildlog)"
"${kmake[@]}" -j"$JOBS" bzImage >>"$buildlog" 2>&1 || fail_build

bz=$objdir/arch/x86/boot/bzImage
[ -f "$bz" ] || fail_build
log "$name: built in $(( $(date +%s) - start ))s"
echo "$bz"
