"""Runs a script with bench/cuda/null_allocator.cc installed as PyTorch's
CUDA allocator (CUDAPluggableAllocator): the pluggable-allocator hook's own
cost, for loop_py.sh's `pluggable-null` variant. With --floor, the same
blocks plus quarantine_floor.cc's unmap-map-open cycle on a background
thread for a share of the frees (FLOOR_SHARE; FLOOR_FENCES=1: each batch
after an event on the freeing streams): the `pluggable-floor` variant, the
least driver work an unmapping quarantine adds. With --layout,
layout_floor.cc instead: every allocation alone in fresh granules against an
unmapped one, freed ranges unmapped after their stream's work or handed out
again, mapped ahead on a background thread, and nothing else: the
`pluggable-layout` variant, the floor under the guard's own allocator.
  python3 bench/cuda/null_pluggable.py [--floor | --layout] <script> [args...]
Builds the allocator with g++ into a temporary folder first (--floor and
--layout need cuda.h: CUDA_HOME, else /usr/local/cuda)."""

import os
import runpy
import subprocess
import sys
import tempfile

import torch

here = os.path.dirname(os.path.abspath(__file__))
kind = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ('--floor', '--layout') else ''
if kind:
    del sys.argv[1]
lib = os.path.join(tempfile.mkdtemp(prefix='mate-null-alloc-'), 'libnull_allocator.so')
sources = {
    '': ['null_allocator.cc'],
    '--floor': ['null_allocator.cc', 'quarantine_floor.cc'],
    '--layout': ['layout_floor.cc'],
}[kind]
names = {
    '': ('null_alloc', 'null_free'),
    '--floor': ('floor_alloc', 'floor_free'),
    '--layout': ('layout_alloc', 'layout_free'),
}[kind]
flags = ['-I', os.path.join(os.environ.get('CUDA_HOME', '/usr/local/cuda'), 'include'), '-pthread'] if kind else []
subprocess.run(
    ['g++', '-O2', '-shared', '-fPIC', *flags, '-o', lib, *[os.path.join(here, f) for f in sources], '-ldl'], check=True
)
torch.cuda.memory.change_current_allocator(torch.cuda.memory.CUDAPluggableAllocator(lib, *names))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name='__main__')
