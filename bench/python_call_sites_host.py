"""What the stacks of a guarded numpy array cost through the host guard
(its NEP 49 handler: a Python and a native stack at allocation and at
free), the user's function under 35 runner frames as in
bench/python_call_sites.py's pytest shape: CPU time per np.empty(100) and
its free, stacks on against off (GuardAllocatorConfig(capture_stacks=...)),
for each libmate_guard_cuda.so given, rounds alternating, medians. CPU
only: the CUDA driver is pointed at a missing file.
  python3 bench/python_call_sites_host.py [rounds] name=libmate_guard_cuda.so ...
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import python_call_sites

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 20000


def child(stacks, d):
    sys.path.insert(0, python_call_sites.write_packages(d))
    import fakerunner
    import numpy as np

    import mate_guard

    mate_guard.install_guard_allocator(mate_guard.GuardAllocatorConfig(capture_stacks=stacks))

    def test_fn():  # the user's frame
        for _ in range(N // 20):  # warm-up
            np.empty(100)
        t0 = time.thread_time_ns()
        for _ in range(N):
            a = np.empty(100)
            del a
        return (time.thread_time_ns() - t0) / N

    print(fakerunner.call_0(test_fn))


def run(lib, stacks, d):
    env = dict(
        os.environ,
        PYTHONPATH=os.path.join(ROOT, 'packages', 'python'),
        MATE_GUARD_CUDA_LIBRARY=lib,
        MATE_GUARD_CUDA_DRIVER=os.path.join(d, 'no-libcuda.so.1'),
        MATE_GUARD_REPORT_DIR=d,
    )
    out = subprocess.run(
        [sys.executable, __file__, '--child', str(int(stacks)), d], env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.exit(out.stdout + out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


if __name__ == '__main__':
    if sys.argv[1:2] == ['--child']:
        child(sys.argv[2] == '1', sys.argv[3])
        sys.exit(0)
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    libs = [a.split('=', 1) for a in sys.argv[2:]]
    d = tempfile.mkdtemp(prefix='mate-bench-host-sites-')
    got = {(name, s): [] for name, _ in libs for s in (True, False)}
    for _ in range(rounds):
        for name, lib in libs:
            for s in (True, False):
                got[(name, s)].append(run(lib, s, d))
    print(f'ns of CPU per array (np.empty(100) and its free), median of {rounds} rounds of {N}:')
    for name, _ in libs:
        on, off = statistics.median(got[(name, True)]), statistics.median(got[(name, False)])
        print(f'  {name}: stacks on {on:.0f}, off {off:.0f}, stacks {on - off:.0f}')
