#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cross-build the KVM directories of the patched tree for other arches.
#
# Usage: scripts/check-cross.sh [PATCHED_SRC [TARGET...]]
#   default tree: build/src-patched; targets: arm64 ppc64le ppc64-e5500
#   riscv64 s390x
#
# Each target: Debian's cross gcc, "make defconfig" (or the named one) in
# build/obj-cross-TARGET, KVM switched on, then only the arch's KVM
# directory, which also builds the virt/kvm objects of that arch.  Objdirs
# are kept: a rerun only rebuilds what changed.
#   ppc64le      ppc64le_defconfig: Book3S HV/PR, XICS/XIVE
#   ppc64-e5500  corenet64_smp_defconfig + KVM_E500MC + KVM_MPIC: the only
#                way arch/powerpc/kvm/mpic.c (and virt/kvm/irqchip.c) build
#                on powerpc
# LoongArch (arch/loongarch/kvm/irqfd.c is in the series) is NOT built:
# Debian bookworm has no loongarch64 cross compiler.
# Prints "check: cross-TARGET ok|FAIL" per target.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$TOP/scripts/check-lib.sh"

src=$(readlink -f "${1:-$SRC_PATCHED}")
[ $# -gt 0 ] && shift
[ -f "$src/Makefile" ] && [ -d "$src/virt/kvm" ] || die "not a kernel tree: $src"
targets=("$@")
[ "${#targets[@]}" -gt 0 ] ||
	read -r -a targets <<<"${CROSS_TARGETS:-arm64 ppc64le ppc64-e5500 riscv64 s390x}"
need_kbuild_tools
cc_wrap=
command -v ccache >/dev/null 2>&1 && { cc_wrap="ccache "; export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}; }

# target: ARCH CROSS_COMPILE DEBIAN_PACKAGE DEFCONFIG DIR OPTIONS REQUIRED_OBJECTS
target_info() {
	case "$1" in
	arm64) echo "arm64 aarch64-linux-gnu- gcc-aarch64-linux-gnu defconfig" \
		"arch/arm64/kvm/ VIRTUALIZATION,KVM" \
		"virt/kvm/kvm_main.o,virt/kvm/eventfd.o,virt/kvm/irqchip.o,arch/arm64/kvm/vgic/vgic-irqfd.o" ;;
	ppc64le) echo "powerpc powerpc64le-linux-gnu- gcc-powerpc64le-linux-gnu ppc64le_defconfig" \
		"arch/powerpc/kvm/ VIRTUALIZATION,KVM_BOOK3S_64,KVM_BOOK3S_64_HV,KVM_XICS" \
		"virt/kvm/kvm_main.o,virt/kvm/eventfd.o,arch/powerpc/kvm/book3s_xics.o" ;;
	ppc64-e5500) echo "powerpc powerpc64-linux-gnu- gcc-powerpc64-linux-gnu corenet64_smp_defconfig" \
		"arch/powerpc/kvm/ VIRTUALIZATION,KVM_E500MC,KVM_MPIC" \
		"virt/kvm/kvm_main.o,virt/kvm/eventfd.o,virt/kvm/irqchip.o,arch/powerpc/kvm/mpic.o" ;;
	riscv64) echo "riscv riscv64-linux-gnu- gcc-riscv64-linux-gnu defconfig" \
		"arch/riscv/kvm/ VIRTUALIZATION,KVM" \
		"virt/kvm/kvm_main.o,virt/kvm/eventfd.o,virt/kvm/irqchip.o,arch/riscv/kvm/aia_device.o" ;;
	s390x) echo "s390 s390x-linux-gnu- gcc-s390x-linux-gnu defconfig" \
		"arch/s390/kvm/ VIRTUALIZATION,KVM" \
		"virt/kvm/kvm_main.o,virt/kvm/eventfd.o,virt/kvm/irqchip.o,arch/s390/kvm/s390/interrupt.o" ;;
	*) return 1 ;;
	esac
}

# An object that must exist after the build (virt/kvm objects land in
# OBJDIR/virt/kvm: they are built as arch/*/kvm/../../../virt/kvm/X.o).
have_obj() {
	[ -f "$1/$2" ]
}

start_all=$(date +%s)
for t in "${targets[@]}"; do
	read -r arch cross pkg defcfg dir opts req <<<"$(target_info "$t")" ||
		die "unknown target $t"
	name=cross-$t
	obj=$BUILD/obj-$name
	clog=$LOGS/check-$name.log
	: >"$clog"
	t0=$(date +%s)
	if ! ( need "${cross}gcc" "$pkg" ) >>"$clog" 2>&1; then
		echo "FAIL: $name: no cross compiler ${cross}gcc (Debian package $pkg) (log: $clog)" >&2
		result "$name" FAIL
		continue
	fi
	km=(make -C "$src" O="$obj" ARCH="$arch" CROSS_COMPILE="$cross"
	    CC="${cc_wrap}${cross}gcc" HOSTCC=gcc)
	# .config: regenerated only when this recipe changes.
	stamp=$obj/.irqroute-cross.sha256
	want=$(echo "$arch $cross $defcfg $opts $(${cross}gcc --version | head -n1)" | sha256sum | cut -d' ' -f1)
	if ! [ -f "$obj/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
		mkdir -p "$obj"
		rm -f "$stamp"
		cfg_ok=1
		{
			"${km[@]}" "$defcfg" &&
			"$src/scripts/config" --file "$obj/.config" $(tr , '\n' <<<"$opts" | sed 's/^/--enable /') &&
			"${km[@]}" olddefconfig
		} >>"$clog" 2>&1 || cfg_ok=0
		missing=
		for o in ${opts//,/ }; do
			grep -Eq "^CONFIG_$o=(y|m)" "$obj/.config" 2>/dev/null || missing+=" $o"
		done
		if [ "$cfg_ok" = 0 ] || [ -n "$missing" ]; then
			echo "FAIL: $name: cannot configure ($defcfg;${missing:+ not enabled:$missing}) (log: $clog)" >&2
			result "$name" FAIL
			continue
		fi
		echo "$want" >"$stamp"
	fi
	if ! "${km[@]}" -j"$JOBS" "$dir" >>"$clog" 2>&1; then
		echo "FAIL: $name: $dir does not build (log: $clog)" >&2
		{ grep -E 'error:|\*\*\*' "$clog" || true; } | head -n 5 | sed 's/^/  /' >&2
		result "$name" FAIL
		continue
	fi
	missing=
	for o in ${req//,/ }; do
		have_obj "$obj" "$o" || missing+=" $o"
	done
	if [ -n "$missing" ]; then
		echo "FAIL: $name: not built:$missing (log: $clog)" >&2
		result "$name" FAIL
		continue
	fi
	nwarn=$(grep -Ec '(virt/kvm|arch/[a-z0-9]+/kvm|include/linux/kvm)[^ ]*:[0-9]+:[0-9]+: warning:' "$clog" || true)
	log "$name: $dir ok in $(elapsed "$t0")s ($nwarn KVM warnings built this run)"
	result "$name" ok
done

log "LoongArch not built: Debian bookworm has no loongarch64 cross compiler"
if [ "$CHECK_FAILED" = 0 ]; then
	echo "cross: ${targets[*]} build their KVM directories ($(elapsed "$start_all")s); loongarch not built (no bookworm cross compiler)"
fi
finish
