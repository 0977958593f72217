#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Base vs patched on a real host, from two scripts/host-bench.sh runs.

Usage: scripts/host-compare.py [--out DIR] A.json B.json
       make host-compare A=A.json B=B.json

A is the run on the base kernel, B the run on the patched kernel (the
results/host-KERNEL.json files of make host-bench).  Prints make bench's
table (scripts/bench-report.py's), of the per-cell medians, with the spread
over the runs, and writes it to DIR/host-compare.md, with the plot
DIR/host-compare.png (DIR: results/).  Refuses (exit 1) two runs from
different machines (host name, CPU model, CPU or core count) or of different
matrices (cells, their arguments, iterations included).
"""
import argparse
import importlib.util
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True    # no scripts/__pycache__ in the clone


_spec = importlib.util.spec_from_file_location("host_report", os.path.join(HERE, "host-report.py"))
hr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hr)
br = hr.br    # scripts/bench-report.py, which host-report.py imports
br.PROG = "host-compare"


def both(ma, mb, key):
    """ma[key], or both values when they differ."""
    return f"{ma[key]}" if ma[key] == mb[key] else f"{ma[key]} (base), {mb[key]} (patched)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results"))
    ap.add_argument("a", metavar="A.json", help="host-bench run on the base kernel")
    ap.add_argument("b", metavar="B.json", help="host-bench run on the patched kernel")
    args = ap.parse_args()
    runs = []
    for path in (args.a, args.b):
        try:
            with open(path) as f:
                j = json.load(f)
        except (OSError, ValueError) as e:
            br.fail(f"{path}: {e}")
        if j.get("meta", {}).get("kind") != "host-bench":
            br.fail(f"{path}: not a host-bench result (scripts/host-bench.sh writes results/host-KERNEL.json)")
        runs.append(j)
    ma, mb = runs[0]["meta"], runs[1]["meta"]

    diff = [f"{k} {ma[k]!r} vs {mb[k]!r}" for k in ("hostname", "cpu_model", "cpus", "cores") if ma[k] != mb[k]]
    if diff:
        br.fail("refusing to compare runs from different machines: " + "; ".join(diff))
    ca = {c["name"]: c for c in runs[0]["cells"]}
    cb = {c["name"]: c for c in runs[1]["cells"]}
    diff = []
    for label, x, y in (("only in A", ca, cb), ("only in B", cb, ca)):
        if set(x) - set(y):
            diff.append(f"{label}: {', '.join(n for n in x if n not in y)}")
    diff += [f"{n}: A runs '{c['command']}', B '{cb[n]['command']}'"
             for n, c in ca.items() if n in cb and c["command"] != cb[n]["command"]]
    if diff:
        br.fail("refusing to compare different matrices (HOST_SHORT, HOST_SCALE?): " + "; ".join(diff))

    perf = []
    for name, c in ca.items():
        row = {k: v for k, v in c.items() if k not in ("runs", "median", "spread")}
        row.update(base=c["median"], patched=cb[name]["median"],
                   base_spread=c["spread"], patched_spread=cb[name]["spread"])
        br.set_ratio(row)
        perf.append(row)
    reps = {"base": ma["repeat"], "patched": mb["repeat"]}

    def spread(row, kname):
        return hr.spread_pct(row[kname + "_spread"], reps[kname])

    rel = {"base": ma["kernel_release"], "patched": mb["kernel_release"]}
    meta = dict(ma, repeat=both(ma, mb, "repeat"), pinned_cpu=both(ma, mb, "pinned_cpu"))
    md = ["KVM_SET_GSI_ROUTING cost, irq_routing_perf_test on a real host, base vs patched.", "",
          f"- kernels: base `{rel['base']}` ({args.a}, {ma['date']}), "
          f"patched `{rel['patched']}` ({args.b}, {mb['date']}) (uname -r)"]
    md += hr.header(meta)
    if ma["binary_sha256"] == mb["binary_sha256"]:
        md.append(f"- the same test binary on both kernels (sha256 `{ma['binary_sha256'][:12]}`), seed 1")
    else:
        md.append(f"- WARNING: different test binaries: sha256 `{ma['binary_sha256'][:12]}` (base), "
                  f"`{mb['binary_sha256'][:12]}` (patched)")
    if ma["kvm_params"] != mb["kvm_params"]:
        md.append(f"- WARNING: different KVM module parameters: {ma['kvm_params']} (base), {mb['kvm_params']} (patched)")
    its = br.iterations_line(perf)
    if its:
        md.append(its)
    md.append("")
    md += br.perf_table(perf, spread)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "host-compare.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    if shutil.which("gnuplot"):
        br.plot(args.out, perf, rel, note=f"wall clock on {ma['cpu_model']}, medians over the runs",
                name="host-compare")
        print(f"\nplot: {os.path.join(args.out, 'host-compare.png')}")
    else:
        print("host-compare: no plot: gnuplot not found (Debian package gnuplot-nox)", file=sys.stderr)


if __name__ == "__main__":
    main()
