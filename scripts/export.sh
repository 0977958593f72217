#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate patches/ and the overlay (every file the series touches, in its
# final form) from the commits $BASE_TAG..$BRANCH of a kernel repository.
#
#   scripts/export.sh [REPO [BRANCH [OUTDIR]]]
#
# Defaults: build/linux, branch "dev", the project top.  The output is stable:
# exporting an unchanged branch changes no byte.
set -euo pipefail
. "$(dirname "$0")/common.sh"

repo=${1:-$SRC}
branch=${2:-dev}
out=${3:-$TOP}

git -C "$repo" rev-parse -q --verify "$branch" >/dev/null ||
	die "no branch $branch in $repo"
base=$(git -C "$repo" rev-parse "$BASE_TAG^{commit}")
tip=$(git -C "$repo" rev-parse "$branch")

rm -rf "$out/patches.tmp"
mkdir -p "$out/patches.tmp"
git -C "$repo" -c core.abbrev=12 -c diff.noprefix=false -c diff.mnemonicPrefix=false \
	-c format.signature= -c format.coverFromDescription=none \
	format-patch -q --zero-commit --no-signature --cover-letter \
	--base="$base" --subject-prefix="PATCH v2" -o "$out/patches.tmp" \
	"$BASE_TAG..$branch"

# The cover letter: subject and text from cover-letter.txt (first line is the
# subject), its date that of the tip commit, so that the output is stable.
# To: the maintainers, Cc: the reviewers and lists, that the tree's
# get_maintainer.pl names for the series (people in To: are not repeated).
cover=$out/patches.tmp/0000-cover-letter.patch
date=$(git -C "$repo" log -1 --format=%aD "$tip")
gm=("$repo/scripts/get_maintainer.pl" --no-git --no-git-fallback --no-rolestats --no-fixes)
mapfile -t series < <(ls "$out"/patches.tmp/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-cover-letter.patch$')
to=$(cd "$repo" && "${gm[@]}" --m --nor --nol "${series[@]}" | paste -sd '\t')
cc=$(cd "$repo" && "${gm[@]}" --nom --r --l "${series[@]}" | paste -sd '\t')
python3 - "$cover" "$TOP/cover-letter.txt" "$date" "$TOP/results/bench.md" "$to" "$cc" <<'PY'
import sys, os, re
cover, text, date, bench, to, cc = sys.argv[1:7]
s = open(cover).read()
body = open(text).read() if os.path.exists(text) else "*** SUBJECT HERE ***\n\n*** BLURB HERE ***\n"
subject, _, blurb = body.partition("\n")
blurb = blurb.strip("\n")
table = open(bench).read().strip("\n") if os.path.exists(bench) else "(make bench has not been run)"
blurb = blurb.replace("@BENCH_TABLE@", table)
s = s.replace("*** SUBJECT HERE ***", subject.strip())
s = s.replace("*** BLURB HERE ***", blurb)
s = re.sub(r"^Date: .*$", "Date: " + date, s, count=1, flags=re.M)
to = [a for a in to.split("\t") if a]
cc = [a for a in cc.split("\t") if a and a not in to]
hdr = ""
if to:
    hdr += "To: " + ",\n    ".join(to) + "\n"
if cc:
    hdr += "Cc: " + ",\n    ".join(cc) + "\n"
s = re.sub(r"^(Subject: .*\n)", lambda m: m.group(1) + hdr, s, count=1, flags=re.M)
open(cover, "w").write(s)
PY

(cd "$out/patches.tmp" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v "^0000-cover-letter.patch$") >"$out/patches.tmp/series.new"
mv "$out/patches.tmp/series.new" "$out/patches.tmp/series"
rm -rf "$out/patches"
mv "$out/patches.tmp" "$out/patches"

# The overlay: the final form of every file the series touches.
touched=$(git -C "$repo" diff --name-only "$BASE_TAG" "$tip")
old=$(cat "$out/.overlay-files" 2>/dev/null || true)
for f in $old; do
	rm -f "$out/$f"
done
for f in $touched; do
	mkdir -p "$out/$(dirname "$f")"
	git -C "$repo" show "$tip:$f" >"$out/$f"
done
echo "$touched" >"$out/.overlay-files"
log "exported $(wc -l <"$out/patches/series") patches and $(echo "$touched" | wc -w) overlay files from $branch"
