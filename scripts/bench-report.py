#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Parse the two bench consoles (base, patched) of scripts/bench.sh and write
OUT/bench.json (every field of every irq_routing_perf line, plus metadata),
OUT/bench.md (pure markdown: the table scripts/export.sh puts in the cover
letter) and OUT/bench.png (gnuplot, us/update against routes, log-log).

Usage: bench-report.py --matrix LIST --meta META.env --base CONSOLE
                       --patched CONSOLE [--matrix-nomemcg LIST
                       --base-nomemcg CONSOLE --patched-nomemcg CONSOLE]
                       --out DIR

The first pair of consoles ran the tests in a cgroup with the memory
controller (memcg); the optional second pair, with fewer cells, booted with
cgroup_disable=memory.  bench.md gets a table for each, the memory kept per
VM (irq_routing_perf_test --mem-vms) and the series' targets.

Fails (exit 1, one line) when a cell of LIST has no result in a console.

Also a module: scripts/host-report.py and scripts/host-compare.py import its
parsing, table and plot functions.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

PERF_RE = re.compile(r"^# # irq_routing_perf: (.*)$")
ALLOC_RE = re.compile(r"^# bench-allocs: (SKIP )?(.*)$")
MEM_RE = re.compile(r"^# # irq_routing_mem: (.*)$")
CGROUP_RE = re.compile(r"^# cgroup: (.*)$")
CMDLINE_RE = re.compile(r"Kernel command line: (.*)$")
RUN_RE = re.compile(r"^# irqroute: running (\S+): ")
TAP_RE = re.compile(r"^(not )?ok \d+ (\S+)( # SKIP.*)?$")
VERSION_RE = re.compile(r"Linux version (\S+) (.*)$")


PROG = "bench"    # the name fail() gives; the importing scripts set theirs


def fail(msg):
    print(f"FAIL: {PROG}: " + msg, file=sys.stderr)
    sys.exit(1)


def num(v):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def kv(text):
    out = {}
    for tok in text.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = num(v) if k not in ("seed", "kernel") else v
    return out


def parse_console(path):
    """Return (per-cell results, linux version line, took seconds per cell)."""
    cells, took, status = {}, {}, {}
    version = None
    cur = None
    cgroup = cmdline = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = VERSION_RE.search(line)
            if m and version is None:
                version = {"release": m.group(1), "banner": "Linux version " + m.group(1) + " " + m.group(2)}
            m = CGROUP_RE.match(line)
            if m and cgroup is None:
                cgroup = m.group(1)
                continue
            m = CMDLINE_RE.search(line)
            if m and cmdline is None:
                cmdline = m.group(1)
            m = RUN_RE.match(line)
            if m:
                cur = m.group(1)
                cells[cur] = {}
                continue
            m = PERF_RE.match(line)
            if m and cur:
                cells[cur]["perf"] = kv(m.group(1))
                continue
            m = MEM_RE.match(line)
            if m and cur:
                cells[cur]["mem"] = kv(m.group(1))
                continue
            m = ALLOC_RE.match(line)
            if m and cur:
                if m.group(1):
                    cells[cur]["allocs"] = {"skipped": m.group(2)}
                else:
                    d = kv(m.group(2))
                    for k in ("kmalloc", "kmem_cache_alloc", "mm_page_alloc"):
                        if isinstance(d.get(k), str) and "," in d[k]:
                            d[k] = [int(x) for x in d[k].split(",")]
                    cells[cur]["allocs"] = d
                continue
            m = re.match(r"^# irqroute: (\S+) took (\d+)s$", line)
            if m:
                took[m.group(1)] = int(m.group(2))
                continue
            m = TAP_RE.match(line)
            if m:
                status[m.group(2)] = "fail" if m.group(1) else ("skip" if m.group(3) else "pass")
                cur = None
    if version is not None:
        version["cgroup"] = cgroup
        version["cmdline"] = cmdline
    return cells, version, took, status


def read_matrix(path):
    cells = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, cmd, *args = line.split()
            # Untimed: puts the kernel in the state the cells run in.
            if name.startswith("warmup-"):
                continue
            cells.append({"name": name, "command": cmd, "args": args})
    return cells


def arg(args, *names, default=None):
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return args[i + 1]
    return default


