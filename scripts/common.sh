#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers for the kvm-irqroute harness.  Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# BASE selects the kernel the series is for: 7.3 (the default, patches/) or
# 6.12 (the LTS backport, backports/6.12/).  Each base has its own build
# directory; the 6.12 one is build/6.12.
BASE=${BASE:-7.3}
case $BASE in
7.3)
	BUILD=${BUILD:-$TOP/build}
	BASE_TAG=v7.3.4-deb
	PATCHDIR=${PATCHDIR:-$TOP/patches}
	BASE_DESC="Linux 7.3.4"
	# The pinned base: Debian's linux-source-7.3 from trixie-backports.
	DEB_PKG=linux-source-7.3
	DEB_VER=7.3.4-1~bpo13+1
	DEB_SUITE=trixie-backports
	DEB_URI=http://deb.debian.org/debian
	DEB_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
	DEBIAN_TAR=linux_7.3.4-1~bpo13+1.debian.tar.xz
	DEBIAN_TAR_SHA256=1df47eb188bf43c0ec41b70544dbc319c38be6b5c37435aa39dd003a12891a9c
	;;
6.12)
	BUILD=${BUILD:-$TOP/build/6.12}
	BASE_TAG=v6.12.117-deb
	PATCHDIR=${PATCHDIR:-$TOP/backports/6.12}
	BASE_DESC="Linux 6.12.117"
	# The pinned base: Debian's linux-source-6.12 from bookworm-security.
	DEB_PKG=linux-source-6.12
	DEB_VER=6.12.117-1~deb12u1
	DEB_SUITE=bookworm-security
	DEB_URI=http://security.debian.org/debian-security
	DEB_SHA256=e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703
	DEBIAN_TAR=
	DEBIAN_TAR_SHA256=
	;;
*)
	echo "FAIL: BASE=$BASE: the bases are 7.3 and 6.12" >&2
	exit 1
	;;
esac
BASE_VER=${DEB_VER%%-*}
SRC=$BUILD/linux			# the git repository: tag "base", branch "dev"
SRC_BASE=$BUILD/src-base		# worktree at the base tag
SRC_PATCHED=$BUILD/src-patched		# worktree, branch "applied" = base + git am
SRC_RFC=$BUILD/src-rfc			# worktree, branch "rfc-applied" = applied + rfc/large-tables
# The selftests of the RFC's tree that its boots run (tests/rfc.list).
RFC_SELFTESTS="irq_routing_perf_test irq_routing_errno_test irq_routing_delivery_test
	irq_routing_concurrency_test"
LOGS=$BUILD/logs
# The 7.3 tree's build directory, whatever BASE is: the selftests of the
# series are built there from the 7.3 tree, and run against the 6.12
# kernels too (userspace against KVM's stable ABI; the backport carries no
# selftests).
BUILD73=$TOP/build
ST_DIR=${ST_DIR:-$BUILD73/st-patched}

# selftests_73: build the selftests into $ST_DIR from the 7.3 tree with
# its series applied; for another BASE, fetch the 7.3 base and apply the
# 7.3 series first (in build/), as the default "make check" does.
selftests_73() {
	if [ "$BASE" = 7.3 ]; then
		"$TOP/scripts/build-selftests.sh" "$SRC_PATCHED" "$ST_DIR"
	else
		env -u OBJ_BASE -u OBJ_PATCHED -u KFRAGS -u PREFIX_FRAGS BASE=7.3 \
			"$TOP/scripts/apply.sh" &&
		env -u OBJ_BASE -u OBJ_PATCHED -u KFRAGS -u PREFIX_FRAGS BASE=7.3 \
			"$TOP/scripts/build-selftests.sh" "$BUILD73/src-patched" "$ST_DIR"
	fi
}

JOBS=${JOBS:-$(nproc)}

# The kernels the checks use.  Standalone, the scripts use the normal
# kernels (configs/kvm.config); "make check" exports the debug ones
# (configs/kvm-debug.config on top), which it builds instead: see
# scripts/check.sh.  KFRAGS is a blank-separated list of config fragments.
OBJ_BASE=${OBJ_BASE:-$BUILD/obj-base}
OBJ_PATCHED=${OBJ_PATCHED:-$BUILD/obj-patched}
read -r -a KFRAG_FILES <<<"${KFRAGS:-$TOP/configs/kvm.config}"

# ccache lives outside the clone, so that a fresh clone on the same machine
# (CI) reuses what earlier builds compiled.  Override with CCACHE_DIR.
export CCACHE_DIR=${CCACHE_DIR:-/var/cache/kvm-irqroute/ccache}
mkdir -p "$CCACHE_DIR" 2>/dev/null || export CCACHE_DIR=$BUILD/ccache
# Kbuild passes absolute paths (-I/path/to/clone/build/src-base/...): let
# ccache hash them relative to build/, so that another clone hits too.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUILD}

mkdir -p "$LOGS"

die() {
	echo "FAIL: $*" >&2
	exit 1
}

