import pytest
import torch

from shapes import DTYPES, ROWS


@pytest.mark.parametrize('vocab', [31, 1000, 4099, 32003])
@pytest.mark.parametrize('rows', ROWS)
def test_cross_entropy(rows, vocab):
    logits = torch.randn(rows, vocab, device='cuda', requires_grad=True)
    target = torch.randint(0, vocab, (rows,), device='cuda')
    loss = torch.nn.functional.cross_entropy(logits, target)
    loss.backward()
    ref = -(torch.log_softmax(logits.detach(), -1).gather(1, target[:, None])).mean()
    torch.testing.assert_close(loss.detach(), ref, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(logits.grad.sum(-1), torch.zeros(rows, device='cuda'), atol=1e-4, rtol=0)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('rows', ROWS)
def test_mse(rows, dtype):
    a = torch.randn(rows, 129, device='cuda', dtype=dtype)
    b = torch.randn(rows, 129, device='cuda', dtype=dtype)
    ref = ((a.float() - b.float()) ** 2).mean()
    torch.testing.assert_close(torch.nn.functional.mse_loss(a.float(), b.float()), ref)
