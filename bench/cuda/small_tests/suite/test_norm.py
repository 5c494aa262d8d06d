import pytest
import torch

from kernels import rms_norm
from shapes import COLS, DTYPES, ROWS, tol


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('cols', COLS)
@pytest.mark.parametrize('rows', ROWS)
def test_rms_norm(rows, cols, dtype):
    x = torch.randn(rows, cols, device='cuda', dtype=dtype)
    w = torch.rand(cols, device='cuda', dtype=dtype)
    ref = (x.float() / torch.sqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(dtype)
    torch.testing.assert_close(rms_norm(x, w), ref, **tol(dtype))


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('cols', COLS)
def test_layer_norm_backward(cols, dtype):
    x = torch.randn(5, cols, device='cuda', dtype=torch.float32, requires_grad=True)
    w = torch.rand(cols, device='cuda', requires_grad=True)
    b = torch.rand(cols, device='cuda', requires_grad=True)
    y = torch.nn.functional.layer_norm(x, (cols,), w, b)
    y.sum().backward()
    mu = x.mean(-1, keepdim=True)
    ref = (x - mu) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5) * w + b
    torch.testing.assert_close(y, ref, atol=1e-4, rtol=1e-4)
    assert torch.isfinite(x.grad).all() and torch.isfinite(w.grad).all()
