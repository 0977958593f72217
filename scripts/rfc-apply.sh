#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Apply the RFC series rfc/NAME/ (default large-tables), in the order of its
# series file, with "git am" onto the branch "applied" (patches/ on the
# base, made by scripts/apply.sh): branch "rfc-applied", checked out in
# build/src-rfc.  Files the RFC does not touch keep their timestamps.
#
#   scripts/rfc-apply.sh [NAME]
set -euo pipefail
. "$(dirname "$0")/common.sh"

pdir=$TOP/rfc/${1:-large-tables}
list=$(series_patches "$pdir") || exit 1
git -C "$SRC" rev-parse -q --verify applied >/dev/null || "$TOP/scripts/apply.sh"

exec 9>"$BUILD/.kernel-build.lock"
flock 9
if [ ! -d "$SRC_RFC/.git" ] && [ ! -f "$SRC_RFC/.git" ]; then
	add_worktree "$SRC_RFC" applied
fi
cd "$SRC_RFC"
git am --abort >/dev/null 2>&1 || true
git checkout -q -B rfc-applied applied
git reset -q --hard applied
n=0
mapfile -t patches <<<"$list"
for p in "${patches[@]}"; do
	am_patch "$p" "$LOGS/rfc-apply.log"
	n=$((n + 1))
done
log "applied $n RFC patches onto applied in $SRC_RFC (branch rfc-applied)"
