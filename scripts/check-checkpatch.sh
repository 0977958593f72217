#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --strict on every patch of the series.
#
# Usage: scripts/check-checkpatch.sh [PATCHDIR [BASE_SRC]]
#   defaults: patches/, build/src-base (checkpatch.pl is taken from there)
#
# No errors, warnings or checks are allowed, except one warning per patch:
# "added, moved or deleted file(s), does MAINTAINERS need updating?" on a
# patch whose added/removed/renamed files are all under
# tools/testing/selftests/kvm/ (covered by the KVM entry of MAINTAINERS).
# The SPDX check runs (Debian's python3 with python3-ply, python3-git), and
# --codespell when Debian's codespell installs.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$TOP/scripts/check-lib.sh"

pdir=$(readlink -f "${1:-$TOP/patches}")
base=$(readlink -f "${2:-$SRC_BASE}")
cp_pl=$base/scripts/checkpatch.pl
[ -x "$cp_pl" ] || die "no $cp_pl (run scripts/fetch-base.sh)"
[ -d "$pdir" ] || die "no patch directory $pdir"

need perl perl
need_file /usr/bin/python3 python3
need_file /usr/lib/python3/dist-packages/ply/__init__.py python3-ply
need_file /usr/lib/python3/dist-packages/git/__init__.py python3-git
# checkpatch runs "python3" for spdxcheck.py and codespell: Debian's one.
export PATH=/usr/bin:$PATH

spell=()
if ( need codespell codespell ) >/dev/null 2>&1; then
	spell=(--codespell)
else
	log "codespell not installable: running without --codespell"
fi

MAINT_MSG='added, moved or deleted file(s), does MAINTAINERS need updating?'

# files_ok PATCH: every added/deleted/renamed file is under selftests/kvm.
files_ok() {
	awk '
		/^diff --git / { a = $3; b = $4; sub(/^a\//, "", a); sub(/^b\//, "", b); next }
		/^(new|deleted) file mode/ || /^rename (from|to) / { print a; print b }
	' "$1" | sort -u | grep -qv '^tools/testing/selftests/kvm/' && return 1
	return 0
}

start=$(date +%s)
n=0
list=$(series_patches "$pdir") || exit 1
mapfile -t patches <<<"$list"
for p in "${patches[@]}"; do
	n=$((n + 1))
	# checkpatch-NNNN, or checkpatch-POSTING-NNNN for a patch in a subfolder.
	sub=$(dirname "${p#"$pdir"/}")
	[ "$sub" = . ] && sub= || sub=$sub-
	name=checkpatch-$sub$(basename "$p" .patch | cut -c1-4)
	plog=$LOGS/$name.log
	# checkpatch's exit code is ignored: the report is parsed instead.
	# UNKNOWN_COMMIT_ID: the base is a tarball with no upstream history,
	# so checkpatch cannot look up the commit a Fixes: tag names; that
	# id was checked against upstream by hand (patch 1's Fixes:).
	(cd "$base" && ./scripts/checkpatch.pl --strict --no-summary --color=never \
		--ignore UNKNOWN_COMMIT_ID --showfile "${spell[@]}" "$p") >"$plog" 2>&1 || true
	if grep -q 'No codespell typos will be found\|spdxcheck.*Traceback\|^Traceback' "$plog"; then
		echo "FAIL: $(basename "$p"): checkpatch tool problem (log: $plog)" >&2
		result "$name" FAIL
		continue
	fi
	# Diagnostic lines: "FILE:LINE: ERROR|WARNING|CHECK: ..." with --showfile
	# (":LINE: ..." for the commit message), "ERROR|WARNING|CHECK: ..." for
	# the ones about the patch as a whole.
	diags=$(grep -E '^([^ ]*:[0-9]+: )?(ERROR|WARNING|CHECK):' "$plog" || true)
	bad=$diags
	if [ -n "$diags" ] && files_ok "$p"; then
		nmaint=$(grep -cF "WARNING: $MAINT_MSG" <<<"$diags" || true)
		if [ "$nmaint" = 1 ]; then
			bad=$(grep -vF "WARNING: $MAINT_MSG" <<<"$diags" || true)
		fi
	fi
	if [ -n "$bad" ]; then
		echo "FAIL: $(basename "$p"): $(wc -l <<<"$bad") checkpatch report(s): $(head -n1 <<<"$bad") (log: $plog)" >&2
		result "$name" FAIL
	else
		result "$name" ok
	fi
done
[ "$n" -gt 0 ] || die "no patch in $pdir/series"

if [ "$CHECK_FAILED" = 0 ]; then
	echo "checkpatch: $n patches clean (--strict${spell:+ --codespell}, SPDX checked) in $(elapsed "$start")s"
fi
finish
