#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The repository must agree with "git am" of patches/series (BASE=6.12:
# backports/6.12/series):
#  - re-exporting the applied branch reproduces patches/ byte for byte;
#  - every overlay file equals the applied tree's, and the overlay lists
#    exactly the files the series touches.
# Run scripts/apply.sh first.
set -euo pipefail
. "$(dirname "$0")/common.sh"

git -C "$SRC_PATCHED" rev-parse -q --verify applied >/dev/null ||
	die "no applied branch: run scripts/apply.sh"

tmp=$BUILD/overlay-check
rm -rf "$tmp"
mkdir -p "$tmp"
TOP_SAVE=$TOP
"$TOP/scripts/export.sh" "$SRC_PATCHED" applied "$tmp" >"$LOGS/overlay-export.log" 2>&1 || {
	cat "$LOGS/overlay-export.log" >&2
	die "cannot re-export the applied series (log: $LOGS/overlay-export.log)"
}

# The 6.12 backport has patches and a series file, no overlay.
if [ "$BASE" != 7.3 ]; then
	d=backports/$BASE
	if ! diff -r -q -x cover-letter.txt -x cc.txt -x README.md "$TOP/$d" "$tmp/$d" >"$LOGS/overlay-check.log" 2>&1; then
		cat "$LOGS/overlay-check.log" >&2
		die "$d differs from a re-export of the applied series (run make export BASE=$BASE)"
	fi
	log "$d consistent: $(wc -l <"$TOP/$d/series") patches"
	exit 0
fi

bad=0
if ! diff -r -q -x cover-letter.txt -x cc.txt "$TOP_SAVE/patches" "$tmp/patches" >"$LOGS/overlay-check.log" 2>&1; then
	echo "patches/ differs from a re-export of the applied series:" >&2
	cat "$LOGS/overlay-check.log" >&2
	bad=1
fi
if ! cmp -s "$TOP_SAVE/.overlay-files" "$tmp/.overlay-files"; then
	echo "overlay file list differs from the files the series touches" >&2
	diff "$TOP_SAVE/.overlay-files" "$tmp/.overlay-files" >&2 || true
	bad=1
fi
for f in $(cat "$tmp/.overlay-files"); do
	if ! cmp -s "$TOP_SAVE/$f" "$SRC_PATCHED/$f"; then
		echo "overlay drift: $f differs from the applied tree" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] || die "overlay consistency check failed (run make export from the tree)"
log "overlay consistent: $(wc -l <"$TOP_SAVE/patches/series") patches, $(wc -w <"$tmp/.overlay-files") files"