def cell_row(c):
    """The result row of a matrix cell: its parameters, from its arguments."""
    name, args = c["name"], c["args"]
    row = {"name": name, "command": " ".join([c["command"]] + args)}
    if c["command"] == "bench-allocs.sh":
        row.update(kind="allocs", routes=int(args[0]), mode=args[1],
                   n1=int(args[2]), n2=int(args[3]))
    elif "--mem-vms" in args:
        row.update(kind="mem", routes=int(arg(args, "-r", "--routes")),
                   vms=int(arg(args, "--mem-vms")),
                   shrink=int(arg(args, "--mem-shrink", default=24)))
    else:
        row.update(kind="perf", routes=int(arg(args, "-r", "--routes")),
                   mode=arg(args, "-m", "--mode", default="full"),
                   iterations=int(arg(args, "-i", "--iterations")),
                   irqfds=int(arg(args, "-f", "--irqfds", default=0)),
                   vcpus=int(arg(args, "-v", "--vcpus", default=1)),
                   inject="--inject" in args)
    return row


def check_perf(row, p, where, log):
    """Fail unless the irq_routing_perf line p ran row's parameters."""
    for field in ("routes", "iterations", "mode", "irqfds", "vcpus"):
        if p.get(field) != row[field]:
            fail(f"cell {row['name']} on {where}: perf line has {field}={p.get(field)}, expected {row[field]} (log: {log})")
    if row["inject"] and not p.get("injected"):
        fail(f"cell {row['name']} on {where}: no interrupt injected (log: {log})")


def set_ratio(row):
    key = "total_us" if row["mode"] == "grow" else "avg_us"
    b, p = row["base"][key], row["patched"][key]
    row["ratio"] = b / p if p else None


def iterations_line(perf):
    """The "- iterations per cell" line of a table's header, or None."""
    iters = {}
    for r in perf:
        if r["mode"] != "grow" and not r["inject"] and not r["irqfds"]:
            iters.setdefault(r["iterations"], []).append(r["routes"])
    its = ", ".join(f"{'/'.join(map(str, sorted(set(v))))} routes: {n}"
                    for n, v in sorted(iters.items(), key=lambda x: min(x[1])))
    if not its:
        return None
    return (f"- iterations per cell: {its}; grow: one pass of 4096 updates "
            "(its p50 mixes every table size from 1 to 4096 routes); "
            "irqfd and inject cells as in the table")


def perf_table(perf, spread=None):
    """The base vs patched table of the perf rows, markdown lines.  With
    spread, a function (row, kernel) -> str, two more columns."""
    hdr = "| routes | mode | irqfds | iterations | base us/update | patched us/update | base/patched | base p50 | patched p50 |"
    sep = "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    if spread:
        hdr += " base spread | patched spread |"
        sep += "---:|---:|"
    md = [hdr, sep]
    for r in perf:
        b, p = r["base"], r["patched"]
        mode = r["mode"]
        if r["inject"]:
            mode += f", inject, {r['vcpus']} vCPUs (lost: 0; {b['injected']}/{p['injected']} irqs)"
        if r["mode"] == "grow":
            line = (f"| 1..{r['routes']} | grow (total of one pass) | {r['irqfds']} | {r['iterations']} "
                    f"| {b['total_us'] / 1000:,.1f} ms total | {p['total_us'] / 1000:,.1f} ms total "
                    f"| {r['ratio']:.2f} | {fmt(b['p50_us'])} | {fmt(p['p50_us'])} |")
        else:
            line = (f"| {r['routes']} | {mode} | {r['irqfds']} | {r['iterations']} | {fmt(b['avg_us'])} "
                    f"| {fmt(p['avg_us'])} | {r['ratio']:.2f} | {fmt(b['p50_us'])} | {fmt(p['p50_us'])} |")
        if spread:
            line += f" {spread(r, 'base')} | {spread(r, 'patched')} |"
        md.append(line)
    return md


def fmt(v, digits=3):
    if v is None:
        return "-"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.1f}"
    if v >= 10:
        return f"{v:.2f}"
    return f"{v:.{digits}f}"


def load_kernels(base, patched):
    kernels = {}
    for kname, path in (("base", base), ("patched", patched)):
        cells, version, took, status = parse_console(path)
        kernels[kname] = {"console": os.path.abspath(path), "cells": cells,
                          "version": version, "took": took, "status": status}
    return kernels


