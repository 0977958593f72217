#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The static and build checks of "make check", in order: checkpatch, sparse,
# W=1, every prefix of the series, cross builds.  Goes on after a failure;
# exits non-zero if any check failed.  Each "check: NAME ok|FAIL" line of
# the scripts is printed once (scripts/check.sh counts them).
#
# Usage: scripts/check-static.sh [--no-cross]      (or NO_CROSS=1)
#   patches/ for checkpatch, build/src-base as the base tree,
#   build/src-patched (branch "applied", made by scripts/apply.sh when
#   missing) as the patched tree, v7.3.4-deb..applied as the series;
#   build/src-base is made (a worktree at the base tag) when missing.
# For development, CHECK_PATCHES, CHECK_BASE, CHECK_PATCHED and CHECK_TIP
# (a revision of CHECK_PATCHED's repository) replace those defaults.
set -euo pipefail
. "$(dirname "$0")/common.sh"

no_cross=${NO_CROSS:-0}
for a; do
	case "$a" in
	--no-cross) no_cross=1 ;;
	*) die "usage: $0 [--no-cross]" ;;
	esac
done

patches=${CHECK_PATCHES:-$PATCHDIR}
base=${CHECK_BASE:-$SRC_BASE}
patched=${CHECK_PATCHED:-$SRC_PATCHED}
tip=${CHECK_TIP:-applied}

if [ -z "${CHECK_PATCHED:-}" ] &&
   ! git -C "$SRC_PATCHED" rev-parse -q --verify applied >/dev/null 2>&1; then
	"$TOP/scripts/apply.sh" || die "cannot apply the series (log: $LOGS/apply.log)"
fi
if [ -z "${CHECK_BASE:-}" ] && [ ! -f "$SRC_BASE/Makefile" ]; then
	"$TOP/scripts/fetch-base.sh" || die "cannot fetch the base (log: $LOGS/fetch.log)"
	add_worktree "$SRC_BASE" "$BASE_TAG" ||
		die "cannot check out $BASE_TAG in $SRC_BASE"
fi

# A backport's patches carry mainline's changelogs and tags (Link: after
# Reported-by:, which 6.12's checkpatch does not know), so check them with
# the 7.3 tree's checkpatch when that tree is here.
cpbase=$base
if [ "$BASE" != 7.3 ] && [ -z "${CHECK_BASE:-}" ] && [ -f "$BUILD73/src-base/scripts/checkpatch.pl" ]; then
	cpbase=$BUILD73/src-base
fi

steps=(
	"checkpatch|$TOP/scripts/check-checkpatch.sh|$patches|$cpbase"
	"sparse|$TOP/scripts/check-sparse.sh|$base|$patched"
	"w1|$TOP/scripts/check-w1.sh|$base|$patched"
	"prefixes|$TOP/scripts/check-prefixes.sh|$patched|$BASE_TAG|$tip"
	"cross|$TOP/scripts/check-cross.sh|$patched"
)
summary=()
lines=()
failed=0
for s in "${steps[@]}"; do
	IFS='|' read -r -a argv <<<"$s"
	name=${argv[0]}
	if [ "$name" = cross ] && [ "$no_cross" = 1 ]; then
		summary+=("$name: skipped (NO_CROSS=1)")
		continue
	fi
	log "check-static: $name"
	t0=$(date +%s)
	out=$LOGS/check-static-$name.out
	rc=0
	"${argv[@]:1}" >"$out" || rc=$?
	cat "$out"
	mapfile -t -O "${#lines[@]}" lines < <(grep '^check: ' "$out" || true)
	nok=$(grep -c '^check: .* ok$' "$out" || true)
	nfail=$(grep -c '^check: .* FAIL$' "$out" || true)
	if [ "$rc" != 0 ]; then
		failed=1
		# A script that died before its checks ran counts as one failure.
		if [ "$nfail" = 0 ]; then
			lines+=("check: $name FAIL")
			echo "check: $name FAIL"
			nfail=1
		fi
		summary+=("$name: FAIL ($nok ok, $nfail failed, $(( $(date +%s) - t0 ))s)")
	else
		summary+=("$name: ok ($nok checks, $(( $(date +%s) - t0 ))s)")
	fi
done

echo "== static checks =="
printf '  %s\n' "${summary[@]}"
if [ "$failed" = 0 ]; then
	echo "static: all ${#lines[@]} checks passed"
else
	echo "FAIL: static checks failed: $(grep -c ' FAIL$' < <(printf '%s\n' "${lines[@]}")) of ${#lines[@]} (log: $LOGS/check-static-*.out)" >&2
	exit 1
fi
