#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise the KCSAN data-race reports of scripts/kcsan.sh's boots.

Usage: kcsan-report.py [--times TSV] [--out FILE] NAME=OBJDIR:CONSOLE...

For each kernel NAME (objdir OBJDIR, serial console CONSOLE): the tree and
config it was built from, the QEMU command, the test outcome, and every
"BUG: KCSAN: data-race" report: its two accesses with their stacks, the
frames mapped to source files through the objdir's objects (nm), grouped
by the pair of racing functions.  A report is marked "routing" when an
access is in virt/kvm/, arch/x86/kvm/irq*, fs/eventfd.c or an irqfd or
eventfd function, "kvm" when elsewhere in KVM, "under KVM" when only a
caller (e.g. kvm_vcpu_ioctl) is.
"""
import argparse
import collections
import datetime
import os
import re
import subprocess
import sys

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
# SeaBIOS's screen-clearing sequences can precede the first kernel line.
ESC = re.compile(r'\x1b(\[[0-9;?]*[A-Za-z]|c)')
ACCESS = re.compile(r'^(race at unknown origin, with )?(.+?) to (0x[0-9a-f]+) of (\d+) bytes '
                    r'by (.+?) on cpu (\d+):$')
FRAME = re.compile(r'^\s*([A-Za-z0-9_.$]+)\+(0x[0-9a-f]+)/(0x[0-9a-f]+)')


def kernel_lines(path):
    """Console lines, \\r stripped; kernel lines without their timestamp."""
    with open(path, errors='replace') as f:
        for raw in f:
            line = ESC.sub('', raw.rstrip('\n').replace('\r', ''))
            m = TS.match(line)
            yield (True, line[m.end():]) if m else (False, line)


def symbol_files(objdir):
    """Function name -> source files defining it, from the objdir's objects."""
    objs = []
    for root, dirs, files in os.walk(objdir):
        dirs[:] = [d for d in dirs if d not in ('tools', 'scripts', 'usr', 'source')]
        for f in files:
            if f.endswith('.o') and not f.startswith('built-in') and f not in (
                    'vmlinux.o', '.vmlinux.export.o') and not f.endswith('.mod.o'):
                objs.append(os.path.join(root, f))
    syms = collections.defaultdict(set)
    for i in range(0, len(objs), 400):
        out = subprocess.run(['nm', '-A', '--defined-only'] + objs[i:i + 400],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            try:
                path, rest = line.split(':', 1)
                _, t, name = rest.split()
            except ValueError:
                continue
            if t in 'tTwW':
                rel = os.path.relpath(path, objdir)
                syms[name].add(rel[:-2] + ('.S' if rel.startswith('arch/x86/entry')
                                           else '.c'))
    return syms


def where(func, syms):
    for name in (func, re.sub(r'\.(isra|constprop|part|cold)\.?\d*.*$', '', func)):
        if name in syms:
            return sorted(syms[name])
    return []


def scope(func, files):
    for f in files:
        if f.startswith('virt/kvm/') or f.startswith('arch/x86/kvm/irq') or \
           f == 'fs/eventfd.c':
            return 'routing'
    if 'irqfd' in func or 'eventfd' in func:
        return 'routing'
    for f in files:
        if f.startswith('arch/x86/kvm/'):
            return 'kvm'
    return ''


def parse_reports(path):
    reports, cur, section = [], None, None
    for kern, line in kernel_lines(path):
        if not kern:
            continue
        if line.startswith('BUG: KCSAN:'):
            cur = {'title': line[len('BUG: '):], 'accesses': [], 'value': '',
                   'reporter': ''}
            section = None
            continue
        if cur is None:
            continue
        if line.startswith('=' * 20):
            reports.append(cur)
            cur = None
            continue
        m = ACCESS.match(line)
        if m:
            section = {'unknown': bool(m.group(1)), 'type': m.group(2),
                       'size': int(m.group(4)), 'by': m.group(5), 'cpu': m.group(6),
                       'frames': []}
            cur['accesses'].append(section)
            continue
        if line.startswith('value changed:'):
            cur['value'] = line[len('value changed:'):].strip()
            section = None
            continue
        if line.startswith('CPU:') and not cur['reporter']:
            cur['reporter'] = line
            continue
        if not line.strip():
            section = None
            continue
        m = FRAME.match(line)
        if m and section is not None:
            section['frames'].append(m.group(1) + '+' + m.group(2))
    if cur is not None:		# cut off (the boot ended inside a report)
        cur['title'] += ' (report cut off)'
        reports.append(cur)
    return reports


def outcome(path):
    res = {'tap': [], 'sub': [], 'took': [], 'done': '', 'qemu': '', 'exit': '',
           'version': '', 'msgs': [], 'kcsan': []}
    for kern, line in kernel_lines(path):
        if line.startswith('# qemu-system'):
            res['qemu'] = line[2:]
        elif line.startswith('# boot.sh: qemu exit'):
            res['exit'] = line[len('# boot.sh: '):]
        elif kern and line.startswith('Linux version'):
            res['version'] = line
        elif kern and line.startswith('kcsan:'):
            res['kcsan'].append(line)
        elif re.match(r'^(not )?ok \d+ \S+', line):
            res['tap'].append(line)
        elif re.match(r'^# (not )?ok \d+ ', line) or re.match(r'^# # (PASSED|FAILED|Totals)', line):
            res['sub'].append(line[2:])
        elif re.match(r'^# # .*(injections|[Aa]ssertion|FAIL|SKIP)', line):
            res['msgs'].append(line[4:])
        elif line.startswith('# irqroute: ') and ('took' in line or 'timed out' in line or
                                                  'exit status' in line):
            res['took'].append(line[len('# irqroute: '):])
        elif line.startswith('irqroute-tests: done'):
            res['done'] = line
    return res


def tree_of(objdir):
    src = os.path.realpath(os.path.join(objdir, 'source'))
    try:
        desc = subprocess.run(['git', '-C', src, 'log', '-1', '--format=%h %s'],
                              capture_output=True, text=True).stdout.strip()
        br = subprocess.run(['git', '-C', src, 'rev-parse', '--abbrev-ref', 'HEAD'],
                            capture_output=True, text=True).stdout.strip()
    except OSError:
        desc, br = '', ''
    return src, br, desc


def kcsan_config(objdir):
    try:
        with open(os.path.join(objdir, '.config')) as f:
            lines = [l.strip() for l in f if 'KCSAN' in l and not l.startswith('# end')]
    except OSError:
        return []
    return [l.replace('# ', '').replace(' is not set', '=n') for l in lines
            if l.startswith('CONFIG_') or l.endswith('is not set')]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--times')
    ap.add_argument('--out', default='-')
    ap.add_argument('kernels', nargs='+', help='NAME=OBJDIR:CONSOLE')
    a = ap.parse_args()

    kernels = []
    for spec in a.kernels:
        name, rest = spec.split('=', 1)
        objdir, console = rest.split(':', 1)
        kernels.append((name, objdir, console))

    o = []
    w = o.append
    w('# KCSAN: data races under x86/irq_routing_concurrency_test\n')
    w('Written by `scripts/kcsan.sh` (`make kcsan`) on %s; regenerate the report alone with '
      '`scripts/kcsan-report.py`.  Config: tinyconfig + `configs/kvm.config` + '
      '`configs/kvm-kcsan.config`.  Test list: `tests/kcsan.list`.\n' %
      datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))
    if a.times and os.path.exists(a.times):
        w('## Wall times\n')
        w('| step | seconds | exit |')
        w('|---|---:|---:|')
        with open(a.times) as f:
            for line in f:
                p = line.rstrip('\n').split('\t')
                if len(p) == 3:
                    w('| %s | %s | %s |' % tuple(p))
        w('')

    all_groups = collections.OrderedDict()
    for name, objdir, console in kernels:
        src, br, desc = tree_of(objdir)
        w('## Kernel `%s`\n' % name)
        w('- tree: `%s` (branch `%s`, HEAD `%s`), objdir `%s`' % (
            os.path.relpath(src), br, desc, os.path.relpath(objdir)))
        cfg = kcsan_config(objdir)
        if cfg:
            w('- KCSAN config: ' + ', '.join('`%s`' % c for c in cfg))
        if not os.path.exists(console):
            w('- no console log `%s`: not booted\n' % console)
            continue
        res = outcome(console)
        w('- console: `%s`' % os.path.relpath(console))
        w('- %s' % (res['version'] or 'no "Linux version" line'))
        w('- QEMU: `%s`' % (res['qemu'] or '?'))
        w('  (TCG, no `-icount`: %s)' % ('yes' if '-icount' not in res['qemu'] else
                                           'NO, -icount given'))
        w('- boot: %s; %s' % (res['exit'] or 'no exit line',
                              res['done'] or '**no "irqroute-tests: done" line**'))
        for l in res['kcsan']:
            w('- kernel: `%s`' % l)
        w('- test outcome:')
        for l in res['tap'] + res['took']:
            w('  - `%s`' % l)
        for l in res['sub'] + res['msgs']:
            w('  - `%s`' % l)
        reps = parse_reports(console)
        syms = symbol_files(objdir) if reps else {}
        n_routing = 0
        for r in reps:
            for acc in r['accesses']:
                acc['where'] = [(fr, where(fr.split('+')[0], syms)) for fr in acc['frames']]
            tops = [acc['where'][0] for acc in r['accesses'] if acc['where']]
            r['scope'] = max((scope(f.split('+')[0], files) for f, files in tops),
                             key=lambda s: {'routing': 2, 'kvm': 1, '': 0}[s], default='')
            deep = [scope(f.split('+')[0], files) for acc in r['accesses']
                    for f, files in acc['where']]
            if not r['scope'] and 'routing' in deep:
                r['scope'] = 'under KVM'
            n_routing += r['scope'] == 'routing'
            key = r['title'].split(' (report cut off)')[0]
            g = all_groups.setdefault(key, {'seen': collections.Counter(), 'first': r})
            g['seen'][name] += 1
        w('- KCSAN reports: %d (%d distinct), %d with an access in the routing code\n' % (
            len(reps), len({r['title'] for r in reps}), n_routing))

    w('## Reports\n')
    if not all_groups:
        w('No "BUG: KCSAN" report on any console.\n')
    for i, (title, g) in enumerate(all_groups.items(), 1):
        r = g['first']
        seen = ', '.join('%s x%d' % kv for kv in g['seen'].items())
        mark = {'routing': ' **[routing]**', 'kvm': ' [kvm]',
                'under KVM': ' [under a KVM ioctl; access outside KVM]'}.get(r['scope'], '')
        w('### %d. %s%s\n' % (i, title, mark))
        w('Seen on: %s.  %s\n' % (seen, ('Value changed: `%s`.' % r['value'])
                                   if r['value'] else 'No value change printed.'))
        for acc in r['accesses']:
            w('- %s%s of %d bytes by %s on cpu %s:' % (
                'race at unknown origin, with ' if acc['unknown'] else '',
                acc['type'], acc['size'], acc['by'], acc['cpu']))
            for fr, files in acc['where'][:12]:
                w('  - `%s`%s' % (fr, (' (%s)' % ', '.join(files[:3])) if files else ''))
            if len(acc['where']) > 12:
                w('  - ... %d more frames' % (len(acc['where']) - 12))
        w('')

    text = '\n'.join(o) + '\n'
    if a.out == '-':
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out + '.tmp', 'w') as f:
            f.write(text)
        os.replace(a.out + '.tmp', a.out)


if __name__ == '__main__':
    main()
