#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make deb": installable Debian packages (bindeb-pkg) of the patched kernel,
# or with UNPATCHED=1 of the unpatched base built the same way, for an A/B on a
# real host (make host-bench on each).
#
# Usage: [KCONFIG=FILE] [UNPATCHED=1] scripts/deb.sh
#
# KCONFIG: a full .config is copied and olddefconfig'd; a fragment (no
# CONFIG_X86_64=y line, or under 1000 lines, e.g. configs/kvm.config) goes
# onto tinyconfig with merge_config.sh -m, then olddefconfig, as
# build-kernel.sh does.  Default: /boot/config-$(uname -r) when it exists,
# else Debian's config.amd64_none_amd64 from linux-config-7.3 $DEB_VER,
# fetched with fetch-base.sh's private apt lists (build/apt).  A full config
# is built with debug info off (no -dbg package, no pahole needed) and
# without Debian's certificate files (SYSTEM_TRUSTED_KEYS and
# SYSTEM_REVOCATION_KEYS emptied): same for base and patched.  The final
# .config must have KVM.
#
# Patched: build/src-patched, objdir build/deb-patched/obj, LOCALVERSION
# -irqroute.  UNPATCHED=1: build/src-base, build/deb-base/obj, -irqroute-base.
# bindeb-pkg (dpkg-buildpackage in the objdir) writes the packages to the
# objdir's parent, build/deb-{patched,base}/.  Each is checked with
# dpkg-deb --info; their paths and the install and reboot commands go to
# stdout.  Uses ccache when installed; one kernel build at a time (the lock
# of build-kernel.sh).  Log: build/logs/deb-{patched,base}.log.
set -euo pipefail
. "$(dirname "$0")/common.sh"

if [ "${UNPATCHED:-0}" = 1 ]; then
	variant=base src=$SRC_BASE lv=-irqroute-base
else
	variant=patched src=$SRC_PATCHED lv=-irqroute
fi
[ -f "$src/Makefile" ] || die "deb: no kernel tree in $src (make apply)"
pkgdir=$BUILD/deb-$variant
obj=$pkgdir/obj
blog=$LOGS/deb-$variant.log

need_kbuild_tools
need python3 python3
need openssl openssl
need dpkg-buildpackage dpkg-dev
need dh_testdir debhelper
need rsync rsync			# headers_install, for linux-libc-dev
need_file /sbin/depmod kmod		# by path: /sbin is not in a user's PATH
need flock util-linux

# Debian's own config for this kernel: linux-config-7.3, from the same
# trixie-backports lists fetch-base.sh fetched linux-source-7.3 with.
LINUX_CONFIG_SHA256=1161d8946bd74094857fc1950da809a14e1b3aafe4f3defbec83150520e3e82c
debian_config() {
	local aptdir=$BUILD/apt deb=$BUILD/dl/linux-config-7.3_${DEB_VER}_amd64.deb
	local cfg=$BUILD/dl/config.amd64_none_amd64
	if [ ! -f "$deb" ] || ! echo "$LINUX_CONFIG_SHA256  $deb" | sha256sum -c --status; then
		[ -d "$aptdir/lists" ] || die "deb: no $aptdir/lists (make base creates it), and no KCONFIG"
		(cd "$BUILD/dl" && apt-get -o Dir::Etc::SourceList=/dev/null \
			-o "Dir::Etc::SourceParts=$aptdir/parts" -o "Dir::State::Lists=$aptdir/lists" \
			-o "Dir::Cache=$aptdir/cache" -o Debug::NoDropPrivs=true -o APT::Sandbox::User=root \
			download "linux-config-7.3=$DEB_VER") >"$LOGS/deb-config.log" 2>&1 ||
			die "deb: linux-config-7.3 $DEB_VER is not downloadable (log: $LOGS/deb-config.log)"
	fi
	echo "$LINUX_CONFIG_SHA256  $deb" | sha256sum -c --status ||
		die "deb: sha256 of $deb is $(sha256sum "$deb" | cut -d' ' -f1), pinned $LINUX_CONFIG_SHA256"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO ./usr/src/linux-config-7.3/config.amd64_none_amd64.xz | xz -dc >"$cfg"
	echo "$cfg"
}

