#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Is the base upstream v7.3.4 for every file the series touches?  Debian's
# linux-source-7.3 is upstream plus debian/patches/series; fetch that list
# from linux_7.3.4-1~bpo13+1.debian.tar.xz (pinned sha256) and show that no
# Debian patch touches a file of the series.
#
# Exit 0: proven.  Exit 1: a Debian patch touches a file of the series.
# Exit 4: cannot be verified here (the source package is not served).
set -euo pipefail
. "$(dirname "$0")/common.sh"

if [ -z "$DEBIAN_TAR" ]; then
	echo "base provenance: not checked for BASE=$BASE (no Debian source package pinned)"
	exit 4
fi

APT=$BUILD/apt
APTO=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APT/parts"
      -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache")
dtar=$BUILD/dl/$DEBIAN_TAR
vlog=$LOGS/verify-base.log
: >"$vlog"

touched=$(series_patches "$PATCHDIR" | xargs cat 2>/dev/null |
	  sed -n 's|^+++ b/||p; s|^--- a/||p' | sort -u)
[ -n "$touched" ] || die "no patches to check"

if [ ! -f "$dtar" ] || ! echo "$DEBIAN_TAR_SHA256  $dtar" | sha256sum -c --status; then
	[ -d "$APT/parts" ] || "$TOP/scripts/fetch-base.sh" >/dev/null
	uri=$(apt-get "${APTO[@]}" source --print-uris "linux=$DEB_VER" 2>>"$vlog" |
	      awk -v f="$DEBIAN_TAR" '$2 == f { gsub("\x27", "", $1); print $1 }')
	if [ -z "$uri" ] || ! /usr/lib/apt/apt-helper download-file "$uri" "$dtar" \
		"SHA256:$DEBIAN_TAR_SHA256" >>"$vlog" 2>&1; then
		rm -f "$dtar"
		echo "base provenance: UNVERIFIED: $DEBIAN_TAR is not served by this" \
		     "machine's Debian mirror (${uri:-no source URI}; log: $vlog)"
		exit 4
	fi
fi

work=$BUILD/debian-src
rm -rf "$work"
mkdir -p "$work"
tar -xJf "$dtar" -C "$work" debian/patches
series=$work/debian/patches/series
[ -f "$series" ] || die "no debian/patches/series in $DEBIAN_TAR"
hits=0
n=0
while read -r p _; do
	case $p in ''|'#'*) continue ;; esac
	n=$((n + 1))
	files=$(sed -n 's|^+++ [^/]*/||p' "$work/debian/patches/$p" | cut -f1 | sort -u)
	for f in $files; do
		if grep -qx "$f" <<<"$touched"; then
			echo "Debian patch $p touches $f" >&2
			hits=$((hits + 1))
		fi
	done
done <"$series"
if [ $hits -ne 0 ]; then
	die "$hits Debian patch hunks touch files of the series: the base is not upstream there"
fi
echo "base provenance: none of Debian's $n patches touches the $(wc -l <<<"$touched") files of the series"
