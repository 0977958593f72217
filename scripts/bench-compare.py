#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two "make bench" runs cell by cell.

Usage: scripts/bench-compare.py [--threshold PCT] A/bench.json B/bench.json

For every cell present in both runs and each kernel (base, patched) prints
the value of run A, of run B and the difference (B - A) / A in percent:
the median (p50_us) for the us/update cells, since a single guest
hiccup of a few milliseconds moves an average of 200 updates by several
percent; total_us for grow; and the base/patched ratio of those.  A
difference larger than the threshold (default 5 %) is flagged
"  <-- over 5%".  Allocation counts per update are compared absolutely:
they are flagged when they differ by more than 0.1 allocation per update
and by more than the threshold.  Exit status 0 when
no cell is flagged, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import sys


def value(row, kname):
    d = row.get(kname)
    if not isinstance(d, dict):
        return None
    if row.get("kind") == "allocs":
        return d.get("per_update")
    return d.get("total_us" if row.get("mode") == "grow" else "p50_us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threshold", type=float, default=5.0, help="percent (default 5)")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    try:
        ja, jb = (json.load(open(p)) for p in (args.a, args.b))
    except (OSError, ValueError) as e:
        print(f"bench-compare: {e}", file=sys.stderr)
        sys.exit(2)
    cb = {r["name"]: r for r in jb["cells"]}
    names_a = [r["name"] for r in ja["cells"]]
    only_a = [n for n in names_a if n not in cb]
    only_b = [n for n in cb if n not in set(names_a)]

    for label, j, path in (("A", ja, args.a), ("B", jb, args.b)):
        m = j.get("meta", {})
        print(f"{label}: {path}: {m.get('date', '?')} kernels {m.get('kernel_release')} "
              f"parallel={m.get('parallel')} boots {m.get('wall_boots_s')}s")
    print()
    hdr = f"{'cell':<28} {'kernel':<8} {'A':>14} {'B':>14} {'diff':>8}"
    print(hdr)
    print("-" * len(hdr))
    flagged, worst, n = [], 0.0, 0
    for ra in ja["cells"]:
        rb = cb.get(ra["name"])
        if rb is None:
            continue
        items = [(k, value(ra, k), value(rb, k)) for k in ("base", "patched")]
        if ra.get("kind") != "allocs" and all(v for _, v1, v2 in items for v in (v1, v2)):
            items.append(("ratio", items[0][1] / items[1][1], items[0][2] / items[1][2]))
        for k, va, vb in items:
            if va is None or vb is None:
                print(f"{ra['name']:<28} {k:<8} {'skipped':>14} {'skipped':>14}")
                continue
            if va == 0:
                d = 0.0 if vb == 0 else float("inf")
            else:
                d = (vb - va) / va * 100
            n += 1
            if ra.get("kind") == "allocs":
                over = abs(vb - va) > max(0.1, abs(va) * args.threshold / 100)
            else:
                over = abs(d) > args.threshold
                worst = max(worst, abs(d))
            flag = ""
            if over:
                flag = f"  <-- over {args.threshold:g}%"
                flagged.append(f"{ra['name']}/{k}")
            print(f"{ra['name']:<28} {k:<8} {va:>14.3f} {vb:>14.3f} {d:>+7.2f}%{flag}")
    print()
    for n_, lst in (("only in A", only_a), ("only in B", only_b)):
        if lst:
            print(f"{n_}: {', '.join(lst)}")
    if flagged:
        print(f"bench-compare: {len(flagged)} of {n} values differ by more than "
              f"{args.threshold:g}%: {', '.join(flagged)} (largest {worst:.2f}%)")
        sys.exit(1)
    print(f"bench-compare: all {n} values within {args.threshold:g}% (largest difference {worst:.2f}%)")


if __name__ == "__main__":
    main()
