#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fill a "git format-patch --cover-letter" cover letter in place.

Usage: fill-cover.py COVER TEXT DATE BENCH TO CC PLACEHOLDER MISSING

TEXT: subject line, blank line, blurb (if absent, the template stays).
PLACEHOLDER in the blurb is replaced by the contents of BENCH, or by
MISSING when BENCH does not exist.  TO and CC: tab-separated addresses,
written under Subject: (CC without duplicates or TO's addresses).
"""
import os
import re
import sys

cover, text, date, bench, to, cc, placeholder, missing = sys.argv[1:9]
s = open(cover).read()
body = open(text).read() if os.path.exists(text) else "*** SUBJECT HERE ***\n\n*** BLURB HERE ***\n"
subject, _, blurb = body.partition("\n")
blurb = blurb.strip("\n")
table = open(bench).read().strip("\n") if os.path.exists(bench) else missing
blurb = blurb.replace(placeholder, table)
s = s.replace("*** SUBJECT HERE ***", subject.strip())
s = s.replace("*** BLURB HERE ***", blurb)
s = re.sub(r"^Date: .*$", "Date: " + date, s, count=1, flags=re.M)
to = [a for a in to.split("\t") if a]
cc = [a for a in dict.fromkeys(cc.split("\t")) if a and a not in to]
hdr = ""
if to:
    hdr += "To: " + ",\n    ".join(to) + "\n"
if cc:
    hdr += "Cc: " + ",\n    ".join(cc) + "\n"
s = re.sub(r"^(Subject: .*\n)", lambda m: m.group(1) + hdr, s, count=1, flags=re.M)
open(cover, "w").write(s)
