#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the pinned base (BASE=7.3, the default: Linux 7.3.4, Debian
# linux-source-7.3 from trixie-backports; BASE=6.12: Linux 6.12.117, Debian
# linux-source-6.12 from bookworm-security), check its sha256,
# extract it to build/linux and make it a git repository
# whose first commit, tagged $BASE_TAG, is the pristine tree.
#
# The machine's apt configuration is not touched: a private sources list,
# private package lists and a private cache live under build/apt.
set -euo pipefail
. "$(dirname "$0")/common.sh"

if git -C "$SRC" rev-parse -q --verify "refs/tags/$BASE_TAG" >/dev/null 2>&1; then
	log "base tree present: $SRC ($BASE_TAG)"
	exit 0
fi

need apt-get apt
need git git
need xz xz-utils

APT=$BUILD/apt
mkdir -p "$APT/parts" "$APT/lists/partial" "$APT/cache/archives/partial" "$BUILD/dl"
cat >"$APT/parts/kvm-irqroute.sources" <<EOS
Types: deb deb-src
URIs: $DEB_URI
Suites: $DEB_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
APTO=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APT/parts"
      -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
      -o Debug::NoDropPrivs=true -o APT::Sandbox::User=root)

deb=$BUILD/dl/${DEB_PKG}_${DEB_VER}_all.deb
if [ ! -f "$deb" ] || ! echo "$DEB_SHA256  $deb" | sha256sum -c --status; then
	log "apt-get update ($DEB_SUITE, private lists)"
	apt-get "${APTO[@]}" update >"$LOGS/fetch.log" 2>&1 ||
		die "apt-get update for $DEB_SUITE failed (log: $LOGS/fetch.log)"
	log "apt-get download $DEB_PKG=$DEB_VER"
	(cd "$BUILD/dl" && apt-get "${APTO[@]}" download "$DEB_PKG=$DEB_VER") \
		>>"$LOGS/fetch.log" 2>&1 ||
		die "$DEB_PKG $DEB_VER is not downloadable from $DEB_SUITE (log: $LOGS/fetch.log)"
	echo "$DEB_SHA256  $deb" | sha256sum -c --status ||
		die "sha256 of $deb is $(sha256sum "$deb" | cut -d' ' -f1), pinned $DEB_SHA256"
fi

log "extracting $DEB_PKG into $SRC"
rm -rf "$SRC" "$BUILD/$DEB_PKG"
mkdir -p "$BUILD"
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$DEB_PKG.tar.xz" |
	xz -dc -T"$JOBS" | tar -x -C "$BUILD"
mv "$BUILD/$DEB_PKG" "$SRC"
IFS=. read -r v p sl <<<"$BASE_VER"
grep -q "^VERSION = $v\$" "$SRC/Makefile" && grep -q "^PATCHLEVEL = $p\$" "$SRC/Makefile" &&
	grep -q "^SUBLEVEL = $sl\$" "$SRC/Makefile" || die "$SRC/Makefile is not $BASE_DESC"

# Debian appends "ignore everything at the top level" to .gitignore; cut its
# block off so that git sees the upstream rules.
sed -i '/^# Debian packaging: ignore everything at the top level/,$d' "$SRC/.gitignore"
sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$SRC/.gitignore"   # trailing blank lines
grep -qx '/\*' "$SRC/.gitignore" && die "Debian's '/*' is still in $SRC/.gitignore"

export GIT_AUTHOR_NAME="kvm-irqroute base" GIT_AUTHOR_EMAIL="base@kvm-irqroute.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-11-15T22:30:00Z" GIT_COMMITTER_DATE="2026-11-15T22:30:00Z"
git -C "$SRC" init -q -b base-import
git -C "$SRC" config core.autocrlf false
git -C "$SRC" config gc.auto 0
# -f: the tarball is pristine source; upstream tracks dot-files (.gitattributes,
# .gitignore, .clang-format, ...) that its own ".*" ignore rule would skip.
git -C "$SRC" add -A -f
git -C "$SRC" commit -q -m "$BASE_DESC ($DEB_PKG $DEB_VER)"
git -C "$SRC" tag "$BASE_TAG"
log "base committed: $(git -C "$SRC" rev-parse HEAD) tagged $BASE_TAG"
