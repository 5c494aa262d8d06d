import pytest
import torch

from shapes import DTYPES


def rope(x, pos, base=10000.0):
    half = x.shape[-1] // 2
    freqs = base ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angles = pos[:, None].float() * freqs[None, :]
    cos, sin = angles.cos()[None, :, None, :], angles.sin()[None, :, None, :]
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).to(x.dtype)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('seq', [1, 7, 129, 513])
@pytest.mark.parametrize('heads', [1, 3, 8])
def test_rope_preserves_norm(heads, seq, dtype):
    x = torch.randn(2, seq, heads, 64, device='cuda', dtype=dtype)
    pos = torch.arange(seq, device='cuda')
    y = rope(x, pos)
    torch.testing.assert_close(y.float().norm(dim=-1), x.float().norm(dim=-1), atol=5e-2, rtol=2e-2)
