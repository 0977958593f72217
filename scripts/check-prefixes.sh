#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build every prefix of the series, like rcutorture's kvm-series.sh.
#
# Usage: scripts/check-prefixes.sh [REPO [BASE_TAG [TIP]]]
#   defaults: build/src-patched, v7.3.4-deb, branch "applied"
#
# For commit 1, 1..2, ..., all of BASE_TAG..TIP: check the prefix out in the
# worktree build/wt-prefix and build bzImage (or $PREFIX_TARGETS) in
# build/obj-prefix with the fragments in $PREFIX_FRAGS, default
# configs/kvm.config + configs/kvm-prefix.config (KVM_XEN=y, KVM_WERROR=y,
# so a warning in arch/x86/kvm or virt/kvm fails the build).  The first
# prefix starts from the objects of $OBJ_BASE: with the same config (as
# "make check" runs it: kvm-debug.config has KVM_XEN and -Werror too), it
# compiles only what the first commit changes.  Only the files the next
# commit changes get new timestamps, so every build after the first is
# incremental.  Prints "check: prefix-NN-<sha> ok|FAIL" per prefix.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$TOP/scripts/check-lib.sh"

repo=$(readlink -f "${1:-$SRC_PATCHED}")
base=${2:-$BASE_TAG}
tip=${3:-applied}
wt=$BUILD/wt-prefix
obj=$BUILD/obj-prefix
read -r -a frags <<<"${PREFIX_FRAGS:-$TOP/configs/kvm.config $TOP/configs/kvm-prefix.config}"

git -C "$repo" rev-parse -q --verify "$base^{commit}" >/dev/null || die "no such base: $base in $repo"
git -C "$repo" rev-parse -q --verify "$tip^{commit}" >/dev/null || die "no such tip: $tip in $repo"
mapfile -t commits < <(git -C "$repo" rev-list --reverse "$base..$tip")
[ "${#commits[@]}" -gt 0 ] || die "empty series $base..$tip in $repo"

# A detached worktree of $repo's repository (keeps its checkout between runs).
if ! git -C "$wt" rev-parse --git-dir >/dev/null 2>&1 ||
   [ "$(git -C "$wt" rev-parse --git-common-dir | xargs readlink -f)" != \
     "$(cd "$repo" && git rev-parse --git-common-dir | xargs readlink -f)" ]; then
	rm -rf "$wt"
	git -C "$repo" worktree prune
	git -C "$repo" worktree add -q --detach "$wt" "$base"
fi

start_all=$(date +%s)
n=0
for c in "${commits[@]}"; do
	n=$((n + 1))
	name=$(printf 'prefix-%02d-%s' "$n" "$(git -C "$repo" rev-parse --short=12 "$c")")
	subj=$(git -C "$repo" log -1 --format=%s "$c")
	plog=$LOGS/check-$name.log
	t0=$(date +%s)
	if ! git -C "$wt" checkout -q --detach "$c" >"$plog" 2>&1; then
		echo "FAIL: $name: cannot check out $c (log: $plog)" >&2
		result "$name" FAIL
		continue
	fi
	# The first prefix starts from the base kernel's objects.
	if SEED_FROM=$OBJ_BASE KBUILD_TARGETS=${PREFIX_TARGETS:-} \
	   "$TOP/scripts/build-kernel.sh" "$wt" "$obj" "${frags[@]}" >>"$plog" 2>&1; then
		log "$name ok ($(elapsed "$t0")s): $subj"
		result "$name" ok
	else
		echo "FAIL: $name does not build: $subj (log: $plog, $LOGS/build-obj-prefix.log)" >&2
		cp "$LOGS/build-obj-prefix.log" "$plog.build" 2>/dev/null || true
		{ grep -E 'error|\*\*\*' "$LOGS/build-obj-prefix.log" || true; } | head -n 5 | sed 's/^/  /' >&2
		result "$name" FAIL
	fi
done

if [ "$CHECK_FAILED" = 0 ]; then
	echo "prefixes: all $n prefixes of $base..$tip build ($(elapsed "$start_all")s)"
else
	echo "FAIL: some prefixes of $base..$tip do not build (log: $LOGS/check-prefix-*.log)" >&2
fi
finish
