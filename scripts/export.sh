#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate patches/ and the overlay (every file the series touches, in its
# final form) from the commits $BASE_TAG..$BRANCH of a kernel repository.
# With BASE=6.12: regenerate backports/6.12/ (patches, series, cover letter
# from backports/6.12/cover-letter.txt), with no overlay.
# With RFC=large-tables: regenerate rfc/large-tables/ the same way from the
# commits dev..rfc (the RFC series, which applies on top of patches/).
#
#   scripts/export.sh [REPO [BRANCH [OUTDIR]]]
#
# Defaults: build/linux (build/6.12/linux), branch "dev", the project top
# (for 6.12, OUTDIR/backports/6.12 is written).  The output is stable:
# exporting an unchanged branch changes no byte.
set -euo pipefail
. "$(dirname "$0")/common.sh"

repo=${1:-$SRC}
RFC=${RFC:-}
branch=${2:-$([ -n "$RFC" ] && echo rfc || echo dev)}
out=${3:-$TOP}
from=$BASE_TAG
if [ -n "$RFC" ]; then
	pdir=$out/rfc/$RFC
	text=$TOP/rfc/$RFC/cover-letter.txt
	bench=$TOP/results/bench-rfc.md
	prefix="RFC PATCH"
	from=dev
elif [ "$BASE" = 7.3 ]; then
	pdir=$out/patches
	text=$TOP/cover-letter.txt
	bench=$TOP/results/bench.md
	prefix="PATCH v3"
else
	pdir=$out/backports/$BASE
	text=$TOP/backports/$BASE/cover-letter.txt
	bench=$TOP/results/bench-$BASE.md
	prefix="PATCH $BASE"
fi

git -C "$repo" rev-parse -q --verify "$branch" >/dev/null ||
	die "no branch $branch in $repo"
# The RFC applies on top of the series, whose local commits say nothing to a reader.
base=()
[ -n "$RFC" ] || base=(--base="$(git -C "$repo" rev-parse "$BASE_TAG^{commit}")")
tip=$(git -C "$repo" rev-parse "$branch")

rm -rf "$pdir.tmp"
mkdir -p "$pdir.tmp"
git -C "$repo" -c core.abbrev=12 -c diff.noprefix=false -c diff.mnemonicPrefix=false \
	-c format.signature= -c format.coverFromDescription=none \
	format-patch -q --zero-commit --no-signature --cover-letter \
	"${base[@]}" --subject-prefix="$prefix" -o "$pdir.tmp" "$from..$branch"

# The cover letter: subject and text from cover-letter.txt (first line is the
# subject), its date that of the tip commit, so that the output is stable.
# To: the maintainers, Cc: the reviewers and lists, that the tree's
# get_maintainer.pl names for the series (people in To: are not repeated).
cover=$pdir.tmp/0000-cover-letter.patch
date=$(git -C "$repo" log -1 --format=%aD "$tip")
gm=("$repo/scripts/get_maintainer.pl" --no-git --no-git-fallback --no-rolestats --no-fixes)
mapfile -t series < <(ls "$pdir".tmp/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-cover-letter.patch$')
to=$(cd "$repo" && "${gm[@]}" --m --nor --nol "${series[@]}" | paste -sd '\t')
cc=$(cd "$repo" && "${gm[@]}" --nom --r --l "${series[@]}" | paste -sd '\t')
# A backport goes to the stable list too.
[ "$BASE" = 7.3 ] || [ -n "$RFC" ] || cc+=$'\tstable@vger.kernel.org'
# And the people get_maintainer.pl does not name: authors whose work the
# series carries, the AMD IOMMU entry for the GA-log notifier's caller
# (cover-cc.txt, one address a line, # comments).
if [ "$BASE" = 7.3 ] && [ -z "$RFC" ] && [ -f "$TOP/cover-cc.txt" ]; then
	while IFS= read -r a; do
		case $a in '' | '#'*) continue ;; esac
		cc+=$'\t'$a
	done <"$TOP/cover-cc.txt"
fi
python3 - "$cover" "$text" "$date" "$bench" "$to" "$cc" <<'PY'
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

(cd "$pdir.tmp" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v "^0000-cover-letter.patch$") >"$pdir.tmp/series.new"
mv "$pdir.tmp/series.new" "$pdir.tmp/series"
if [ "$BASE" = 7.3 ] && [ -z "$RFC" ]; then
	rm -rf "$pdir"
	mv "$pdir.tmp" "$pdir"
else
	# backports/6.12/ and rfc/NAME/ also hold the cover letter's text and notes.
	mkdir -p "$pdir"
	rm -f "$pdir"/[0-9][0-9][0-9][0-9]-*.patch "$pdir/series"
	mv "$pdir.tmp"/* "$pdir/"
	rmdir "$pdir.tmp"
	log "exported $(wc -l <"$pdir/series") patches from $branch to ${pdir#"$out"/}"
	exit 0
fi

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