kconfig=${KCONFIG:-/boot/config-$(uname -r)}
[ -n "${KCONFIG:-}" ] || [ -f "$kconfig" ] || kconfig=$(debian_config)
[ -r "$kconfig" ] || die "deb: config not found: $kconfig"
kconfig=$(readlink -f "$kconfig")

cc=gcc
command -v ccache >/dev/null 2>&1 && cc="ccache gcc"
kmake=(make -C "$src" O="$obj" --no-print-directory ARCH=x86_64 CC="$cc" HOSTCC=gcc
	DEPMOD=/sbin/depmod LOCALVERSION="$lv")
mkdir -p "$obj"
exec 9>"$BUILD/.kernel-build.lock"
if ! flock -n 9; then
	log "another kernel build is running; waiting for it"
	flock 9
fi
start=$(date +%s)

# --- .config -----------------------------------------------------------------------
if grep -q '^CONFIG_X86_64=y$' "$kconfig" && [ "$(wc -l <"$kconfig")" -ge 1000 ]; then
	log "deb-$variant: $kconfig (full config) + olddefconfig"
	cp "$kconfig" "$obj/.config"
	"$src/scripts/config" --file "$obj/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
		-d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4 -d DEBUG_INFO_DWARF5 \
		-e DEBUG_INFO_NONE
	"${kmake[@]}" olddefconfig >"$blog" 2>&1 || die "deb: olddefconfig failed (log: $blog)"
else
	log "deb-$variant: tinyconfig + $kconfig (fragment) + olddefconfig"
	{
		"${kmake[@]}" tinyconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$kconfig" &&
		"${kmake[@]}" olddefconfig
	} >"$blog" 2>&1 || die "deb: config failed (log: $blog)"
fi
grep -Eq '^CONFIG_KVM=[ym]$' "$obj/.config" || die "deb: $obj/.config has no KVM (from $kconfig)"

# --- packages ------------------------------------------------------------------------
# DPKG_FLAGS=-d: the tools are checked above; Build-Depends also lists
# libdw-dev (gendwarfksyms, which needs debug info) and gcc-x86-64-linux-gnu
# (cross builds), which this native build without debug info does not use.
rm -f "$pkgdir"/*.deb "$pkgdir"/*.buildinfo "$pkgdir"/*.changes
log "deb-$variant: make -j$JOBS bindeb-pkg (log: $blog)"
"${kmake[@]}" -j"$JOBS" DPKG_FLAGS=-d bindeb-pkg >>"$blog" 2>&1 || {
	grep -E -i 'error|\*\*\*' "$blog" | tail -n 20 >&2
	die "deb: bindeb-pkg failed (log: $blog)"
}
krel=$(cat "$obj/include/config/kernel.release")
image=("$pkgdir/linux-image-${krel}_"*.deb)
headers=("$pkgdir/linux-headers-${krel}_"*.deb)
[ -f "${image[0]}" ] || die "deb: no linux-image-${krel}_*.deb in $pkgdir (log: $blog)"
for p in "$pkgdir"/*.deb; do
	dpkg-deb --info "$p" >/dev/null || die "deb: dpkg-deb --info rejects $p"
done
contents=$(dpkg-deb -c "${image[0]}")
[ "$(dpkg-deb -f "${image[0]}" Package)" = "linux-image-$krel" ] &&
	grep -q " \./boot/vmlinuz-$krel$" <<<"$contents" ||
	die "deb: ${image[0]} is not linux-image-$krel with /boot/vmlinuz-$krel"
log "deb-$variant: built in $(( $(date +%s) - start ))s"

[ -f "${headers[0]}" ] || headers=()
cat <<EOF
packages of $krel ($variant, config $kconfig):
$(printf '  %s\n' "$pkgdir"/*.deb)
install (not linux-libc-dev: it would replace the system's kernel headers for userspace):
  sudo dpkg -i ${image[0]}${headers:+ ${headers[0]}}
reboot into it once (GRUB; grub-reboot needs GRUB_DEFAULT=saved in /etc/default/grub, then update-grub):
  id=\$(sudo grep -o "gnulinux-$krel-advanced-[^']*" /boot/grub/grub.cfg | head -n1)
  sudo grub-reboot "gnulinux-advanced-\${id#gnulinux-$krel-advanced-}>\$id" && sudo reboot
or pick "Linux $krel" under "Advanced options" in the GRUB menu.
EOF
