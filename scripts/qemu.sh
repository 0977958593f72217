#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build qemu-system-x86_64 from Debian 13's qemu source package, twice: the
# stock tree and the tree with the QEMU series of vmm/qemu/ applied.
#
#   scripts/qemu.sh [fetch] [apply] [build]	(default: all three)
#
# fetch: a private sources list (deb-src of trixie, trixie-updates and
#   trixie-security, for the pinned qemu source package; deb of
#   bookworm-backports, for meson >= 1.5), package lists and cache under
#   build/qemu/apt (the machine's apt configuration is not touched); the
#   upstream tarball qemu_10.0.13+ds.orig.tar.xz with its sha256 pinned (not
#   Debian's packaging or patches); meson 1.7.0-1~bpo12+1 and
#   python3-pycotap 1.3.1-2~bpo12+1 (sha256 pinned) and the build
#   dependencies installed with apt-get; the tree committed into
#   build/qemu/src, branch "base", tag $QEMU_TAG.  Nothing to do when the
#   tag exists.
# apply: worktrees build/qemu/stock/src (the tag) and build/qemu/patched/src
#   (branch "applied": the tag + "git am" of each patch of vmm/qemu/series).
# build: configure and build qemu-system-x86_64 in build/qemu/stock/obj and
#   build/qemu/patched/obj (x86_64-softmmu; KVM only, no TCG; no GUI, docs,
#   tools, user mode or optional features; the devices of a default x86
#   build, virtio and iothreads among them), through ccache, niced.  Each
#   build's wall time goes to build/logs/qemu-build-times.txt.
#
# The source and build directories are always SOMETHING/src and
# SOMETHING/obj, so that the relative paths of the compile commands are the
# same in every tree and ccache shares objects between them (the series'
# development tree, build/qemu/src with build/qemu/obj, too).
#
# QEMU_LEAN=1: what make check runs, built in SOMETHING/obj-lean instead:
# only the devices of configs/qemu-check-devices.mak (q35, serial,
# virtio-blk-pci) and -O0, which make a cold build take about 6 min on 2
# cores instead of 23.  Nothing to measure with: make vmm-bench uses the
# default build.
#
# Environment: QEMU_TREES (default "stock patched"; "dev" builds the
# repository's checkout, build/qemu/src, in build/qemu/obj), QEMU_SERIES
# (default vmm/qemu), QEMU_LEAN, JOBS.
set -euo pipefail
. "$(dirname "$0")/common.sh"

QTOP=$TOP/build/qemu
QSRC=$QTOP/src
QEMU_TAG=v10.0.13-deb
QEMU_SRCPKG_VER=1:10.0.13+ds-0+deb13u1
QEMU_ORIG=qemu_10.0.13+ds.orig.tar.xz
QEMU_ORIG_SHA256=6a0888e806c2ffc0c5f0733e974f9aea55491950d3c47c98669c8b236dde59ae
# Debian's packaging, for one patch only: the +ds tarball lacks the edk2
# blobs, which pc-bios/meson.build unpacks whenever bzip2 is installed.
QEMU_DEBIAN=qemu_10.0.13+ds-0+deb13u1.debian.tar.xz
QEMU_DEBIAN_SHA256=da73c092f5684c551b0334d675eb16a3dec91e1edea94759cfb1102fa4a0364e
QEMU_DEBIAN_PATCH=skip-unpack-edk2-blobs.patch
MESON_VER=1.7.0-1~bpo12+1
MESON_SHA256=4b86d2f2cb4431d03826fa4b2c3a89508edeb8140509e7e4b285285ec3175bbe
PYCOTAP_VER=1.3.1-2~bpo12+1
PYCOTAP_SHA256=3774be6e79318192059aa72e7b7a701e8b99bba2147befcc715650a0da65ca96
QEMU_SERIES=${QEMU_SERIES:-$TOP/vmm/qemu}
QEMU_TREES=${QEMU_TREES:-stock patched}
# What the build needs: meson's dependencies and QEMU's required libraries
# (glib, zlib); the system python, which has meson (pyenv's may not).
PKGS_QEMU="gcc ninja-build pkg-config python3 python3-venv python3-setuptools
	libglib2.0-dev zlib1g-dev ccache git xz-utils ca-certificates"
