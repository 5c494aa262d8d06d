# Triton kernels of the small-test benchmark: the shapes a kernel library's
# ops suite tests (a row norm, an activation, a row softmax), each checked
# against a PyTorch reference by the test files beside this one.
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * n_cols + cols, (x / rms * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_mul(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (a * tl.sigmoid(a) * b).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float('inf')).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x, w, eps=1e-6):
    y = torch.empty_like(x)
    rows, cols = x.shape
    _rms_norm[(rows,)](x, w, y, cols, eps, BLOCK=triton.next_power_of_2(cols))
    return y


def silu_mul(a, b):
    y = torch.empty_like(a)
    n = a.numel()
    _silu_mul[(triton.cdiv(n, 1024),)](a, b, y, n, BLOCK=1024)
    return y


def softmax(x):
    y = torch.empty_like(x)
    rows, cols = x.shape
    _softmax[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
    return y
