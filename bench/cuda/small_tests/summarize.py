"""Summarizes bench/cuda/small_tests/run.sh's output folder: per file and in
total, the guarded/plain ratio of summed test time (median over rounds), the
end-of-test share, wall time, and the guard's counters (MATE_GUARD_CUDA_STATS)."""

import glob
import json
import os
import re
import statistics
import sys

out = sys.argv[1]
runs = {}  # (mode, variant) -> [ {file: {...}} per round ]
walls = {}
counters = {}
spent = {}  # (mode, variant) -> summed end-of-test step seconds and counts over every round
per_test = {}  # (mode, variant) -> node id -> [(seconds, first test of its process)] per round
for d in sorted(glob.glob(os.path.join(out, '*-*-*'))):
    r, mode, variant = os.path.basename(d).split('-', 2)
    files = {}
    for f in glob.glob(os.path.join(d, 'times-*.json')):
        for name, e in json.load(open(f)).items():
            if name == '_tests':  # one process's tests in order: its first pays the process's start
                for i, (nodeid, sec) in enumerate(e):
                    t = files.setdefault(nodeid.split('::', 1)[0], {'tests': 0, 'seconds': 0.0, 'teardown': 0.0})
                    t['later'] = t.get('later', 0.0) + (sec if i else 0.0)
                    per_test.setdefault((mode, variant), {}).setdefault(nodeid, []).append((sec, i == 0))
                continue
            if name == '_guard':
                acc = spent.setdefault((mode, variant), {})
                for k, v in e.items():
                    acc[k] = acc.get(k, 0) + v
                continue
            t = files.setdefault(name, {'tests': 0, 'seconds': 0.0, 'teardown': 0.0})
            for k in ('tests', 'seconds', 'teardown'):
                t[k] += e[k]
    runs.setdefault((mode, variant), []).append(files)
    a, b = open(os.path.join(d, 'wall')).read().split(' - ')
    walls.setdefault((mode, variant), []).append(float(a) - float(b))
    for line in open(os.path.join(d, 'log'), errors='replace'):
        if 'cuda stats:' in line:
            for k, v in re.findall(r'(\w+)=([\d.]+)', line):
                counters.setdefault((mode, variant), {}).setdefault(k, []).append(float(v))

for mode, variant in sorted(k for k in runs if k[1] != 'plain'):
    if (mode, 'plain') not in runs:
        continue
    plain, guard = runs[(mode, 'plain')], runs[(mode, variant)]
    names = sorted(plain[0])
    print(
        f'\n{mode}, {variant}: {len(guard)} rounds, median of per-round ratios (summed test seconds, {variant} / plain)'
    )
    print(
        "| file | tests | plain s | guard s | ratio (each round's) | ratio without each process's first test | guard end-of-test s |"
    )
    print('|---|---|---|---|---|---|---|')
    for name in names + ['TOTAL']:
        pick = (
            (lambda run: sum(e['seconds'] for e in run.values()))
            if name == 'TOTAL'
            else (lambda run: run[name]['seconds'])
        )
        tear = (
            (lambda run: sum(e['teardown'] for e in run.values()))
            if name == 'TOTAL'
            else (lambda run: run[name]['teardown'])
        )
        ps = [pick(x) for x in plain]
        gs = [pick(x) for x in guard]
        ratios = [g / p for p, g in zip(ps, gs) if p > 0]
        later = (
            (lambda run: sum(e.get('later', 0) for e in run.values()))
            if name == 'TOTAL'
            else (lambda run: run[name].get('later', 0))
        )
        lr = [later(g) / later(p) for p, g in zip(plain, guard) if later(p) > 0]
        tests = sum(e['tests'] for e in plain[0].values()) if name == 'TOTAL' else plain[0][name]['tests']
        print(
            f'| {name} | {tests} | {statistics.median(ps):.2f} | {statistics.median(gs):.2f} | '
            f'{statistics.median(ratios):.2f}x ({" ".join(f"{r:.2f}" for r in ratios)}) | '
            f'{(f"{statistics.median(lr):.2f}x" if lr else "-")} | {statistics.median([tear(x) for x in guard]):.2f} |'
        )
    pt, gt = per_test.get((mode, 'plain'), {}), per_test.get((mode, variant), {})
    excess = []
    for nodeid, g in gt.items():
        p = pt.get(nodeid)
        if p:
            excess.append(
                (
                    statistics.median(x[0] for x in g) - statistics.median(x[0] for x in p),
                    nodeid,
                    sum(x[1] for x in g),
                    sum(x[1] for x in p),
                )
            )
    if excess:
        excess.sort(reverse=True)
        print(
            "largest per-test excess (median guard - median plain; how often a process's first test, guard/plain): "
            + '; '.join(f'{n} +{1e3 * d:.0f} ms ({fg}/{fp})' for d, n, fg, fp in excess[:6])
        )
    pw, gw = walls[(mode, 'plain')], walls[(mode, variant)]
    print(
        f'wall: plain {statistics.median(pw):.1f} s, {variant} {statistics.median(gw):.1f} s '
        f'({statistics.median([g / p for p, g in zip(pw, gw)]):.2f}x, whole pytest processes)'
    )
    sp = spent.get((mode, variant))
    if sp:
        tests = sum(sum(e['tests'] for e in run.values()) for run in guard)
        print(
            f'end-of-test steps per test: gc.collect {1e3 * sp["gc.collect"] / tests:.1f} ms '
            f'({sp["gc.collects"] / tests:.1f} calls), check_canaries {1e3 * sp["check_canaries"] / tests:.1f} ms '
            f'({sp["checks"] / tests:.1f} calls)'
        )
    c = counters.get((mode, variant))
    if c:
        keys = [
            'allocations',
            'readyHits',
            'readyMisses',
            'recycled',
            'allocMs',
            'freeMs',
            'backgroundMs',
            'launches',
            'trackMs',
            'launchCallMs',
            'pySites',
            'pyMs',
            'freeWaits',
        ]
        n = len(guard)  # counters are per process (one per xdist worker): summed, then per round
        print(
            'guard counters per round, summed over processes: '
            + ', '.join(f'{k}={sum(c[k]) / n:.1f}' for k in keys if k in c)
        )
