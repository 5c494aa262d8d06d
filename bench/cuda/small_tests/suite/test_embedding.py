import pytest
import torch

from shapes import DTYPES


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('num', [17, 1000, 50021])
@pytest.mark.parametrize('dim', [33, 128, 769])
def test_embedding_backward(dim, num, dtype):
    table = torch.randn(num, dim, device='cuda', dtype=torch.float32, requires_grad=True)
    idx = torch.randint(0, num, (3, 37), device='cuda')
    out = torch.nn.functional.embedding(idx, table)
    out.sum().backward()
    counts = torch.zeros(num, device='cuda').index_add_(0, idx.flatten(), torch.ones(idx.numel(), device='cuda'))
    torch.testing.assert_close(table.grad[:, 0], counts)
    torch.testing.assert_close(out.to(dtype), table.detach()[idx].to(dtype))
