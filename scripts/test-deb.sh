#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Test "make deb": build the patched kernel's packages from configs/kvm.config
# (small: tinyconfig + fragment, no modules) and check that dpkg-deb --info
# accepts the linux-image package.  A kernel build: run by hand, not by
# make check.
#
# Usage: scripts/test-deb.sh
# The last line is "check: deb ok|FAIL".
set -euo pipefail
. "$(dirname "$0")/common.sh"

verdict() {
	local rc=$? r=FAIL
	[ $rc -eq 0 ] && r=ok
	echo "check: deb $r"
}
trap verdict EXIT

out=$(make -C "$TOP" -s deb KCONFIG=configs/kvm.config)
echo "$out"
image=$(grep -o '/[^ ]*/linux-image-[^ ]*\.deb' <<<"$out" | grep -v -- '-dbg_' | head -n1 || true)
[ -n "$image" ] || die "test-deb: make deb named no linux-image package"
dpkg-deb --info "$image" >"$LOGS/test-deb-info.txt" || die "test-deb: dpkg-deb --info rejects $image"
grep -E '^ (Package|Version|Architecture):' "$LOGS/test-deb-info.txt"
