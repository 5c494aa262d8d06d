"""Device bug shapes of the detection benchmark (bench/detection/), for a GPU.

Each shape is a Triton kernel written here after a publicly fixed bug of a
GPU kernel library (the shapes issue 55 reports: a 4-bit quantizer's absmax,
a blockwise dequantizer's output, a read one bf16 element past), launched on tensors sized so that the
plain run is silent (PyTorch's caching allocator rounds every block up: the
bad access lands in its slack). Run one shape per process:

    python bench/detection/device/shapes.py <shape>            # plain: prints "done <shape>"
    mate guard-run --device cuda -- python bench/detection/device/shapes.py <shape>
    mate guard-run --device cuda --device-exact-placement -- python bench/detection/device/shapes.py <shape>

or all of them, scored: `bash bench/detection/device/score.sh`. Needs torch
and triton on a CUDA machine; the simulated driver runs no kernels.
"""

import sys

import torch
import triton
import triton.language as tl

BLOCK = 64


@triton.jit
def absmax_kernel(x_ptr, absmax_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(absmax_ptr + pid, tl.max(tl.abs(x), axis=0))  # one block per program, absmax has n // BLOCK


def absmax_store_past():
    # A 4-bit quantizer's absmax sized n // BLOCK while the grid is cdiv(n, BLOCK):
    # the last block's store is one float past the tensor.
    n = 1000
    x = torch.randn(n, device='cuda')
    absmax = torch.empty(n // BLOCK, device='cuda')  # the bug: 15, the grid has 16 blocks
    absmax_kernel[(triton.cdiv(n, BLOCK),)](x, absmax, n, BLOCK=BLOCK)
    torch.cuda.synchronize()


@triton.jit
def dequant_kernel(q_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs, mask=offs < n, other=0).to(tl.float32)
    s = tl.load(scale_ptr + pid)
    tl.store(out_ptr + offs, q * s, mask=offs < n + 16)  # the bug: the mask lets the tail block write past n


def dequant_write_past():
    # A blockwise dequantizer whose output mask is looser than its input's.
    n = 1000
    q = torch.randint(-8, 8, (n,), dtype=torch.int8, device='cuda')
    scale = torch.rand(triton.cdiv(n, BLOCK), device='cuda')
    out = torch.empty(n, device='cuda')
    dequant_kernel[(triton.cdiv(n, BLOCK),)](q, scale, out, n, BLOCK=BLOCK)
    torch.cuda.synchronize()


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n + 1, BLOCK):  # the bug: n + 1, one element past the end
        idx = start + offs
        acc += tl.load(x_ptr + idx, mask=idx < n + 1, other=0.0).to(tl.float32)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def bf16_read_one_past():
    # A reduction whose bound reads one bf16 element past a tensor of 1001
    # elements (2002 bytes: 14 bytes short of a 16-byte multiple).
    n = 1001
    x = torch.randn(n, dtype=torch.bfloat16, device='cuda')
    out = torch.empty(1, device='cuda')
    sum_kernel[(1,)](x, out, n, BLOCK=256)
    torch.cuda.synchronize()


SHAPES = {
    'absmax_store_past': absmax_store_past,
    'dequant_write_past': dequant_write_past,
    'bf16_read_one_past': bf16_read_one_past,
}

if __name__ == '__main__':
    name = sys.argv[1] if len(sys.argv) > 1 else ''
    if name not in SHAPES:
        sys.exit(f'shapes.py: unknown shape {name!r}; one of {", ".join(SHAPES)}')
    SHAPES[name]()
    print(f'done {name}')
