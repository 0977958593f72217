#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sparse (C=2) on the x86_64 KVM objects the series touches, base vs patched.
#
# Usage: scripts/check-sparse.sh [BASE_SRC [PATCHED_SRC]]
#   defaults: build/src-base, build/src-patched
#
# Objects: the series' .c files under arch/x86/kvm and virt/kvm (the latter
# built as arch/x86/kvm/../../../virt/kvm/X.o), plus kvm_main.o when
# include/linux/kvm_host.h changed.  Config: tinyconfig + configs/kvm.config.
# Objdirs: build/obj-base / build/obj-patched when they are configured for
# that tree with KVM, else build/obj-sparse-base / build/obj-sparse-patched.
# The objects are built first, then checked with C=2, so only sparse speaks.
# Fails on a sparse warning of the patched tree that the base lacks (line
# numbers ignored).
#
# Linux 7.3 needs a sparse that knows __typeof_unqual__
# (scripts/checker-valid.sh); bookworm's 0.6.4 does not, so then sparse is
# built from Debian unstable's source package into build/tools/.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$TOP/scripts/check-lib.sh"

base_src=$(readlink -f "${1:-$SRC_BASE}")
patched_src=$(readlink -f "${2:-$SRC_PATCHED}")
for d in "$base_src" "$patched_src"; do
	[ -f "$d/Makefile" ] && [ -d "$d/arch/x86/kvm" ] || die "not a kernel tree: $d"
done
need_kbuild_tools
x86_kmake_init
slog=$LOGS/check-sparse.log
: >"$slog"

# --- a sparse that the kernel accepts -----------------------------------
sparse_ok() {
	[ -x "$1" ] || return 1
	# Kernels before scripts/checker-valid.sh (6.12) take any sparse.
	[ -x "$base_src/scripts/checker-valid.sh" ] || return 0
	[ "$("$base_src/scripts/checker-valid.sh" "$1" -m64 2>/dev/null)" = 1 ]
}
get_sparse() {
	local tools=$BUILD/tools/sparse apt=$BUILD/apt-sid s
	if command -v sparse >/dev/null 2>&1 || ( need sparse sparse ) >/dev/null 2>&1; then
		s=$(command -v sparse)
		sparse_ok "$s" && { echo "$s"; return 0; }
	fi
	[ -x "$tools/sparse" ] && sparse_ok "$tools/sparse" && { echo "$tools/sparse"; return 0; }
	log "Debian's sparse is too old for this kernel: building unstable's source package"
	need dpkg-source dpkg-dev
	mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
	cat >"$apt/parts/sid-src.sources" <<-EOS
	Types: deb-src
	URIs: http://deb.debian.org/debian
	Suites: sid
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOS
	local apto=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o Debug::NoDropPrivs=true -o APT::Sandbox::User=root)
	rm -rf "$tools.tmp"
	mkdir -p "$tools.tmp"
	{
		apt-get "${apto[@]}" update &&
		(cd "$tools.tmp" && apt-get "${apto[@]}" source sparse) &&
		make -C "$tools.tmp"/sparse-*/ -j"$JOBS" CC=gcc HAVE_LLVM=no \
			HAVE_GTK=no HAVE_LIBXML=no sparse
	} >"$LOGS/sparse-build.log" 2>&1 ||
		die "cannot build sparse from Debian's source (log: $LOGS/sparse-build.log)"
	rm -rf "$tools"
	mv "$tools.tmp"/sparse-*/ "$tools"
	rm -rf "$tools.tmp"
	sparse_ok "$tools/sparse" ||
		die "Debian unstable's sparse is too old for this kernel too (log: $LOGS/sparse-build.log)"
	echo "$tools/sparse"
}
SPARSE=$(get_sparse)

# --- objects to check ---------------------------------------------------
mapfile -t files < <(series_files "$patched_src" "$base_src")
mapfile -t objs < <(x86_kvm_objects "${files[@]}")
[ "${#objs[@]}" -gt 0 ] || die "the series touches no x86 KVM object"
log "sparse: ${objs[*]##*/}"

start=$(date +%s)

# run_sparse NAME SRC OBJDIR OUT: build the objects, then sparse them.
run_sparse() {
	local name=$1 src=$2 obj=$3 out=$4
	# The shared objdirs are built by scripts/build-kernel.sh: used with
	# the .config they have (KVM on), under its lock.
	case "$obj" in
	"$OBJ_BASE" | "$OBJ_PATCHED") take_build_lock ;;
	*) x86_config "$src" "$obj" "$slog" "${KFRAG_FILES[@]}" ||
		die "$name: cannot configure $obj (log: $slog)" ;;
	esac
	kmake_x86 "$src" "$obj" -j"$JOBS" "${objs[@]}" >>"$slog" 2>&1 ||
		die "$name: build of ${objs[*]##*/} failed (log: $slog)"
	kmake_x86 "$src" "$obj" -j"$JOBS" C=2 CHECK="$SPARSE" "${objs[@]}" \
		>"$out.raw" 2>&1 || die "$name: sparse run failed (log: $out.raw)"
	grep -q 'C=2 specified, but' "$out.raw" && die "$name: kbuild refused $SPARSE (log: $out.raw)"
	grep -c '^  CHECK ' "$out.raw" >/dev/null || die "$name: sparse did not run (log: $out.raw)"
	norm_diag "$src" "$obj" <"$out.raw" >"$out"
	release_build_lock
}

obj_base=$(objdir_for "$base_src" "$OBJ_BASE" "$BUILD/obj-sparse-base")
obj_patched=$(objdir_for "$patched_src" "$OBJ_PATCHED" "$BUILD/obj-sparse-patched")
log "sparse: base in $obj_base, patched in $obj_patched"
run_sparse base "$base_src" "$obj_base" "$LOGS/sparse-base.txt"
run_sparse patched "$patched_src" "$obj_patched" "$LOGS/sparse-patched.txt"

new=$(LC_ALL=C comm -13 "$LOGS/sparse-base.txt" "$LOGS/sparse-patched.txt")
nbase=$(wc -l <"$LOGS/sparse-base.txt")
if [ -n "$new" ]; then
	echo "FAIL: $(wc -l <<<"$new") new sparse warning(s): $(head -n1 <<<"$new") (log: $LOGS/sparse-patched.txt.raw)" >&2
	sed 's/^/  /' <<<"$new" >&2
	result sparse FAIL
else
	echo "sparse: no new warnings in ${#objs[@]} objects (${objs[*]##*/}; base has $nbase) in $(elapsed "$start")s"
	result sparse ok
fi
finish
