#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print results/vmm-bench.md's table as a cover letter's plain-text table.

Usage: vmm-cover-table.py [results/vmm-bench.md]

One row per cell: the L1 kernel, the QEMU, the vectors L2 enabled, the
KVM_SET_GSI_ROUTING calls (whole tables/partial), the routes they sent,
the time inside them, that time against stock QEMU's on the same kernel,
on 7.3.4 and on 7.3.4+v4 with the same vectors, L2's time to enable its vectors (DRIVER_OK and the unmasks), and
the vectors that delivered.  Nothing is computed that the table does not
hold, except those ratios.
"""
import sys

KERNEL = {"base": "7.3.4", "patched": "7.3.4+v4", "rfc": "7.3.4+v4+RFC"}

path = sys.argv[1] if len(sys.argv) > 1 else "results/vmm-bench.md"
rows = []
head = None
for line in open(path):
    if not line.startswith("| "):
        continue
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if head is None:
        head = cells
        continue
    rows.append(dict(zip(head, cells)))


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


stock = {"base": {}, "patched": {}, "rfc": {}}
for r in rows:
    if r["L1 kernel"] in stock and r["QEMU"] == "stock" and "max-irq" not in r["accel"]:
        stock[r["L1 kernel"]][r["vectors"]] = num(r["us in calls"])


def ratio(us, base):
    return "%.3f" % (us / base) if us is not None and base else "-"


out = [("L1 kernel", "QEMU", "vectors", "calls (whole/partial)", "routes sent",
        "ms in calls", "vs stock", "vs 7.3.4", "vs v4", "L2 enable ms", "delivered")]
for r in rows:
    if r["calls (full/partial)"] == "-":
        continue    # a cell that did not finish: results/vmm-bench.md says so
    qemu = r["QEMU"]
    acc = r["accel"].strip("`")
    if "max-irq-routes=" in acc:
        qemu += " max-irq-routes=" + acc.split("max-irq-routes=")[1].split(",")[0]
    us = num(r["us in calls"])
    l2 = [num(r["L2 DRIVER_OK us"]), num(r["L2 unmask us"])]
    out.append((KERNEL.get(r["L1 kernel"], r["L1 kernel"]), qemu, r["vectors"],
                r["calls (full/partial)"], r["entries sent"],
                "%.1f" % (us / 1000) if us is not None else "-",
                ratio(us, stock[r["L1 kernel"]].get(r["vectors"])) if r["QEMU"] == "patched" else "-",
                ratio(us, stock["base"].get(r["vectors"])),
                ratio(us, stock["patched"].get(r["vectors"])),
                "%.1f" % (sum(l2) / 1000) if None not in l2 else "-",
                r["delivered"]))
w = [max(len(str(x[i])) for x in out) for i in range(len(out[0]))]
for x in out:
    print(("%-*s  %-*s" % (w[0], x[0], w[1], x[1]) + "".join(
        "  %*s" % (w[i], x[i]) for i in range(2, len(x)))).rstrip())
