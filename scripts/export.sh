#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate patches/ and the overlay (every file the series touches, in its
# final form) from the commits $BASE_TAG..$BRANCH of a kernel repository.
# With BASE=6.12: regenerate backports/6.12/ the same way, with no overlay.
# With RFC=large-tables: regenerate rfc/large-tables/ (one posting, no
# subfolder) from the commits dev..rfc, which apply on top of patches/.
#
#   scripts/export.sh [REPO [BRANCH [OUTDIR]]]
#
# patches/ (and backports/6.12/) hold two postings, one folder each, for two
# branches: avic/, the leading commits whose subject starts with "KVM: SVM:",
# and irq-routing/, the rest.  Each folder has its cover letter
# (0000-cover-letter.patch, made from the folder's cover-letter.txt, whose
# first line is the subject; cc.txt adds Cc: addresses, one a line), its
# patches and a series file; the top series file lists both, in order, for
# one "git am" of the whole stack.
#
# Defaults: build/linux (build/6.12/linux), branch "dev" ("rfc" with RFC=),
# the project top.  The output is stable: exporting an unchanged branch
# changes no byte, on any machine (no user or system git config is read; the
# cover letters are from the identity the postings are signed off with).  It
# is written to a temporary folder in OUTDIR first, and replaces the old
# output only once all of it is made.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# Only the repository's own config: no ~/.gitconfig or /etc/gitconfig (their
# format.*, diff.*, user.* would change the output).
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

repo=$(realpath -m -- "${1:-$SRC}")
RFC=${RFC:-}
branch=${2:-$([ -n "$RFC" ] && echo rfc || echo dev)}
out=$(realpath -m -- "${3:-$TOP}")
if [ -n "$RFC" ]; then
	rel=rfc/$RFC
	prefix="RFC PATCH v2"
	# The cover letter's table: the cells that decide, of results/bench-rfc.md.
	bench=$BUILD/bench-rfc/cover-table.md; mkdir -p "$BUILD/bench-rfc"
	grep -E '^(\| cell |\|---|\| (full-r(64|4096|16384)|grow-r4096|one-r16384|vmm-(f-)?(full|partial)-r16384|(full|one)-f-r(4096|16384)|vmm-f-full-r4096|mem-r(4096|65536)) \|)' \
		"$TOP/results/bench-rfc.md" >"$bench" 2>/dev/null || rm -f "$bench"
elif [ "$BASE" = 7.3 ]; then
	rel=patches
	prefix="PATCH v4"
	bench=$TOP/results/bench.md
else
	rel=backports/$BASE
	prefix="PATCH $BASE"
	bench=$TOP/results/bench-$BASE.md
fi
pdir=$out/$rel

git -C "$repo" rev-parse -q --verify "$branch" >/dev/null ||
	die "no branch $branch in $repo"
tip=$(git -C "$repo" rev-parse "$branch")
gm=("$repo/scripts/get_maintainer.pl" --no-git --no-git-fallback --no-rolestats --no-fixes)

