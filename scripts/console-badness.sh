#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Scan a QEMU console log for kernel badness, modelled on rcutorture's
# console-badness.sh and parse-console.sh.
#
# Usage: scripts/console-badness.sh CONSOLE_LOG
#
# Exit 0 and print nothing when the log is clean.  Otherwise print a summary
# line ("console-badness: N suspicious lines in LOG, first: ...") and an
# excerpt of each hit (2 lines before, 10 after; overlapping excerpts merged;
# at most MAXHITS=20 excerpts and MAXLINES=400 lines), and exit 1.
#
# Lines written by the tests themselves reach the console prefixed with "# "
# by the initramfs (scripts/mkinitrd.sh) and are ignored, unless a kernel
# message (timestamp "[ 12.345678]") got interleaved into them.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 1 ] || die "usage: $0 CONSOLE_LOG"
file=$1
[ -r "$file" ] || die "console log not found: $file"

maxhits=${MAXHITS:-20}
maxlines=${MAXLINES:-400}

# Kernel messages that mean a bug (extended regexps, case-sensitive).
bad=(
	'BUG:'				# BUG: KASAN:, sleeping function..., soft lockup
	'kernel BUG at'
	'WARNING:'			# WARN*(), lockdep and RCU splats
	'------------\[ cut here \]------------'
	'Oops'
	'general protection fault'
	'KASAN: [a-z-]+ in '
	'UBSAN:'
	'suspicious RCU usage'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'INFO: '			# lockdep, hung tasks, RCU stalls
	'hung_task'
	'blocked for more than'
	'detected stalls on CPUs/tasks'
	'self-detected stall on CPU'
	'Call Trace:'
	'Kernel panic'
	'sleeping function called from invalid context'
	'scheduling while atomic'
	'list_(add|del) corruption'
	'refcount_t:'
	'Badness'
	'unreferenced object 0x'	# kmemleak report
	'kmemleak: [1-9][0-9]* (new suspected memory )?leaks'
)
# Known-benign lines that match a pattern above (extended regexps).
benign=(
	'Warning: unable to open an initial console'
)

export BADNESS_PAT BADNESS_BENIGN
BADNESS_PAT=$(IFS='|'; echo "${bad[*]}")
BADNESS_BENIGN=$(IFS='|'; echo "${benign[*]}")

tr -d '\r' <"$file" | awk -v maxhits="$maxhits" -v maxlines="$maxlines" \
	-v name="$file" '
BEGIN { pat = ENVIRON["BADNESS_PAT"]; ok = ENVIRON["BADNESS_BENIGN"] }
function benign(s) {
	if (s ~ ok)
		return 1
	# Test output (prefixed "# " by /init) without an interleaved printk.
	if (s ~ /^# / && s !~ /\[ *[0-9]+\.[0-9]+\]/)
		return 1
	return 0
}
{ line[NR] = $0 }
# Fault injection (failslab, fail_page_alloc) dumps the stack of each
# injected failure: expected, not a bug.  The dump follows within a few lines.
/FAULT_INJECTION: forcing a failure/ { fi_line = NR }
fi_line && NR - fi_line <= 8 && /Call Trace:/ { next }
$0 ~ pat && !benign($0) { hit[++nhits] = NR }
END {
	if (!nhits)
		exit 0
	# Summarise with the most telling line, not "cut here" or "Call Trace:".
	first = line[hit[1]]
	for (i = 1; i <= nhits; i++)
		if (line[hit[i]] !~ /cut here|Call Trace:/) {
			first = line[hit[i]]
			break
		}
	if (length(first) > 160)
		first = substr(first, 1, 160) "..."
	printf "console-badness: %d suspicious line%s in %s, first: %s\n",
		nhits, nhits == 1 ? "" : "s", name, first
	# Excerpts: 2 lines before and 10 after each hit, overlaps merged.
	nr = 0
	for (i = 1; i <= nhits; i++) {
		n = hit[i]
		f = n - 2; if (f < 1) f = 1
		t = n + 10; if (t > NR) t = NR
		if (nr && f <= rt[nr] + 1) {
			if (t > rt[nr]) rt[nr] = t
		} else {
			nr++; rf[nr] = f; rt[nr] = t; rn[nr] = n
		}
	}
	printed = 0
	for (r = 1; r <= nr; r++) {
		if (r > maxhits || printed >= maxlines) {
			printf "... %d more excerpts not shown (see %s)\n", nr - r + 1, name
			break
		}
		printf "----- %s:%d\n", name, rn[r]
		for (j = rf[r]; j <= rt[r] && printed < maxlines; j++) {
			print line[j]
			printed++
		}
	}
	exit 1
}'
