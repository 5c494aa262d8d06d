"""Runs a script with bench/cuda/null_allocator.cc installed as PyTorch's
CUDA allocator (CUDAPluggableAllocator): the pluggable-allocator hook's own
cost, for loop_py.sh's `pluggable-null` variant.
  python3 bench/cuda/null_pluggable.py <script> [args...]
Builds the allocator with g++ into a temporary folder first."""

import os
import runpy
import subprocess
import sys
import tempfile

import torch

here = os.path.dirname(os.path.abspath(__file__))
lib = os.path.join(tempfile.mkdtemp(prefix='mate-null-alloc-'), 'libnull_allocator.so')
subprocess.run(
    ['g++', '-O2', '-shared', '-fPIC', '-o', lib, os.path.join(here, 'null_allocator.cc'), '-ldl'], check=True
)
torch.cuda.memory.change_current_allocator(torch.cuda.memory.CUDAPluggableAllocator(lib, 'null_alloc', 'null_free'))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name='__main__')
