#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared settings and helpers for the kvm-irqroute harness.  Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/linux			# the git repository: tag "base", branch "dev"
SRC_BASE=$BUILD/src-base		# worktree at the base tag
SRC_PATCHED=$BUILD/src-patched		# worktree, branch "applied" = base + git am
LOGS=$BUILD/logs
BASE_TAG=v7.3.4-deb

# The pinned base: Debian's linux-source-7.3 from trixie-backports.
DEB_PKG=linux-source-7.3
DEB_VER=7.3.4-1~bpo13+1
DEB_SUITE=trixie-backports
DEB_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
DEBIAN_TAR=linux_7.3.4-1~bpo13+1.debian.tar.xz
DEBIAN_TAR_SHA256=1df47eb188bf43c0ec41b70544dbc319c38be6b5c37435aa39dd003a12891a9c

JOBS=${JOBS:-$(nproc)}

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

# need CMD PACKAGE: make sure CMD exists; install PACKAGE when root.
need() {
	local cmd=$1 pkg=$2
	command -v "$cmd" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		log "installing $pkg for $cmd"
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" \
			>"$LOGS/apt-$pkg.log" 2>&1; then
			apt-get update -qq >>"$LOGS/apt-$pkg.log" 2>&1
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" \
				>>"$LOGS/apt-$pkg.log" 2>&1 ||
				die "cannot install Debian package $pkg (log: $LOGS/apt-$pkg.log)"
		fi
	fi
	command -v "$cmd" >/dev/null 2>&1 || die "missing $cmd: install Debian package $pkg"
}

# need_file PATH PACKAGE: as need, for a file (headers, libraries).
need_file() {
	local f=$1 pkg=$2
	[ -e "$f" ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing $f: install Debian package $pkg"
	log "installing $pkg for $f"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" \
		>"$LOGS/apt-$pkg.log" 2>&1 || {
		apt-get update -qq >>"$LOGS/apt-$pkg.log" 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" \
			>>"$LOGS/apt-$pkg.log" 2>&1
	} || die "cannot install Debian package $pkg (log: $LOGS/apt-$pkg.log)"
	[ -e "$f" ] || die "missing $f after installing $pkg"
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
