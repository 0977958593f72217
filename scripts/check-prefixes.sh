#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build every prefix of the series, like rcutorture's kvm-series.sh.
#
# Usage: scripts/check-prefixes.sh [REPO [BASE_TAG [TIP]]]
#   defaults: build/src-patched, v7.3.4-deb, branch "applied"
#
# For commit 1, 1..2, ..., all of BASE_TAG..TIP: check the prefix out in
# REPO itself, when its checkout is clean (REPO goes back to the branch or
# commit it was on at the end: a second kernel checkout would cost 1.8 GB of
# disk), else in the worktree build/wt-prefix, and build bzImage (or
# $PREFIX_TARGETS) in
# build/obj-prefix with the fragments in $PREFIX_FRAGS, default
# configs/kvm.config + configs/kvm-prefix.config (KVM_XEN=y, KVM_WERROR=y,
# so a warning in arch/x86/kvm or virt/kvm fails the build).  The first
# prefix starts from the objects of $OBJ_BASE: with the same config (as
# "make check" runs it: kvm-debug.config has KVM_XEN and -Werror too), it
# compiles only what the first commit changes.  Only the files the next
# commit changes get new timestamps, so every build after the first is
# incremental.  A commit that changes only tools/ is checked out but not
# built: the kernel is the previous prefix's.  Prints
# "check: prefix-NN-<sha> ok|FAIL" per prefix built.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$TOP/scripts/check-lib.sh"

repo=$(readlink -f "${1:-$SRC_PATCHED}")
base=${2:-$BASE_TAG}
tip=${3:-applied}
obj=$BUILD/obj-prefix
read -r -a frags <<<"${PREFIX_FRAGS:-$TOP/configs/kvm.config $TOP/configs/kvm-prefix.config}"

git -C "$repo" rev-parse -q --verify "$base^{commit}" >/dev/null || die "no such base: $base in $repo"
git -C "$repo" rev-parse -q --verify "$tip^{commit}" >/dev/null || die "no such tip: $tip in $repo"
mapfile -t commits < <(git -C "$repo" rev-list --reverse "$base..$tip")
[ "${#commits[@]}" -gt 0 ] || die "empty series $base..$tip in $repo"

# REPO's own checkout when it is clean, else build/wt-prefix, a detached
# worktree of REPO's repository (kept between runs).
restore=
if git -C "$repo" diff --quiet HEAD 2>/dev/null &&
   [ -z "$(git -C "$repo" ls-files -o --exclude-standard | head -n 1)" ]; then
	wt=$repo
	restore=$(git -C "$repo" symbolic-ref -q --short HEAD) ||
		restore=$(git -C "$repo" rev-parse HEAD)
	# shellcheck disable=SC2064 # expand now: put REPO back however we exit
	trap "git -C '$repo' checkout -q '$restore' || echo 'FAIL: cannot put $repo back on $restore' >&2" EXIT
else
	wt=$BUILD/wt-prefix
	if ! git -C "$wt" rev-parse --git-dir >/dev/null 2>&1 ||
	   [ "$(git -C "$wt" rev-parse --git-common-dir | xargs readlink -f)" != \
	     "$(cd "$repo" && git rev-parse --git-common-dir | xargs readlink -f)" ]; then
		rm -rf "$wt"
		git -C "$repo" worktree prune
		git -C "$repo" worktree add -q --detach "$wt" "$base"
	fi
fi

start_all=$(date +%s)
n=0
prev_ok=0
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
	# A commit that changes only tools/ (the selftests) leaves the kernel
	# as the previous prefix had it: that build stands.
	if [ "$prev_ok" = 1 ] &&
	   [ -z "$(git -C "$repo" diff-tree --no-commit-id --name-only -r "$c" -- . ':!tools/')" ]; then
		log "$name: changes only tools/, the previous prefix's kernel build stands: $subj"
		continue
	fi
	prev_ok=0
	# The first prefix starts from the base kernel's objects.
	if SEED_FROM=$OBJ_BASE KBUILD_TARGETS=${PREFIX_TARGETS:-} \
	   "$TOP/scripts/build-kernel.sh" "$wt" "$obj" "${frags[@]}" >>"$plog" 2>&1; then
		log "$name ok ($(elapsed "$t0")s): $subj"
		result "$name" ok
		prev_ok=1
	else
		echo "FAIL: $name does not build: $subj (log: $plog, $LOGS/build-obj-prefix.log)" >&2
		cp "$LOGS/build-obj-prefix.log" "$plog.build" 2>/dev/null || true
		{ grep -E 'error|\*\*\*' "$LOGS/build-obj-prefix.log" || true; } | head -n 5 | sed 's/^/  /' >&2
		result "$name" FAIL
	fi
done

if [ "$CHECK_FAILED" = 0 ]; then
	echo "prefixes: all $n prefixes of $base..$tip build ($(elapsed "$start_all")s; a prefix that changes only tools/ is not rebuilt)"
else
	echo "FAIL: some prefixes of $base..$tip do not build (log: $LOGS/check-prefix-*.log)" >&2
fi
finish
