#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate vmm/qemu/ (the QEMU series: 0000-cover-letter.patch, the
# patches, series) from the commits v10.0.13-deb..series of build/qemu/src
# (scripts/qemu.sh makes the repository and the tag).
#
#   scripts/export-qemu.sh [REPO [BRANCH [OUTDIR]]]
#
# The cover letter's subject and text come from vmm/qemu/cover-letter.txt
# (first line: the subject), with @VMM_BENCH_TABLE@ replaced by the table
# of results/vmm-bench.md (scripts/vmm-cover-table.py) when that exists,
# else by a line saying that it was not measured; To/Cc from QEMU's
# get_maintainer.pl.  The output is stable:
# exporting an unchanged branch changes no byte.  The patches are made in a
# temporary folder first and replace the old ones only once all are made;
# the folder's other files (cover-letter.txt, PLAN-l2.md) are sources, kept.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# Only the repository's own config (no user format.*, diff.* or user.*).
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

QEMU_TAG=v10.0.13-deb
repo=$(realpath -m -- "${1:-$TOP/build/qemu/src}")
branch=${2:-series}
out=$(realpath -m -- "${3:-$TOP/vmm/qemu}")
prefix=${QEMU_SUBJECT_PREFIX:-RFC PATCH}
text=$TOP/vmm/qemu/cover-letter.txt
bench=$TOP/results/vmm-bench.md

git -C "$repo" rev-parse -q --verify "$branch" >/dev/null || die "no branch $branch in $repo"
git -C "$repo" rev-parse -q --verify "refs/tags/$QEMU_TAG" >/dev/null ||
	die "no tag $QEMU_TAG in $repo (scripts/qemu.sh fetch)"

mkdir -p "$out"
tmp=$(mktemp -d "$out/.export.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The cover letter's From: the last Signed-off-by: of the branch's tip.
id=$(git -C "$repo" log -1 --format='%(trailers:key=Signed-off-by,valueonly)' "$branch" |
	sed '/^$/d' | tail -n 1)
[[ $id =~ ^([^\<\>]*[^\<\> ])\ +\<([^\<\>]+)\>$ ]] ||
	die "$branch has no \"Signed-off-by: Name <email>\" for the cover letter's From:"
GIT_COMMITTER_NAME=${BASH_REMATCH[1]} GIT_COMMITTER_EMAIL=${BASH_REMATCH[2]} \
	git -C "$repo" -c core.abbrev=12 -c diff.noprefix=false -c diff.mnemonicPrefix=false \
	-c format.signature= -c format.coverFromDescription=none \
	format-patch -q --zero-commit --no-signature --cover-letter \
	--subject-prefix="$prefix" -o "$tmp" "$QEMU_TAG..$branch"
date=$(git -C "$repo" log --format='%at%x09%aD' "$QEMU_TAG..$branch" | sort -n | tail -n 1 | cut -f2)
mapfile -t patches < <(ls "$tmp"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-cover-letter.patch$')
gm=(perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats)
to=$(cd "$repo" && "${gm[@]}" --m --nor --nol "${patches[@]}" 2>/dev/null | paste -sd '\t')
cc=$(cd "$repo" && "${gm[@]}" --nom --r --l "${patches[@]}" 2>/dev/null | paste -sd '\t')
table=$tmp/vmm-bench-table.txt
[ -f "$bench" ] && python3 "$TOP/scripts/vmm-cover-table.py" "$bench" >"$table"
python3 "$TOP/scripts/fill-cover.py" "$tmp/0000-cover-letter.patch" "$text" "$date" "$table" "$to" "$cc" \
	@VMM_BENCH_TABLE@ "(not measured yet)"
(cd "$tmp" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-cover-letter.patch$') >"$tmp/series"

rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
mv -f "$tmp"/[0-9][0-9][0-9][0-9]-*.patch "$tmp/series" "$out/"
log "exported $(wc -l <"$out/series") patches from $branch ($repo) to ${out#"$TOP"/}"