log() {
	echo "==> $*" >&2
}

# apt-get, waiting for dpkg's lock instead of failing on it, without
# recommends (what .ci/run and a new machine get).
apt_install() {	# apt_install LOG PACKAGE...
	local alog=$1
	shift
	local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900
		   -y -qq --no-install-recommends)
	"${apt[@]}" install "$@" >"$alog" 2>&1 && return 0
	# A new machine's package lists may be missing or stale.
	"${apt[@]}" update >>"$alog" 2>&1
	"${apt[@]}" install "$@" >>"$alog" 2>&1
}

# Debian packages of each part of the harness.  Entry points install what
# they need with install_deps before any step runs in parallel: two apt-get
# runs at once lose dpkg's lock.
PKGS_KBUILD="gcc make flex bison bc cpio perl xz-utils kmod libelf-dev libssl-dev
	dwarves python3 git ca-certificates file util-linux ccache"
PKGS_BOOT="qemu-system-x86 busybox-static libc6-dev gzip coreutils"
PKGS_BENCH="python3 gnuplot-nox"
PKGS_STATIC="sparse codespell python3-ply python3-git dpkg-dev gcc-powerpc64-linux-gnu"
PKGS_CROSS="gcc-aarch64-linux-gnu gcc-powerpc64le-linux-gnu gcc-riscv64-linux-gnu gcc-s390x-linux-gnu"

# install_deps PACKAGE...: install the missing ones in one apt-get run (root),
# or name them and fail.
install_deps() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null ||
		die "missing Debian packages: ${missing[*]}"
	log "installing ${missing[*]}"
	apt_install "$LOGS/apt-install.log" "${missing[@]}" ||
		die "cannot install Debian packages ${missing[*]} (log: $LOGS/apt-install.log)"
}

# need CMD PACKAGE: make sure CMD exists; install PACKAGE when root.
need() {
	local cmd=$1 pkg=$2
	command -v "$cmd" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		log "installing $pkg for $cmd"
		apt_install "$LOGS/apt-$pkg.log" "$pkg" ||
			die "cannot install Debian package $pkg (log: $LOGS/apt-$pkg.log)"
	fi
	command -v "$cmd" >/dev/null 2>&1 || die "missing $cmd: install Debian package $pkg"
}

