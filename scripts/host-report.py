#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise the runs of scripts/host-bench.sh on this machine and kernel:
OUT/host-KERNEL.json (the machine, the matrix, every run's irq_routing_perf
line and per cell the median over the runs of each of its values and the
spread of us/update) and OUT/host-KERNEL.md (the table), KERNEL = uname -r.

Usage: host-report.py --matrix LIST --runs DIR --repeat N --cpu N --scale F
                      --short 0|1 --binary PATH --out DIR

DIR/NAME.I.log is the output of run I (1..N) of the cell NAME of LIST.
Fails (exit 1, one line) when a run has no irq_routing_perf line, ran other
parameters than its cell's, or ran on another kernel.
"""
import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import re
import socket
import statistics
import sys

sys.dont_write_bytecode = True    # no scripts/__pycache__ in the clone
_spec = importlib.util.spec_from_file_location(
    "bench_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-report.py"))
br = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(br)
br.PROG = "host-bench"

HOST_PERF_RE = re.compile(r"^# irq_routing_perf: (.*)$", re.M)


def metric(row):
    """The value a cell is judged by: total_us for grow, else avg_us."""
    return "total_us" if row["mode"] == "grow" else "avg_us"


def summarise(row, runs):
    """Per-field median over the runs; the spread of the cell's metric."""
    med = {}
    for k, v in runs[0].items():
        vals = [r[k] for r in runs]
        numeric = all(isinstance(x, (int, float)) for x in vals)
        med[k] = statistics.median(vals) if numeric else v
    vals = [r[metric(row)] for r in runs]
    m = statistics.median(vals)
    spread = {"metric": metric(row), "median": m, "min": min(vals), "max": max(vals),
              "stddev": statistics.stdev(vals) if len(vals) > 1 else 0.0,
              "rel": (max(vals) - min(vals)) / m if m else 0.0}
    return med, spread


def spread_pct(s, runs):
    return f"{s['rel'] * 100:.1f}%" if runs > 1 else "-"


def machine():
    model = "?"
    cores = set()
    phys = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = (x.strip() for x in line.partition(":"))
            if k == "model name":
                model = v
            elif k == "physical id":
                phys = v
            elif k == "core id":
                cores.add((phys, v))
    params = {}
    for mod, par in (("kvm_intel", "enable_apicv"), ("kvm_amd", "avic")):
        path = f"/sys/module/{mod}/parameters/{par}"
        if os.path.exists(path):
            with open(path) as f:
                params[f"{mod}.{par}"] = f.read().strip()
    u = os.uname()
    return {"hostname": socket.gethostname(), "cpu_model": model, "cpus": os.cpu_count(),
            "cores": len(cores) or os.cpu_count(), "kernel_release": u.release,
            "kernel_version": u.version, "kvm_params": params}


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--matrix", "--runs", "--repeat", "--cpu", "--scale", "--short", "--binary", "--out"):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    repeat = int(a.repeat)

    with open(a.binary, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {"kind": "host-bench", **machine(), "pinned_cpu": int(a.cpu), "repeat": repeat,
            "scale": float(a.scale), "short": a.short == "1", "binary": a.binary,
            "binary_sha256": sha, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%FT%TZ"),
            "matrix": os.path.abspath(a.matrix)}
    krel = meta["kernel_release"]

    cells = []
    for c in br.read_matrix(a.matrix):
        row = br.cell_row(c)
        runs = []
        for i in range(1, repeat + 1):
            log = os.path.join(a.runs, f"{row['name']}.{i}.log")
            with open(log, errors="replace") as f:
                m = HOST_PERF_RE.search(f.read())
            if not m:
                br.fail(f"cell {row['name']}, run {i}: no irq_routing_perf line (log: {log})")
            p = br.kv(m.group(1))
            br.check_perf(row, p, f"run {i}", log)
            if p.get("kernel") != krel:
                br.fail(f"cell {row['name']}, run {i}: ran on kernel {p.get('kernel')}, not {krel} (log: {log})")
            runs.append(p)
        row["median"], row["spread"] = summarise(row, runs)
        row["runs"] = runs
        cells.append(row)

    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"host-{krel}")
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "cells": cells}, f, indent=1)
        f.write("\n")

    md = [f"KVM_SET_GSI_ROUTING cost, irq_routing_perf_test on the host's /dev/kvm, kernel `{krel}`.",
          "", f"- kernel: `{krel}` (uname -r), `{meta['kernel_version']}`"]
    md += header(meta)
    md.append(f"- test binary sha256 `{sha[:12]}`, seed 1" + (", short form (HOST_SHORT=1)" if meta["short"] else ""))
    its = br.iterations_line(cells)
    if its:
        md.append(its)
    md.append("")
    md.append("| routes | mode | irqfds | iterations | us/update | p50 | p99 | spread |")
    md.append("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in cells:
        p, s = r["median"], spread_pct(r["spread"], repeat)
        if r["mode"] == "grow":
            md.append(f"| 1..{r['routes']} | grow (total of one pass) | {r['irqfds']} | {r['iterations']} "
                      f"| {p['total_us'] / 1000:,.2f} ms total | {br.fmt(p['p50_us'])} | {br.fmt(p['p99_us'])} | {s} |")
            continue
        mode = r["mode"] + (f", inject, {r['vcpus']} vCPUs ({p['injected']:g} irqs)" if r["inject"] else "")
        md.append(f"| {r['routes']} | {mode} | {r['irqfds']} | {r['iterations']} | {br.fmt(p['avg_us'])} "
                  f"| {br.fmt(p['p50_us'])} | {br.fmt(p['p99_us'])} | {s} |")
    with open(base + ".md", "w") as f:
        f.write("\n".join(md) + "\n")


def header(meta):
    """The machine and method lines of a table's description."""
    kp = ", ".join(f"{k}={v}" for k, v in meta["kvm_params"].items()) or "kvm_intel/kvm_amd not loaded"
    return [
        f"- machine: {meta['hostname']}, {meta['cpu_model']}, {meta['cpus']} CPUs "
        f"({meta['cores']} cores); {kp}",
        "- wall clock (CLOCK_MONOTONIC around each ioctl), no QEMU; each run pinned with taskset to "
        f"CPU {meta['pinned_cpu']} (all its threads); per cell the median over {meta['repeat']} run(s) of each "
        "value of the test's summary line; spread: (max - min) / median of us/update "
        "(grow: of the total) over the runs",
    ]


if __name__ == "__main__":
    main()