def collect(matrix, kernels, where=""):
    """One result row per matrix cell, with each kernel's values."""
    results = []
    for c in matrix:
        row = cell_row(c)
        name = row["name"]
        for kname, k in kernels.items():
            got = k["cells"].get(name)
            st = k["status"].get(name)
            key = row["kind"]
            if not got or key not in got:
                fail(f"cell {name} missing on the {kname}{where} kernel (status {st or 'not run'}; log: {k['console']})")
            if key == "perf":
                check_perf(row, got["perf"], kname + where, k["console"])
            row[kname] = got[key]
            row[kname + "_guest_s"] = k["took"].get(name)
            row[kname + "_status"] = st
        if row["kind"] == "perf":
            set_ratio(row)
        results.append(row)
    return results


def check_cgroup(kernels, memcg):
    """Fail unless the boots ran with (memcg) or without the memory
    controller, as /init and the kernel command line say."""
    for kname, k in kernels.items():
        v = k["version"] or {}
        cg, cmd = v.get("cgroup") or "", v.get("cmdline") or ""
        if memcg and ("memory" not in cg.split("controllers:")[-1] or "cgroup_disable=memory" in cmd):
            fail(f"{kname} kernel: tests did not run in a memory-controlled cgroup ({cg!r}; log: {k['console']})")
        if not memcg and "cgroup_disable=memory" not in cmd:
            fail(f"{kname} no-memcg kernel: no cgroup_disable=memory on its command line (log: {k['console']})")


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def targets(perf, allocs, mems):
    """The series' targets, measured: markdown lines."""
    md = ["| target | measured | met |", "|---|---|---|"]

    def ratio(routes, mode, want):
        r = find(perf, routes=routes, mode=mode, irqfds=0, inject=False)
        if not r:
            return
        what = "grow to 4096 (total of one pass)" if mode == "grow" else f"{routes} routes {mode}"
        md.append(f"| {what}: base/patched >= {want}x | {r['ratio']:.2f}x | {'yes' if r['ratio'] >= want else '**no**'} |")
    ratio(4096, "full", 9.5)
    ratio(512, "full", 7.5)
    ratio(4096, "grow", 9)
    ratio(64, "full", 4.2)
    worst = None
    for r in perf:
        if r["mode"] != "same" or r["irqfds"] or r["inject"]:
            continue
        f = find(perf, routes=r["routes"], mode="full", irqfds=0, inject=False)
        if f:
            q = r["patched"]["avg_us"] / f["patched"]["avg_us"]
            if worst is None or q > worst[0]:
                worst = (q, r["routes"])
    if worst:
        md.append(f"| \"same\" no slower than \"full\" (patched, every size; 1 % for noise) | same/full at most {worst[0]:.3f} ({worst[1]} routes) "
                  f"| {'yes' if worst[0] <= 1.01 else '**no**'} |")
    for m in mems:
        b, p = m["base"], m["patched"]
        md.append(f"| memory, {m['routes']} routes: patched <= 1.5 x base per VM | {p['routes_kib']:.0f} KiB vs 1.5 x {b['routes_kib']:.0f} KiB "
                  f"({p['routes_kib'] / b['routes_kib']:.2f}x) | {'yes' if p['routes_kib'] <= 1.5 * b['routes_kib'] else '**no**'} |"
                  if m["routes"] == 4096 else None)
        md.append(f"| memory, shrunk from {m['routes']} to {m['shrink']} routes: patched <= base + 16 KiB per VM "
                  f"| {p['shrunk_kib']:.1f} KiB vs {b['shrunk_kib']:.1f} + 16 KiB | {'yes' if p['shrunk_kib'] <= b['shrunk_kib'] + 16 else '**no**'} |"
                  if m["routes"] == 4096 else None)
    return [x for x in md if x]