# need_file PATH PACKAGE: as need, for a file (headers, libraries).
need_file() {
	local f=$1 pkg=$2
	[ -e "$f" ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing $f: install Debian package $pkg"
	log "installing $pkg for $f"
	apt_install "$LOGS/apt-$pkg.log" "$pkg" ||
		die "cannot install Debian package $pkg (log: $LOGS/apt-$pkg.log)"
	[ -e "$f" ] || die "missing $f after installing $pkg"
}

# seed_objdir SEED OBJDIR SRCDIR: start the never-built objdir OBJDIR, for
# the kernel tree SRCDIR, as a copy of the objdir SEED, built from another
# worktree of the same repository (or from SRCDIR itself), instead of from
# nothing.  Kbuild's .cmd files name sources by absolute path and by path
# relative to the objdir ("../src-base/..."), and tools/ (objtool) its
# objects by absolute path: the copy's are pointed at SRCDIR and OBJDIR,
# and a copy that still names SEED's tree is thrown away (its objects would
# never see SRCDIR's changes).  The files that differ between the two
# trees (commits and uncommitted changes) are touched, so make recompiles
# only what they, and the config symbols that differ, reach.  Does nothing
# when OBJDIR was built before or SEED cannot serve: objdirs and trees must
# be siblings in the same directories (build/).
seed_objdir() {
	local seed obj src seedsrc seedrev left
	seed=$(readlink -f "$1")
	obj=$(readlink -m "$2")
	src=$(readlink -f "$3")
	[ -f "$seed/.config" ] && [ -L "$seed/source" ] && [ ! -f "$obj/.config" ] || return 0
	seedsrc=$(readlink -f "$seed/source")
	[ "$(dirname "$seed")" = "$(dirname "$obj")" ] &&
		[ "$(dirname "$seedsrc")" = "$(dirname "$src")" ] || return 0
	if [ "$seedsrc" != "$src" ]; then
		seedrev=$(git -C "$seedsrc" rev-parse -q --verify HEAD 2>/dev/null) || return 0
		git -C "$src" cat-file -e "$seedrev^{commit}" 2>/dev/null || return 0
	fi
	log "$(basename "$obj"): seeded from $(basename "$seed") (built from $seedsrc)"
	mkdir -p "$obj"
	cp -a "$seed/." "$obj/"
	rm -f "$obj/source"
	local sb=${seedsrc##*/} nb=${src##*/}
	grep -rlIZ -F -e "$seedsrc" -e "$seed" -e "../$sb/" "$obj" |
		xargs -0 -r sed -i -e "s|$seedsrc|$src|g" -e "s|$seed|$obj|g" \
			-e "s|\.\./$sb/|../$nb/|g"
	if [ "$seedsrc" != "$src" ]; then
		left=$(grep -rlI -F -e "/$sb/" -e "/${seed##*/}/" "$obj" | head -n 3) || true
		if [ -n "$left" ]; then
			log "$(basename "$obj"): not seeded, SEED's paths left in: $left"
			rm -rf "$obj"
			mkdir -p "$obj"
			return 0
		fi
	fi
	# Every copied file is now newer than every source (SRCDIR may have
	# been checked out after SEED was built) ...
	find "$obj" -exec touch -h -d "@$(date +%s)" {} +
	[ "$seedsrc" != "$src" ] || return 0
	# ... but the sources that differ are touched a second later.
	sleep 1
	{
		git -C "$src" diff --name-only "$seedrev"
		git -C "$seedsrc" diff --name-only HEAD
	} | sort -u | while read -r f; do
		if [ -e "$src/$f" ]; then touch "$src/$f"; fi
	done
}

# add_worktree DST REV: make DST a new detached worktree of $SRC at REV.
# A kernel checkout is 1.8 GB, and make check needs two (and make mutants a
# third), so when a clean worktree of the same repository exists ($SRC_BASE,
# $SRC_PATCHED or $SRC itself), its files are hard-linked into DST instead
# of written again, and only the files that differ at REV are checked out;
# files the donor has and REV lacks (a donor on the patched branch) are
# removed.
# The trees cannot write through each other: git replaces a file it changes
# (unlink, then create), and kbuild does not write into an O= source tree.
# am_patch PATCH LOG: "git am" PATCH in the current directory's tree, with the
# harness's committer identity; on failure abort the am and die.
am_patch() {
	if ! git -c user.name=apply -c user.email=apply@kvm-irqroute.invalid \
		am -q --keep-cr "$1" >"$2" 2>&1; then
		git am --abort >/dev/null 2>&1 || true
		die "patch does not apply: $(basename "$1") (log: $2)"
	fi
}

# series_patches DIR: the patches of DIR/series, in order, as paths (the
# entries may name files in subfolders: one folder per posting).
series_patches() {
	local p
	[ -f "$1/series" ] || die "no $1/series"
	while IFS= read -r p; do
		case $p in '' | '#'*) continue ;; esac
		[ -f "$1/$p" ] || die "$1/series names a missing patch: $p"
		echo "$1/$p"
	done <"$1/series"
}

add_worktree() {
	local dst rev donor
	dst=$(readlink -m "$1")
	rev=$(git -C "$SRC" rev-parse -q --verify "$2^{commit}") || return 1
	rm -rf "$dst"
	git -C "$SRC" worktree prune
	for donor in "$SRC_BASE" "$SRC_PATCHED" "$SRC"; do
		donor=$(readlink -m "$donor")
		[ "$donor" != "$dst" ] && [ -f "$donor/Makefile" ] || continue
		[ "$(git -C "$donor" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" = \
		  "$(git -C "$SRC" rev-parse --path-format=absolute --git-common-dir)" ] || continue
		# Clean: no changes, no untracked or ignored files (built objects).
		git -C "$donor" diff --quiet HEAD 2>/dev/null || continue
		[ -z "$(git -C "$donor" ls-files -o --directory | head -n 1)" ] || continue
		git -C "$SRC" worktree add -q --no-checkout --detach "$dst" "$rev" || return 1
		if find "$donor" -mindepth 1 -maxdepth 1 ! -name .git \
			-exec cp -al {} "$dst/" \; &&
		   git -C "$dst" reset -q && git -C "$dst" checkout -q -f -- . &&
		   git -C "$dst" clean -fdq &&
		   git -C "$dst" diff --quiet HEAD; then
			log "$(basename "$dst"): worktree at ${rev:0:12}, files hard-linked from $(basename "$donor")"
			return 0
		fi
		rm -rf "$dst"
		git -C "$SRC" worktree prune
		break
	done
	git -C "$SRC" worktree add -q --detach "$dst" "$rev"
}

need_kbuild_tools() {
	need gcc gcc
	need make make
	need flex flex
	need bison bison
	need bc bc
	need cpio cpio
	need perl perl
	need xz xz-utils
	need_file /usr/include/libelf.h libelf-dev
	need_file /usr/include/openssl/ssl.h libssl-dev
}

# bench_cells ITERS SEED: the timing cells of "make bench" and "make
# host-bench" (same names, same arguments), one "NAME COMMAND ARGS" line
# each; ITERS names an associative array from a route count to its
# (already scaled) iteration count.
bench_cells() {
	local -n it=$1
	local p="irq_routing_perf_test -q -s $2" r m
	for r in 1 64 512 1024 2048 4096; do
		for m in full churn same; do
			echo "$m-r$r $p -r $r -m $m -i ${it[$r]}"
		done
	done
	echo "grow-r4096 $p -r 4096 -m grow -i 4096"
	for m in full churn; do
		echo "$m-r4096-f1024 $p -r 4096 -f 1024 -m $m -i ${it[4096]}"
	done
}