# Everything is made in $tmp ($tmp/$rel: the patches and series files,
# $tmp/overlay: the overlay), then moved into $out by install_files.
mkdir -p "$out"
tmp=$(mktemp -d "$out/.export.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ident_re='^([^<>]*[^<> ]) +<([^<>]+)>$'	# Name <email>

# export_posting DIR FROM TO TEXT CC: format-patch FROM..TO into DIR, with
# the cover letter's subject and text from TEXT and extra Cc: from CC.
export_posting() {
	local dir=$1 from=$2 to_rev=$3 text=$4 ccfile=$5 date to cc a id
	local -a series
	mkdir -p "$dir"
	# The cover letter's From: the last Signed-off-by: of the posting's
	# last commit (the repository's identity), not this machine's user nor
	# the committer (apply.sh's "git am" commits as "apply").  The patches'
	# From: stays their authors' (no --from).
	id=$(git -C "$repo" log -1 --format='%(trailers:key=Signed-off-by,valueonly)' "$to_rev" |
		sed '/^$/d' | tail -n 1)
	[[ $id =~ $ident_re ]] ||
		die "$to_rev has no \"Signed-off-by: Name <email>\" for the cover letter's From:"
	GIT_COMMITTER_NAME=${BASH_REMATCH[1]} GIT_COMMITTER_EMAIL=${BASH_REMATCH[2]} \
		git -C "$repo" -c core.abbrev=12 -c diff.noprefix=false -c diff.mnemonicPrefix=false \
		-c format.signature= -c format.coverFromDescription=none \
		format-patch -q --zero-commit --no-signature --cover-letter \
		--subject-prefix="$prefix" -o "$dir" "$from..$to_rev"
	# The cover letter's date: the newest author date of the posting.
	date=$(git -C "$repo" log --format='%at%x09%aD' "$from..$to_rev" | sort -n | tail -n 1 | cut -f2)
	mapfile -t series < <(ls "$dir"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-cover-letter.patch$')
	# To: the maintainers, Cc: the reviewers and lists, that the tree's
	# get_maintainer.pl names (people in To: are not repeated); a backport
	# goes to the stable list too; then CC's addresses.
	to=$(cd "$repo" && "${gm[@]}" --m --nor --nol "${series[@]}" | paste -sd '\t')
	cc=$(cd "$repo" && "${gm[@]}" --nom --r --l "${series[@]}" | paste -sd '\t')
	[ "$BASE" = 7.3 ] || [ -n "$RFC" ] || cc+=$'\tstable@vger.kernel.org'
	if [ -f "$ccfile" ]; then
		while IFS= read -r a; do
			case $a in '' | '#'*) continue ;; esac
			cc+=$'\t'$a
		done <"$ccfile"
	fi
	python3 "$TOP/scripts/fill-cover.py" "$dir/0000-cover-letter.patch" "$text" "$date" "$bench" "$to" "$cc" \
		@BENCH_TABLE@ "(make bench has not been run)"
	(cd "$dir" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v "^0000-cover-letter.patch$") >"$dir/series"
}

# install_files SUB: replace the patches and series file of $out/SUB by
# those made in $tmp/SUB (the folder's other files are sources: kept).
install_files() {
	mkdir -p "$out/$1"
	rm -f "$out/$1"/[0-9][0-9][0-9][0-9]-*.patch
	mv -f "$tmp/$1"/[0-9][0-9][0-9][0-9]-*.patch "$tmp/$1/series" "$out/$1/"
}

if [ -n "$RFC" ]; then
	export_posting "$tmp/$rel" dev "$branch" "$TOP/$rel/cover-letter.txt" /dev/null
	install_files "$rel"
	log "exported $(wc -l <"$pdir/series") patches from $branch to $rel"
	exit 0
fi

# The AVIC posting: the leading "KVM: SVM:" commits.
mapfile -t commits < <(git -C "$repo" rev-list --reverse "$BASE_TAG..$branch")
split=$BASE_TAG
for c in "${commits[@]}"; do
	case $(git -C "$repo" log -1 --format=%s "$c") in
	"KVM: SVM: "*) split=$c ;;
	*) break ;;
	esac
done
[ "$split" != "$BASE_TAG" ] && [ "$split" != "$tip" ] ||
	die "$BASE_TAG..$branch does not start with KVM: SVM: commits followed by others"

mkdir -p "$tmp/$rel"
: >"$tmp/$rel/series"
for posting in avic irq-routing; do
	if [ $posting = avic ]; then range=("$BASE_TAG" "$split"); else range=("$split" "$tip"); fi
	export_posting "$tmp/$rel/$posting" "${range[@]}" "$TOP/$rel/$posting/cover-letter.txt" \
		"$TOP/$rel/$posting/cc.txt"
	sed "s|^|$posting/|" "$tmp/$rel/$posting/series" >>"$tmp/$rel/series"
done

# The overlay: the final form of every file the series touches.
if [ "$BASE" = 7.3 ]; then
	touched=$(git -C "$repo" diff --name-only "$BASE_TAG" "$tip")
	for f in $touched; do
		mkdir -p "$tmp/overlay/$(dirname "$f")"
		git -C "$repo" show "$tip:$f" >"$tmp/overlay/$f"
	done
	echo "$touched" >"$tmp/overlay-files"
fi

# All made: replace the old output.
for posting in avic irq-routing; do
	install_files "$rel/$posting"
done
mv -f "$tmp/$rel/series" "$pdir/series"
if [ "$BASE" != 7.3 ]; then
	log "exported $(wc -l <"$pdir/series") patches from $branch to $rel"
	exit 0
fi
old=$(cat "$out/.overlay-files" 2>/dev/null || true)
for f in $old; do
	rm -f "$out/$f"
done
for f in $touched; do
	mkdir -p "$out/$(dirname "$f")"
	mv -f "$tmp/overlay/$f" "$out/$f"
done
mv -f "$tmp/overlay-files" "$out/.overlay-files"
log "exported $(wc -l <"$out/patches/series") patches and $(echo "$touched" | wc -w) overlay files from $branch"
