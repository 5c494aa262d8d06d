"""What a Python call site costs (device/embed/python_site.cc), on the CPU:
the capture built alone into a small library (bench/python_call_sites_shim.cc)
and called from two stack shapes:
  pytest: the user's test function under 35 runner frames (a generated
          package in a site-packages folder, as pytest and pluggy are) and
          below 3 library frames (as torch's Python wrappers are): the shape
          of every allocation in a test suite;
  loop:   a training loop's shape: the user's modules nested 5 deep, 2
          library frames (nn.Module's call) between each, a script at the
          bottom (~22 frames).
Two measures per shape, each minus the same run with no capture:
  repeat: a capture per call from one stack (the frames exist already: an
          allocation loop inside one test);
  fresh:  the whole stack called anew for each capture (a new test, a new
          step: the frames are new, and Python 3.11+ makes their frame
          objects on the walk);
  released: as repeat, with the GIL released around the call (ctypes.CDLL),
          as PyTorch's ops and Triton's launcher do: the capture takes it
          back for the walk.
Otherwise captures are made holding the GIL (ctypes.PyDLL), as an extension's;
times are the thread's CPU time (the machine may be shared).
  python3 bench/python_call_sites.py [rounds] [name=python_site.cc ...]
Each python_site.cc given (default: this checkout's) is built and measured,
rounds alternating; medians side by side. The previous version:
  git show main:packages/core-native/src/native/device/embed/python_site.cc > /tmp/old_site.cc
"""

import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE = os.path.join(ROOT, 'packages', 'core-native', 'src', 'native')
SITE = os.path.join(NATIVE, 'device', 'embed', 'python_site.cc')
RUNNER_FRAMES = 35
REPEAT = 20000
FRESH = 5000


def build(site, out):
    srcs = [
        site,
        os.path.join(NATIVE, 'device', 'embed', 'python_user_code.cc'),
        os.path.join(NATIVE, 'device', 'embed', 'python_frame_field.cc'),
        os.path.join(NATIVE, 'device', 'embed', 'python_raw_frames.cc'),
        os.path.join(NATIVE, 'platform', 'linux', 'thread_stack_linux.cc'),
        os.path.join(NATIVE, 'core', 'stack_store.cc'),
        os.path.join(ROOT, 'bench', 'python_call_sites_shim.cc'),
    ]
    subprocess.run(
        ['g++', '-O2', '-std=c++17', '-shared', '-fPIC', '-fno-exceptions', f'-I{NATIVE}', '-o', out, *srcs, '-ldl'],
        check=True,
    )
    return out


def write_packages(d):
    """A fake runner and a fake library, installed-package style: site-packages/."""
    sp = os.path.join(d, 'site-packages')
    os.makedirs(sp, exist_ok=True)
    with open(os.path.join(sp, 'fakerunner.py'), 'w') as f:
        for i in range(RUNNER_FRAMES):
            nxt = f'call_{i + 1}(fn)' if i + 1 < RUNNER_FRAMES else 'fn()'
            f.write(f'def call_{i}(fn):\n    return {nxt}\n\n')
    with open(os.path.join(sp, 'fakelib.py'), 'w') as f:
        f.write(
            'def empty(capture, *a):\n    return _check(capture, *a)\n\n'
            'def _check(capture, *a):\n    return _impl(capture, *a)\n\n'
            'def _impl(capture, *a):\n    return capture(*a)\n\n'
            'def module_call(fn, *a):\n    return _call_impl(fn, *a)\n\n'
            'def _call_impl(fn, *a):\n    return fn(*a)\n'
        )
    return sp


def child(lib_path, shape, measure, depth, d):
    sys.path.insert(0, write_packages(d))
    import fakelib
    import fakerunner

    # PyDLL keeps the GIL (an extension's call); CDLL releases it around the
    # call, as PyTorch's ops and Triton's launcher do: the capture takes it back.
    capture = (ctypes.CDLL if measure == 'released' else ctypes.PyDLL)(lib_path).mate_bench_capture
    capture.restype = ctypes.c_uint
    capture.argtypes = [ctypes.c_int, ctypes.c_int]

    def test_fn(n):  # the user's frame: fakelib's frames above, the runner's (or the user's modules) below
        return fakelib.empty(capture, n, depth)

    def block(k, n):  # the user's nested modules, nn.Module's call between each
        return fakelib.module_call(block, k - 1, n) if k > 0 else test_fn(n)

    call = (lambda n: fakerunner.call_0(lambda: test_fn(n))) if shape == 'pytest' else (lambda n: block(5, n))
    # The stack's first captures: names and lines worked out, and (as a real
    # program's first captures, made at many depths, do) where the thread's
    # frame is kept learnt and the frames' layout checked (python_frame_field,
    # python_raw_frames): from a second depth, then a few times over.
    fakelib.empty(capture, 1, depth)
    for _ in range(10):
        call(1)
    # This thread's CPU time, not the clock: the machine may be shared.
    t0 = time.thread_time_ns()
    if measure == 'fresh':
        for _ in range(FRESH):
            call(1)
    else:
        call(REPEAT)
    print((time.thread_time_ns() - t0) / (FRESH if measure == 'fresh' else REPEAT))


def run(lib, shape, measure, depth, d):
    out = subprocess.run(
        [sys.executable, __file__, '--child', lib, shape, measure, str(depth), d], capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.exit(out.stdout + out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


if __name__ == '__main__':
    if sys.argv[1:2] == ['--child']:
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
        sys.exit(0)
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    sites = [a.split('=', 1) for a in sys.argv[2:]] or [['this checkout', SITE]]
    d = tempfile.mkdtemp(prefix='mate-bench-sites-')
    libs = [(name, build(site, os.path.join(d, f'lib{i}.so'))) for i, (name, site) in enumerate(sites)]
    print(
        f'Python {sys.version.split()[0]}; ns per capture, minus no capture; median of {rounds} rounds '
        f'(repeat: {REPEAT} captures, fresh: {FRESH})'
    )
    for shape in ('pytest', 'loop'):
        for measure in ('repeat', 'fresh', 'released'):
            got = {name: [] for name, _ in libs}
            for _ in range(rounds):  # alternating
                for name, lib in libs:
                    got[name].append(run(lib, shape, measure, 40, d) - run(lib, shape, measure, 0, d))
            cells = '  '.join(f'{name}: {statistics.median(v):7.0f}' for name, v in got.items())
            print(f'  {shape:6} {measure:6}  {cells}')
