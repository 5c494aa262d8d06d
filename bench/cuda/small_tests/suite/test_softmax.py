import pytest
import torch

from kernels import softmax
from shapes import COLS, DTYPES, ROWS, tol


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('cols', COLS)
@pytest.mark.parametrize('rows', ROWS)
def test_softmax(rows, cols, dtype):
    x = torch.randn(rows, cols, device='cuda', dtype=dtype)
    torch.testing.assert_close(softmax(x), torch.softmax(x.float(), -1).to(dtype), **tol(dtype))