PYTHON=/usr/bin/python3

APT=$QTOP/apt
APTO=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APT/parts"
      -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
      -o Debug::NoDropPrivs=true -o APT::Sandbox::User=root)
flog=$LOGS/qemu-fetch.log

# apt_private_update: the private package lists, once per run.
apt_updated=
apt_private_update() {
	[ -z "$apt_updated" ] || return 0
	mkdir -p "$APT/parts" "$APT/lists/partial" "$APT/cache/archives/partial"
	cat >"$APT/parts/qemu.sources" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	log "apt-get update (trixie sources, bookworm-backports; private lists)"
	apt-get "${APTO[@]}" update >>"$flog" 2>&1 ||
		die "apt-get update failed (log: $flog)"
	apt_updated=1
}

# pinned FILE SHA256: FILE exists and has that sha256.
pinned() {
	[ -f "$1" ] && echo "$2  $1" | sha256sum -c --status
}

# install_bpo PACKAGE VERSION SHA256 MIN: install PACKAGE VERSION from
# bookworm-backports (the .deb's sha256 pinned) unless a version >= MIN is
# installed.  The .deb is downloaded with the private lists and installed
# with the machine's, which resolve its dependencies.
install_bpo() {
	local pkg=$1 ver=$2 sha=$3 min=$4 deb v
	deb=$QTOP/dl/${pkg}_${ver}_all.deb
	v=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null |
	    sed -n 's/^install ok installed //p' || true)
	if [ -n "$v" ] && dpkg --compare-versions "$v" ge "$min"; then
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "QEMU 10.0 needs $pkg >= $min (have ${v:-none}):" \
		"install $pkg $ver from bookworm-backports"
	if ! pinned "$deb" "$sha"; then
		apt_private_update
		(cd "$QTOP/dl" && apt-get "${APTO[@]}" download "$pkg=$ver") >>"$flog" 2>&1 ||
			die "$pkg $ver is not downloadable from bookworm-backports (log: $flog)"
		pinned "$deb" "$sha" ||
			die "sha256 of $deb is $(sha256sum "$deb" | cut -d' ' -f1), pinned $sha"
	fi
	log "installing $pkg $ver from bookworm-backports"
	apt_install "$LOGS/apt-$pkg.log" "$deb" ||
		die "cannot install $deb (log: $LOGS/apt-$pkg.log)"
}

# fetch_src FILE SHA256: FILE of the pinned qemu source package into
# build/qemu/dl, checked.
fetch_src() {
	local f=$QTOP/dl/$1 uri
	pinned "$f" "$2" && return 0
	apt_private_update
	uri=$(apt-get "${APTO[@]}" source --print-uris "qemu=$QEMU_SRCPKG_VER" 2>>"$flog" |
	      awk -v f="$1" '$2 == f { gsub("\x27", "", $1); print $1 }')
	[ -n "$uri" ] || die "qemu $QEMU_SRCPKG_VER has no $1 here (log: $flog)"
	log "downloading $1"
	/usr/lib/apt/apt-helper download-file "$uri" "$f" "SHA256:$2" >>"$flog" 2>&1 ||
		{ rm -f "$f"; die "cannot download $uri (log: $flog)"; }
	pinned "$f" "$2" || die "sha256 of $f is $(sha256sum "$f" | cut -d' ' -f1), pinned $2"
}

