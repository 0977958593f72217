#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Put the "make bench" results into README.md.

Usage: scripts/readme-results.py [--bench results/bench.md] [--readme README.md]

Replaces the text between the lines "<!-- BEGIN RESULTS -->" and
"<!-- END RESULTS -->" of README.md with results/bench.md, the published
reference numbers of the original series (labelled as such), a note that
TCG instruction time is not hardware time, and how the allocation counts
are measured.  When README.md does not exist or lacks the markers, writes
the block to results/README-results.md instead (next to bench.md) and says so.
"""
import argparse
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- BEGIN RESULTS -->"
END = "<!-- END RESULTS -->"

REFERENCE = (
    "Reference (Xeon 8336C, published with the original v3 series, not measured here): "
    "512 routes 31.140 -> 17.462 us/update; 4096 routes 303.854 -> 65.901 us/update "
    "(irq_routing_perf_test, 50000 iterations)"
)

NOTES = """\
The table above is produced by `make bench` (scripts/bench.sh): the base
and the patched kernel, built from the same configs/kvm.config, each boot
once under QEMU TCG with `-icount shift=0,sleep=off` and run the same static
irq_routing_perf_test binary with the same seed over the whole matrix.  Its
times are TCG instruction time (the guest clock advances 1 ns per emulated
instruction), not hardware time: they show the relative cost of the code
paths and are repeatable (two runs agree within a few percent, checked with
`scripts/bench-compare.py A/bench.json B/bench.json`, medians per cell;
the last comparison is in results/bench-compare.txt), but absolute
microseconds on real hardware differ, as do the effects of caches, memory
bandwidth and real SRCU/RCU grace periods.  Raw values: results/bench.json;
plot: results/bench.png.

Allocations per update (configs/kvm.config enables trace events for
this; a kernel without them skips the cells): the guest
script scripts/bench-allocs.sh enables kmem:kmalloc, kmem:kmem_cache_alloc
and kmem:mm_page_alloc, restricts them with set_event_pid plus
options/event-fork to the irq_routing_perf_test process and its threads,
runs the test twice with N1 < N2 updates (modes full and same, 100, 512
and 4096 routes) and reports (count(N2) - count(N1)) / (N2 - N1): the allocations of
one update in steady state, with process start, VM and vCPU creation and
the first table cancelled out.  A trace-buffer overrun fails the cell.
Allocations made by other tasks on the test's behalf (kworkers, RCU
callbacks) are not counted."""


def block(bench_md):
    with open(bench_md) as f:
        table = f.read().strip("\n")
    return f"{BEGIN}\n{table}\n\n{REFERENCE}\n\n{NOTES}\n{END}\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(TOP, "results", "bench.md"))
    ap.add_argument("--readme", default=os.path.join(TOP, "README.md"))
    a = ap.parse_args()
    if not os.path.exists(a.bench):
        print(f"readme-results: {a.bench} not found: run make bench", file=sys.stderr)
        sys.exit(1)
    new = block(a.bench)
    text = open(a.readme).read() if os.path.exists(a.readme) else None
    if text is not None and BEGIN in text and END in text and text.index(BEGIN) < text.index(END):
        head = text[:text.index(BEGIN)]
        tail = text[text.index(END) + len(END):].lstrip("\n")
        out = head + new + ("\n" + tail if tail else "")
        if out != text:
            with open(a.readme + ".tmp", "w") as f:
                f.write(out)
            os.replace(a.readme + ".tmp", a.readme)
        print(f"readme-results: updated the results block of {a.readme}", file=sys.stderr)
        return
    dest = os.path.join(os.path.dirname(os.path.abspath(a.bench)), "README-results.md")
    with open(dest, "w") as f:
        f.write(new)
    why = "does not exist" if text is None else f"has no {BEGIN} / {END} markers"
    print(f"readme-results: {a.readme} {why}; wrote {dest}", file=sys.stderr)


if __name__ == "__main__":
    main()
