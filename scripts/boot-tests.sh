#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the patched kernel running tests/check.list and print the verdict
# (the console excerpt of any badness).  "make boot".
#
#   scripts/boot-tests.sh [LIST]
set -euo pipefail
. "$(dirname "$0")/common.sh"

list=${1:-$TOP/tests/check.list}

# shellcheck disable=SC2086
install_deps $PKGS_KBUILD $PKGS_BOOT
"$TOP/scripts/apply.sh"
"$TOP/scripts/build-kernel.sh" "$SRC_PATCHED" "$BUILD/obj-patched" "$TOP/configs/kvm.config" >/dev/null
"$TOP/scripts/build-selftests.sh" "$SRC_PATCHED" "$BUILD/st-patched" >/dev/null
"$TOP/scripts/mkinitrd.sh" "$BUILD/boot.cpio.gz" "$list" "$BUILD/st-patched" >/dev/null
console=$LOGS/console-boot.log
rc=0
"$TOP/scripts/boot.sh" "$BUILD/obj-patched/arch/x86/boot/bzImage" "$BUILD/boot.cpio.gz" \
	"$console" "${BOOT_TIMEOUT:-1500}" || rc=$?
"$TOP/scripts/verdict.sh" "$console" || rc=1
exit $rc