do_fetch() {
	mkdir -p "$QTOP/dl"
	# shellcheck disable=SC2086
	install_deps $PKGS_QEMU
	# configure checks for meson >= 1.5 and pycotap >= 1.1 (its test
	# runner); bookworm has neither, and the +ds tarball no wheels.
	install_bpo meson "$MESON_VER" "$MESON_SHA256" 1.5
	install_bpo python3-pycotap "$PYCOTAP_VER" "$PYCOTAP_SHA256" 1.1
	if git -C "$QSRC" rev-parse -q --verify "refs/tags/$QEMU_TAG" >/dev/null 2>&1; then
		log "qemu tree present: $QSRC ($QEMU_TAG)"
		return 0
	fi
	local orig=$QTOP/dl/$QEMU_ORIG dtar=$QTOP/dl/$QEMU_DEBIAN
	fetch_src "$QEMU_ORIG" "$QEMU_ORIG_SHA256"
	fetch_src "$QEMU_DEBIAN" "$QEMU_DEBIAN_SHA256"
	log "extracting $QEMU_ORIG into $QSRC"
	rm -rf "$QSRC" "$QTOP/extract"
	mkdir -p "$QTOP/extract"
	tar -xJf "$orig" --no-same-owner -C "$QTOP/extract"
	[ "$(cat "$QTOP/extract/qemu-10.0.13/VERSION")" = 10.0.13 ] ||
		die "$QEMU_ORIG is not QEMU 10.0.13"
	mv "$QTOP/extract/qemu-10.0.13" "$QSRC"
	rmdir "$QTOP/extract"

	export GIT_AUTHOR_NAME="kvm-irqroute base" GIT_AUTHOR_EMAIL="base@kvm-irqroute.invalid"
	export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
	export GIT_AUTHOR_DATE="2026-12-05T12:00:00Z" GIT_COMMITTER_DATE="2026-12-05T12:00:00Z"
	git -C "$QSRC" init -q -b base
	git -C "$QSRC" config core.autocrlf false
	git -C "$QSRC" config gc.auto 0
	# -f: the tarball is pristine source, dot-files and ignored names too.
	git -C "$QSRC" add -A -f
	git -C "$QSRC" commit -q -m "QEMU 10.0.13 (qemu $QEMU_SRCPKG_VER, $QEMU_ORIG)"
	# The one Debian patch the build needs, as its own commit.
	tar -xJOf "$dtar" "debian/patches/$QEMU_DEBIAN_PATCH" >"$QTOP/dl/$QEMU_DEBIAN_PATCH"
	git -C "$QSRC" apply --index "$QTOP/dl/$QEMU_DEBIAN_PATCH"
	git -C "$QSRC" commit -q -m "pc-bios: Skip unpacking the edk2 blobs" -m \
"The +ds tarball has no edk2 blobs: apply Debian's
debian/patches/$QEMU_DEBIAN_PATCH ($QEMU_DEBIAN)."
	git -C "$QSRC" tag "$QEMU_TAG"
	log "qemu base committed: $(git -C "$QSRC" rev-parse HEAD) tagged $QEMU_TAG"
}

# worktree DIR REV: a worktree of $QSRC at REV (detached) in DIR.
worktree() {
	if [ ! -e "$1/.git" ]; then
		rm -rf "$1"
		git -C "$QSRC" worktree prune
		git -C "$QSRC" worktree add -q --detach "$1" "$2"
	fi
}

do_apply() {
	git -C "$QSRC" rev-parse -q --verify "refs/tags/$QEMU_TAG" >/dev/null ||
		die "no qemu tree: run scripts/qemu.sh fetch"
	worktree "$QTOP/stock/src" "$QEMU_TAG"
	if [ "$(git -C "$QTOP/stock/src" rev-parse HEAD)" != "$(git -C "$QSRC" rev-parse "$QEMU_TAG^{commit}")" ]; then
		git -C "$QTOP/stock/src" checkout -q --detach "$QEMU_TAG"
	fi
	worktree "$QTOP/patched/src" "$QEMU_TAG"
	cd "$QTOP/patched/src"
	git am --abort >/dev/null 2>&1 || true
	git checkout -q -B applied "$QEMU_TAG"
	git reset -q --hard "$QEMU_TAG"
	local n=0 list p
	if [ -f "$QEMU_SERIES/series" ]; then
		list=$(series_patches "$QEMU_SERIES") || exit 1
		while IFS= read -r p; do
			am_patch "$p" "$LOGS/qemu-apply.log"
			n=$((n + 1))
		done <<<"$list"
	else
		log "no $QEMU_SERIES/series: the patched tree is the stock one"
	fi
	log "applied $n patches onto $QEMU_TAG in $QTOP/patched/src (branch applied)"
}

