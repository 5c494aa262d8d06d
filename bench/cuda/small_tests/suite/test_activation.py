import pytest
import torch

from kernels import silu_mul
from shapes import DTYPES, SIZES, tol


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('n', SIZES)
def test_silu_mul(n, dtype):
    a = torch.randn(n, device='cuda', dtype=dtype)
    b = torch.randn(n, device='cuda', dtype=dtype)
    ref = (torch.nn.functional.silu(a.float()) * b.float()).to(dtype)
    torch.testing.assert_close(silu_mul(a, b), ref, **tol(dtype))


@pytest.mark.parametrize('approximate', ['none', 'tanh'])
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('n', SIZES)
def test_gelu(n, dtype, approximate):
    x = torch.randn(n, device='cuda', dtype=dtype)
    y = torch.nn.functional.gelu(x, approximate=approximate)
    ref = torch.nn.functional.gelu(x.float(), approximate=approximate).to(dtype)
    torch.testing.assert_close(y, ref, **tol(dtype))