def mem_table(mems):
    md = ["| routes | VMs | KiB per VM | base | patched | patched - base |",
          "|---:|---:|---|---:|---:|---:|"]
    for m in mems:
        b, p = m["base"], m["patched"]
        for key, what in (("vm_kib", "empty VM (irqchip, default routes), above no VM"),
                          ("routes_kib", f"{m['routes']} routes, above the empty VM"),
                          ("shrunk_kib", f"shrunk to {m['shrink']} routes, above the empty VM")):
            md.append(f"| {m['routes']} | {m['vms']} | {what} | {b[key]:.1f} | {p[key]:.1f} | {p[key] - b[key]:+.1f} |")
    return md


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--matrix", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--patched", required=True)
    ap.add_argument("--matrix-nomemcg")
    ap.add_argument("--base-nomemcg")
    ap.add_argument("--patched-nomemcg")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    nomemcg = bool(a.matrix_nomemcg)
    if nomemcg and not (a.base_nomemcg and a.patched_nomemcg):
        fail("--matrix-nomemcg needs --base-nomemcg and --patched-nomemcg")

    meta = {}
    with open(a.meta) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            if k:
                meta[k] = num(v) if k.startswith("wall_") or k == "parallel" else v
    only = set(filter(None, meta.get("only", "").split(",")))

    matrix = [c for c in read_matrix(a.matrix) if not only or c["name"] in only]
    kernels = load_kernels(a.base, a.patched)
    check_cgroup(kernels, True)
    results = collect(matrix, kernels)
    results_nm = []
    if nomemcg:
        matrix_nm = [c for c in read_matrix(a.matrix_nomemcg) if not only or c["name"] in only]
        kernels_nm = load_kernels(a.base_nomemcg, a.patched_nomemcg)
        check_cgroup(kernels_nm, False)
        results_nm = collect(matrix_nm, kernels_nm, " (no memcg)")

    rel = {k: (v["version"] or {}).get("release") for k, v in kernels.items()}
    for kname in kernels:
        kr = {r[kname].get("kernel") for r in results if r["kind"] == "perf"}
        if kr and rel[kname] is None:
            rel[kname] = kr.pop()
    meta["kernel_release"] = rel
    meta["kernel_banner"] = {k: (v["version"] or {}).get("banner") for k, v in kernels.items()}
    meta["console"] = {k: v["console"] for k, v in kernels.items()}
    meta["matrix"] = os.path.abspath(a.matrix)
    if nomemcg:
        meta["console_nomemcg"] = {k: v["console"] for k, v in kernels_nm.items()}
        meta["matrix_nomemcg"] = os.path.abspath(a.matrix_nomemcg)

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump({"meta": meta, "cells": results, "cells_nomemcg": results_nm}, f, indent=1, sort_keys=False)
        f.write("\n")

    # --- markdown -----------------------------------------------------------
    perf = [r for r in results if r["kind"] == "perf"]
    allocs = [r for r in results if r["kind"] == "allocs"]
    mems = [r for r in results if r["kind"] == "mem"]
    perf_nm = [r for r in results_nm if r["kind"] == "perf"]
    md = []
    md.append("KVM_SET_GSI_ROUTING cost, irq_routing_perf_test, base vs patched.")
    md.append("")
    bdesc = meta.get("base_desc", "Linux 7.3.4")
    bver = bdesc.split()[-1]
    pdir = meta.get("patch_dir", "patches/")
    md.append(f"- kernels: base `{rel['base']}` ({bdesc}), patched `{rel['patched']}` ({bver} + {pdir}) (uname -r)")
    md.append(f"- config: configs/kvm.config (tinyconfig + fragment), sha256 `{meta['kvm_config_sha256'][:12]}`")
    md.append(f"- {meta['qemu_version']}; {meta['qemu_mode']}")
    if meta.get("overrides", "").strip():
        md.append(f"- kernels and test binary given on the command line, not rebuilt by this run: "
                  f"{meta['overrides'].strip()} (the config hash is that of the current configs/kvm.config)")
    md.append("- times are guest time under icount (one instruction = 1 ns), "
              "not hardware time; same static test binary and seed on both kernels; "
              "each cell's timed updates follow 10 untimed ones of the same kind (-w)")
    its = iterations_line(perf)
    if its:
        md.append(its)
    md.append("")
    md.append("With the memory controller: the tests run in a child cgroup with memory accounting "
              "(like a VMM under systemd), so every GFP_KERNEL_ACCOUNT allocation is charged.")
    md.append("")
    md += perf_table(perf)
    if perf_nm:
        md.append("")
        md.append("Without the memory controller: both kernels booted again with `cgroup_disable=memory`, "
                  "which turns memory accounting off altogether (nothing is charged, the charging code is skipped); "
                  "fewer cells:")
        md.append("")
        md += perf_table(perf_nm)
    if allocs:
        md.append("")
        done = [r for r in allocs if "skipped" not in r["base"] and "skipped" not in r["patched"]]
        if done:
            md.append("Kernel allocations per update in steady state "
                      "(kmalloc + kmem_cache_alloc + mm_page_alloc events of the test process, "
                      "(count(N2) - count(N1)) / (N2 - N1)):")
            md.append("")
            md.append("| routes | mode | N1, N2 | base allocs/update | patched allocs/update |")
            md.append("|---:|---|---|---:|---:|")
            for r in done:
                md.append(f"| {r['routes']} | {r['mode']} | {r['n1']}, {r['n2']} "
                          f"| {r['base']['per_update']:.2f} | {r['patched']['per_update']:.2f} |")
        else:
            md.append("Allocations per update: not measured (the kernels have no kmem trace events).")
    if mems:
        md.append("")
        md.append("Kernel memory per VM, from memory.current of the test's cgroup "
                  "(`irq_routing_perf_test --mem-vms 16 -r R --mem-shrink 24`: 16 VMs with an in-kernel irqchip; "
                  "four updates with R routes, every route changing, then four with the first 24; "
                  "memory.current moves in batches of the memcg per-CPU charge cache, "
                  "so a value is good to about 16 KiB per VM):")
        md.append("")
        md += mem_table(mems)
    tg = targets(perf, allocs, mems)
    if len(tg) > 2:
        md.append("")
        if "7.3" in bdesc:
            md.append("Targets (memory-controlled run):")
        else:
            md.append("The targets set for the 7.3 series against a 7.3.4 base, for reference; "
                      "memory-controlled run:")
        md.append("")
        md += tg
    with open(os.path.join(a.out, "bench.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    # --- plot ---------------------------------------------------------------
    plot(a.out, perf, rel)


TCG_NOTE = "QEMU TCG -icount shift=0: guest instruction time, not hardware time"


def plot(out, perf, rel, note=TCG_NOTE, name="bench"):
    """OUT/NAME.png: us/update against routes, base and patched."""
    gp = shutil.which("gnuplot")
    if not gp:
        fail("gnuplot not found (Debian package gnuplot-nox)")
    modes = ["full", "churn", "same"]
    dat = os.path.join(out, name + ".dat")
    with open(dat, "w") as f:
        for kname in ("base", "patched"):
            for m in modes:
                f.write(f"# {kname} {m}: routes avg_us\n")
                for r in sorted((r for r in perf if r["mode"] == m and not r["irqfds"] and not r["inject"]),
                                key=lambda r: r["routes"]):
                    f.write(f"{r['routes']} {r[kname]['avg_us']}\n")
                f.write("\n\n")
    png = os.path.join(out, name + ".png")
    colors = {"full": "#d62728", "churn": "#1f77b4", "same": "#2ca02c"}
    plots = []
    idx = 0
    # Colour per mode; base dashed with open points, patched solid and filled.
    pts = {"base": {"full": 6, "churn": 8, "same": 4}, "patched": {"full": 7, "churn": 9, "same": 5}}
    for kname, dash in (("base", "dt 2"), ("patched", "dt 1")):
        for m in modes:
            plots.append(f"'{dat}' index {idx} using 1:2 with linespoints lw 2 pt {pts[kname][m]} ps 1.2 {dash} "
                         f"lc rgb '{colors[m]}' title '{kname} {m}'")
            idx += 1
    script = f"""
set terminal pngcairo size 1000,700 font ',11'
set output '{png}'
set title "KVM_SET_GSI_ROUTING, irq_routing_perf_test: base {rel.get('base')} vs patched {rel.get('patched')}\\n({note})" noenhanced
set xlabel 'MSI routes'
set ylabel 'us/update (average)'
set logscale xy
set grid xtics ytics mxtics mytics
set key top left box opaque noenhanced
set xrange [0.7:6000]
plot {', '.join(plots)}
"""
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        fail("gnuplot failed: " + r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "gnuplot failed")
    os.remove(dat)


if __name__ == "__main__":
    main()
