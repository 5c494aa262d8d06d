"""What a Python call site costs the device guard, on the CPU: guarded
alloc+free through the C ABI PyTorch's pluggable allocator calls
(mate_guard_torch_alloc/free), from a Python stack `depth` frames deep,
with Python stacks on and off, on the simulated driver (packages/core-native/test/sim:
no GPU needed). ctypes releases the GIL around the call, as PyTorch does,
so the guard takes it back for the walk, as it does under PyTorch.
  g++ -O2 -shared -fPIC -o /tmp/libfakecuda.so packages/core-native/test/sim/fake_cuda.cc
  python3 bench/cuda/python_stacks.py /tmp/libfakecuda.so [depth] [n] [rounds]
With depth 0 and stacks off (`--child 0 <n> 0`, the environment as run() sets it)
a child measures the guarded alloc+free itself.
"""

import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# MATE_GUARD_CUDA_LIB: another build of the library (a before/after comparison).
LIB = os.environ.get('MATE_GUARD_CUDA_LIB') or os.path.join(
    ROOT, 'packages', 'core-native', 'build', 'Release', 'libmate_guard_cuda.so'
)


def child(depth, n, stacks):
    lib = ctypes.CDLL(LIB)
    lib.mate_guard_torch_alloc.restype = ctypes.c_void_p
    lib.mate_guard_torch_alloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    lib.mate_guard_torch_free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
    if lib.mate_guard_install_from_env() != 0:
        sys.exit('install failed')
    alloc, free = lib.mate_guard_torch_alloc, lib.mate_guard_torch_free

    def loop():
        for _ in range(n // 10):  # warm-up: ready pool, caches
            free(alloc(4096, 0, None), 4096, 0, None)
        t0 = time.perf_counter()
        for i in range(n):
            p = alloc(4096 + (i & 7) * 512, 0, None)
            free(p, 4096, 0, None)
        return (time.perf_counter() - t0) / n * 1e6

    def deep(k):
        return deep(k - 1) if k > 0 else loop()

    print(json.dumps({'us': deep(depth)}))
    lib.mate_guard_shutdown()


def run(fake, depth, n, stacks):
    d = tempfile.mkdtemp()
    handoff = {'version': 1, 'settings': {'reportDir': d, 'captureStacks': stacks}, 'explicit': []}
    env = dict(os.environ, MATE_GUARD_CUDA_DRIVER=fake, MATE_GUARD_CUPTI=fake, MATE_GUARD_SETTINGS=json.dumps(handoff))
    out = subprocess.run(
        [sys.executable, __file__, '--child', str(depth), str(n), str(int(stacks))],
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(out.stdout + out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])['us']


if __name__ == '__main__':
    if sys.argv[1] == '--child':
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == '1')
        sys.exit(0)
    fake = sys.argv[1]
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    on, off = [], []
    for _ in range(rounds):  # alternating
        on.append(run(fake, depth, n, True))
        off.append(run(fake, depth, n, False))
    a, b = statistics.median(on), statistics.median(off)
    print(f'alloc+free from {depth} Python frames deep, median of {rounds} x {n}:')
    print(f'  stacks on  {a:.2f} us   stacks off {b:.2f} us   Python call sites: {a - b:.2f} us a pair')
