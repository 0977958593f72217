#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Apply the patches of patches/series (BASE=6.12: backports/6.12/series),
# in order, with "git am"
# onto a fresh branch "applied" from the base tag, checked out in
# build/src-patched (build/6.12/src-patched).  Files the series does not touch
# keep their timestamps, so the next kernel build is incremental.
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$TOP/scripts/fetch-base.sh"

# Never rewrite the trees under a kernel build: git am passes through every
# prefix of the series, and a build reading the tree meanwhile would mix
# headers of different prefixes (a struct kvm of two layouts in one kernel).
# build-kernel.sh holds the same lock for a whole build.
mkdir -p "$BUILD"
exec 9>"$BUILD/.kernel-build.lock"
if ! flock -n 9; then
	log "a kernel build is running; waiting for it before applying"
	flock 9
fi

# The base tree, for the base kernel, beside the patched one.
if [ ! -f "$SRC_BASE/Makefile" ]; then
	add_worktree "$SRC_BASE" "$BASE_TAG"
elif [ "$(git -C "$SRC_BASE" rev-parse HEAD)" != "$(git -C "$SRC" rev-parse "$BASE_TAG^{commit}")" ]; then
	git -C "$SRC_BASE" checkout -q --detach "$BASE_TAG"
fi

if [ ! -d "$SRC_PATCHED/.git" ] && [ ! -f "$SRC_PATCHED/.git" ]; then
	add_worktree "$SRC_PATCHED" "$BASE_TAG"
fi

cd "$SRC_PATCHED"
git am --abort >/dev/null 2>&1 || true
git checkout -q -B applied "$BASE_TAG"
git reset -q --hard "$BASE_TAG"

n=0
list=$(series_patches "$PATCHDIR") || exit 1
mapfile -t patches <<<"$list"
for p in "${patches[@]}"; do
	am_patch "$p" "$LOGS/apply.log"
	n=$((n + 1))
done
log "applied $n patches onto $BASE_TAG in $SRC_PATCHED (branch applied)"