# The configuration: what "make vmm-bench" needs and no more.  Optional
# features are off (--without-default-features) unless named; the x86
# machines and devices are the default ones.  -Werror is QEMU's default for
# a git tree.
QEMU_CONFIGURE=(--target-list=x86_64-softmmu --without-default-features
	--enable-kvm --disable-tcg --disable-docs --disable-tools --disable-user
	--disable-guest-agent --disable-gtk --disable-sdl --disable-vnc
	--disable-opengl --disable-spice --disable-slirp --disable-install-blobs
	--disable-download --disable-debug-info --disable-plugins)
QOBJ=obj
if [ "${QEMU_LEAN:-0}" = 1 ]; then
	QOBJ="obj-lean"
	QEMU_CONFIGURE+=(--without-default-devices --with-devices-x86_64=irqroute-check
		-Doptimization=0)
fi

# build_tree SRCDIR OBJDIR: configure (once, or when the options change)
# and build qemu-system-x86_64.
build_tree() {
	local src=$1 obj=$2 stamp want t0 t1 blog
	blog=$LOGS/qemu-build-$(basename "$(dirname "$obj")").log
	[ "$(dirname "$obj")" != "$QTOP" ] || blog=$LOGS/qemu-build-dev.log
	[ "$QOBJ" = obj ] || blog=${blog%.log}-lean.log
	export CCACHE_NOHASHDIR=1
	want=$(printf '%s\n' "${QEMU_CONFIGURE[@]}" "$PYTHON" "$(gcc -dumpfullversion)" |
		if [ "$QOBJ" = obj ]; then cat; else cat - "$TOP/configs/qemu-check-devices.mak"; fi |
		sha256sum | cut -d' ' -f1)
	stamp=$obj/.irqroute-configure.sha256
	# configure looks the devices up by name under the source tree (copied
	# only when it changed: meson regenerates when its mtime does).
	local mak=$src/configs/devices/x86_64-softmmu/irqroute-check.mak
	[ "$QOBJ" = obj ] || cmp -s "$TOP/configs/qemu-check-devices.mak" "$mak" ||
		cp "$TOP/configs/qemu-check-devices.mak" "$mak"
	t0=$(date +%s)
	if [ ! -f "$obj/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
		rm -rf "$obj"
		mkdir -p "$obj"
		log "configuring $src in $obj"
		(cd "$obj" && nice -n 5 "$src/configure" --cc="ccache gcc" --python="$PYTHON" \
			"${QEMU_CONFIGURE[@]}") >"$blog" 2>&1 ||
			die "configure failed (log: $blog)"
		echo "$want" >"$stamp"
	fi
	log "building qemu-system-x86_64 in $obj"
	nice -n 5 ninja -C "$obj" -j"$JOBS" qemu-system-x86_64 >>"$blog" 2>&1 ||
		die "qemu build failed (log: $blog)"
	t1=$(date +%s)
	echo "$(date -u +%FT%TZ) $obj $((t1 - t0)) s $(git -C "$src" describe --tags --always)" \
		>>"$LOGS/qemu-build-times.txt"
	log "$obj/qemu-system-x86_64 built in $((t1 - t0)) s"
}

do_build() {
	local t d
	for t in $QEMU_TREES; do
		# "dev": the repository's own checkout (the series' development).
		if [ "$t" = dev ]; then d=$QTOP; else d=$QTOP/$t; fi
		[ -f "$d/src/configure" ] || die "no $d/src: run scripts/qemu.sh apply"
		build_tree "$d/src" "$d/$QOBJ"
	done
}

steps=${*:-fetch apply build}
for s in $steps; do
	case $s in
	fetch) do_fetch ;;
	apply) do_apply ;;
	build) do_build ;;
	*) die "usage: $0 [fetch] [apply] [build]" ;;
	esac
done
