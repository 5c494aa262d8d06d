"""Where the reference loop's time goes, per variant (bench/cuda/loop_profile.sh).

Reads `perf report --stdio -n --sort comm,dso` of each run (<variant>.<round>.dso.txt)
and prints, per shared object, the median samples per round of the loop's own
threads (the main thread and PyTorch's autograd thread take turns: forward and
optimizer on one, backward on the other, so their samples together are the
step's critical path on the CPU) and of the guard's background thread (on
another core, beside the loop), with each variant's difference from the first.
  python3 loop_profile_table.py <dir> <variant>...
"""

import collections
import glob
import os
import re
import statistics
import sys

BACKGROUND = 'mate-guard-cuda'  # the device allocator's background thread
LINE = re.compile(r'^\s*[0-9.]+%\s+(\d+)\s+(\S+)\s+(.+?)\s*$')


def read(path):
    loop, background = collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            samples, comm, dso = int(m.group(1)), m.group(2), m.group(3)
            (background if comm == BACKGROUND else loop)[dso] += samples
    return loop, background


def main():
    where, variants = sys.argv[1], sys.argv[2:]
    runs = {v: [read(p) for p in sorted(glob.glob(os.path.join(where, f'{v}.*.dso.txt')))] for v in variants}
    runs = {v: r for v, r in runs.items() if r}
    if not runs:
        sys.exit(f'no <variant>.<round>.dso.txt in {where}')
    names = list(runs)

    def med(v, part, dso=None):
        return statistics.median(sum(r[part].values()) if dso is None else r[part][dso] for r in runs[v])

    dsos = sorted({d for v in names for r in runs[v] for d in r[0]}, key=lambda d: -max(med(v, 0, d) for v in names))
    base = names[0]
    print('| loop threads: samples by object | ' + ' | '.join(names) + ' |')
    print('|---|' + '---|' * len(names))
    for d in dsos:
        cells = [med(v, 0, d) for v in names]
        if max(cells) < 50:
            continue
        print(
            f'| {d} | '
            + ' | '.join(f'{c:.0f}' + (f' ({c - cells[0]:+.0f})' if v != base else '') for v, c in zip(names, cells))
            + ' |'
        )
    tot = [med(v, 0) for v in names]
    print(
        '| **all** | '
        + ' | '.join(f'{t:.0f}' + (f' ({t - tot[0]:+.0f})' if v != base else '') for v, t in zip(names, tot))
        + ' |'
    )
    print('| background thread | ' + ' | '.join(f'{med(v, 1):.0f}' for v in names) + ' |')
    print(f'(median over {", ".join(f"{v} {len(runs[v])}" for v in names)} rounds)')


if __name__ == '__main__':
    main()
