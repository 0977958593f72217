#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""results/mutants.md from scripts/mutants.sh's summary.tsv.

Usage: mutants-report.py MUTANT_DIR SUMMARY_TSV SECONDS [PLANNED]
"""
import csv
import os
import platform
import subprocess
import sys


def header(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith('diff --git '):
                break
            if line.startswith(key + ':'):
                return line.split(':', 1)[1].strip()
    return ''


def main():
    mdir, tsv, secs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    planned = int(sys.argv[4]) if len(sys.argv) > 4 else None
    with open(tsv) as f:
        rows = list(csv.DictReader(f, delimiter='\t'))
    caught = sum(r['result'] == 'caught' for r in rows)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        rev = subprocess.run(['git', '-C', top, 'rev-parse', '--short=12', 'HEAD'],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = 'unknown'
    print('# Mutation check: do the tests catch plausible bugs of the series?')
    print()
    ran = f'{caught} of {len(rows)} mutants caught'
    if planned is not None and planned != len(rows):
        ran += f' ({len(rows)} of the {planned} this run was asked for have run so far)'
    rfc = os.environ.get('RFC')
    what = (f'`make mutants-rfc`', f'`rfc/{rfc}/mutants/`', 'the RFC tree (`rfc-applied`)',
            '`tests/rfc.list`') if rfc else ('`make mutants`', '`tests/mutants/`',
                                             'the patched tree', '`tests/debug.list`')
    print(f'**{ran}** ({what[0]}, '
          f'{secs // 60} min {secs % 60} s, repository commit {rev}, on {platform.node()}).')
    print()
    print(f'Each mutant in {what[1]} is planted alone in {what[2]} '
          '(`git apply`), the kernel is rebuilt incrementally with '
          '`configs/kvm.config` + `configs/kvm-debug.config` (KASAN, lockdep, '
          'PROVE_RCU, kmemleak, failslab, the series\' debug assertions) and '
          'booted under QEMU TCG (`-M q35 -cpu EPYC,+svm -smp 2`) running the '
          f'tests of {what[3]} named in its `Tests:` line (all of them '
          'when it has none).  Caught: a test failed, '
          'the kernel warned or crashed, or the run did not finish '
          '(`scripts/verdict.sh`).  The unmutated tree passed the same boot first.')
    print()
    print('| mutant | patch | what it plants | expected catcher | result | what failed | s |')
    print('|---|---|---|---|---|---|---:|')
    for r in rows:
        path = os.path.join(mdir, r['mutant'] + '.patch')
        detail = r['detail'].replace('|', '\\|')
        print(f"| {r['mutant']} | {r['patch']} | {header(path, 'Mutant')} | "
              f"{header(path, 'Expect')} | {r['result']} | {detail} | {r['seconds']} |")
    # The catalogue's own account of what it does not cover.
    readme = os.path.join(mdir, 'README.md')
    if os.path.exists(readme):
        with open(readme) as f:
            text = f.read()
        at = text.find('## Patches with no mutant')
        if at >= 0:
            print()
            print(text[at:].rstrip())


if __name__ == '__main__':
    main()
