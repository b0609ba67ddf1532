"Fast checks of iclr26nb.kflow pieces used by the experiments page (ablation switches, FM on a K-Flow grid, matched-n FD)."
import math
import numpy as np
import pytest
import torch
from iclr26nb.kflow import (DCTRadialTransform, FlowMatcher, KFlowMatcher, make_train_step, subset_fd, using_ema)
from iclr26nb.models.flow_nets import VelocityMLP
from iclr26nb.models.gen_metrics import frechet_distance

torch.set_num_threads(1)


class ConstVelocity(torch.nn.Module):
    "v(x, t, y) = c (a fixed field): Euler integration is exact, so samples have a closed form."
    def __init__(self, c, shape=(1, 8, 8)):
        super().__init__(); self.shape = shape; self.c = torch.nn.Parameter(c.reshape(1, *shape), requires_grad=False)
    def forward(self, x, t, y=None): return self.c.expand(len(x), *self.shape)


def test_fm_t_grid_matches_closed_form_and_kgrid():
    c = torch.randn(64, generator=torch.Generator().manual_seed(0))
    fm = FlowMatcher(ConstVelocity(c))
    eps = torch.randn(4, 1, 8, 8)
    T = DCTRadialTransform((1, 8, 8))
    km = KFlowMatcher(VelocityMLP((1, 8, 8), width=16), T, band_energy=torch.rand(10) + 0.1)
    tg = km.schedule(32) / km.B                                            # K-Flow's grid as FM times
    assert tg[0] == 0 and tg[-1] == 1 and (tg.diff() > 0).all()
    out = fm.sample(4, 32, eps=eps, t_grid=tg)
    torch.testing.assert_close(out, eps + c.reshape(1, 1, 8, 8), atol=1e-5, rtol=0)   # ∫_0^1 c dt = c on any grid
    with pytest.raises(ValueError, match="t_grid must be an increasing"):
        fm.sample(4, 3, eps=eps, t_grid=torch.tensor([0., 0.5, 0.5, 1.]))
    with pytest.raises(ValueError, match="t_grid"):
        fm.sample(4, 2, eps=eps, t_grid=torch.tensor([0.1, 0.5, 1.]))     # must start at t0 = 0


def test_projection_off_moves_every_band():
    T = DCTRadialTransform((1, 8, 8))
    c = torch.randn(64, generator=torch.Generator().manual_seed(1))
    eps = torch.randn(3, 1, 8, 8)
    on = KFlowMatcher(ConstVelocity(c), T, band_project=True)
    off = KFlowMatcher(ConstVelocity(c), T, band_project=False)
    chat = T.vforward(c.reshape(1, 1, 8, 8))
    x_on, x_off = on.sample(3, 20, eps=eps), off.sample(3, 20, eps=eps)
    # projection on: each band integrates c only over its own unit interval of k -> ĉ; off: over all of [0, B] -> B ĉ
    torch.testing.assert_close(T.vforward(x_on) - T.vforward(eps), chat.expand(3, -1), atol=1e-4, rtol=0)
    torch.testing.assert_close(T.vforward(x_off) - T.vforward(eps), T.n_bands * chat.expand(3, -1), atol=1e-4, rtol=0)


def test_merged_dct_bands_and_cosine_mu():
    T10, T4 = DCTRadialTransform((1, 8, 8)), DCTRadialTransform((1, 8, 8), n_bands=4)
    assert T10.n_bands == 10 and T4.n_bands == 4
    assert (T4.band_index == T10.band_index * 4 // 10).all()              # neighbouring radii merged, order kept
    with pytest.raises(ValueError, match="n_bands must be in 1..10"):
        DCTRadialTransform((1, 8, 8), n_bands=11)
    km = KFlowMatcher(VelocityMLP((1, 8, 8), width=16), T4, mu="cosine")
    x = torch.randn(5, 1, 8, 8); e = torch.randn(5, 1, 8, 8)
    psi_end, _ = km.path.coeffs(T4(x), T4.vforward(e), torch.full((5,), 4.0))
    torch.testing.assert_close(psi_end, T4(x), atol=1e-5, rtol=0)         # k = B: all data, for the cosine μ too
    with pytest.raises(ValueError, match="mu must be one of"):
        KFlowMatcher(VelocityMLP((1, 8, 8), width=16), T4, mu="cubic")


def test_subset_fd_and_using_ema():
    rng = np.random.default_rng(0)
    a, b = torch.tensor(rng.normal(size=(300, 4))), torch.tensor(rng.normal(size=(500, 4)))
    full = frechet_distance(a, b)
    assert torch.allclose(subset_fd(a, b, 300, n_rep=3), torch.full((3,), full, dtype=torch.float32), atol=1e-6)
    assert subset_fd(a, b, 30, n_rep=30).mean() > full                     # the small-sample upward bias
    with pytest.raises(ValueError, match="n must be in 2..300"):
        subset_fd(a, b, 1)
    x = torch.rand(32, 1, 8, 8) * 2 - 1
    fm = FlowMatcher(VelocityMLP((1, 8, 8), width=8))
    st = make_train_step(fm, x, batch=8, steps=5, device="cpu")
    for i in range(3): st(i)
    raw = fm.net
    with using_ema(fm):
        assert fm.net is fm.ema_net and fm.net is not raw
    assert fm.net is raw
    assert not math.isclose(sum(p.sum().item() for p in raw.parameters()), sum(p.sum().item() for p in fm.ema_net.parameters()))
