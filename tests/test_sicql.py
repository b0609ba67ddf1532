"Fast checks of iclr26nb.sicql beyond the notebooks' asserts: AWR weight bounds (closed forms), losses, tuning helpers."
import copy, math
import numpy as np, pytest, torch
import torch.nn.functional as F
from iclr26nb.sicql import (DarkroomEnv, SICQLConfig, SICQLTrainer, SICQLTransformer, WEIGHT_NORMS, awr_weights, bc_loss, collect_offline,
                            expectile_loss, make_goal_split, select_lr, sicql_losses, weight_ess)

def test_official_weights_are_capped_exponentials():
    A = torch.tensor([-1.0, 0.0, 0.01, 0.05, 1.0])
    w = awr_weights(A, 100.0)                                          # official: min(exp(beta A), 1000)
    torch.testing.assert_close(w, torch.tensor([math.exp(-100), 1.0, math.e, math.exp(5), 1000.0]), rtol=1e-5, atol=0)
    torch.testing.assert_close(awr_weights(A, 100.0, max_weight=100.0)[-2:], torch.tensor([100.0, 100.0]))   # IQL's cap binds at e^5 > 100
    torch.testing.assert_close(awr_weights(torch.tensor([0.04]), 100.0, max_weight=100.0), torch.tensor([math.exp(4)]))
    assert torch.equal(awr_weights(A, 0.0), torch.ones(5))

def test_batch_weights_closed_form():
    A = torch.tensor([0.0, math.log(3.0)])
    torch.testing.assert_close(awr_weights(A, 1.0, norm="batch"), torch.tensor([0.5, 1.5]))    # e^A = (1, 3), mean 2
    A = torch.tensor([[0.0, 0.1], [0.2, 0.3]]); beta = 10.0
    e = torch.exp(beta * A); torch.testing.assert_close(awr_weights(A, beta, norm="batch"), e / e.mean())
    torch.testing.assert_close(awr_weights(A - 3.0, beta, norm="batch"), e / e.mean())           # shift-invariant
    assert torch.equal(awr_weights(A, 0.0, norm="batch"), torch.ones(2, 2))

def test_batch_weights_do_not_overflow_and_respect_the_cap():
    A = torch.tensor([100.0, 0.0, 0.0, 0.0])                          # e^{100 * 100} would overflow
    w = awr_weights(A, 100.0, norm="batch"); assert torch.isfinite(w).all()
    torch.testing.assert_close(w, torch.tensor([4.0, 0.0, 0.0, 0.0]))  # all mass on one transition: n
    torch.testing.assert_close(awr_weights(A, 100.0, max_weight=2.0, norm="batch"), torch.tensor([2.0, 0.0, 0.0, 0.0]))
    w_off = awr_weights(A, 100.0); assert w_off[0] == pytest.approx(1000.0) and torch.isfinite(w_off).all()

def test_effective_sample_share():
    assert weight_ess(torch.ones(7)).item() == pytest.approx(1.0)
    assert weight_ess(torch.tensor([5.0, 0.0, 0.0, 0.0, 0.0])).item() == pytest.approx(0.2)
    assert weight_ess(torch.tensor([1.0, 3.0])).item() == pytest.approx(16 / (2 * 10))
    w = torch.rand(3, 4) + 0.1; assert weight_ess(w).item() == pytest.approx(weight_ess(5 * w).item(), rel=1e-6)   # scale-free

@pytest.mark.parametrize("bad, msg", [(dict(beta=-1.0), "beta must be >= 0"), (dict(max_weight=0.0), "max_weight must be > 0"),
                                      (dict(norm="softmax"), "norm must be one of")])
def test_awr_weights_bad_inputs(bad, msg):
    with pytest.raises(ValueError, match=msg): awr_weights(torch.zeros(2), **{"beta": 1.0, **bad})

def test_config_validates_weight_norm():
    assert SICQLConfig().weight_norm == "none" and SICQLConfig().max_weight == 1000.0 and SICQLConfig().beta == 100.0   # the official defaults
    assert WEIGHT_NORMS == ("none", "batch")
    with pytest.raises(ValueError, match="weight_norm must be one of"): SICQLConfig(weight_norm="clip")

def _tiny():
    env_fn = lambda g: DarkroomEnv(4, g, 8)
    tr, _ = make_goal_split(4, 3, seed=0); data = collect_offline(env_fn, tr[:4], "mixed", n_traj=3, n_ctx=2, seed=0)
    net = SICQLTransformer(2, 5, 16, 8, 16, 1, seed=0); net.norm.fit(data.states)
    for p in net.parameters(): torch.nn.init.normal_(p, std=0.3)        # spread the advantages
    tgt = copy.deepcopy(net).requires_grad_(False)
    for p in tgt.parameters(): p.add_(0.2 * torch.randn_like(p))
    t = data.transitions; idx = np.arange(12)
    b = dict(states=torch.as_tensor(t["states"][idx], dtype=torch.float32), actions=torch.as_tensor(t["actions"][idx]),
             rewards=torch.as_tensor(t["rewards"][idx], dtype=torch.float32), next_states=torch.as_tensor(t["next_states"][idx], dtype=torch.float32),
             dones=torch.as_tensor(t["dones"][idx], dtype=torch.float32))
    return data, net, tgt, b, torch.randn(12, 8, 16, generator=torch.Generator().manual_seed(0))

@pytest.mark.parametrize("norm", WEIGHT_NORMS)
def test_sicql_losses_use_the_configured_weights(norm):
    _, net, tgt, b, P = _tiny(); cfg = SICQLConfig(beta=30.0, weight_norm=norm)
    out = sicql_losses(net, tgt, b, P, cfg)
    with torch.no_grad():
        o_s, o_t = net(b["states"], P), tgt(b["states"], P, b["actions"]); A = torch.min(o_t["q1"], o_t["q2"]) - o_s["v"]
        w = awr_weights(A, 30.0, 1000.0, norm); lbc = bc_loss(net, o_s["pi"], F.one_hot(b["actions"], 5).float())
    torch.testing.assert_close(out["L_pi"].detach(), (w * lbc).mean(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out["w"], w.mean(), rtol=1e-5, atol=1e-6); torch.testing.assert_close(out["w_ess"], weight_ess(w), rtol=1e-5, atol=1e-6)
    if norm == "batch": assert out["w"].item() == pytest.approx(1.0, rel=1e-5)
    torch.testing.assert_close(out["L_V"].detach(), expectile_loss(A, 0.7), rtol=1e-5, atol=1e-7)

def test_trainer_records_weight_statistics():
    data, *_ = _tiny(); trn = SICQLTrainer(seed=0, verbose=False)
    trn.fit(data, None, SICQLConfig(steps=6, batch=8, n_layer=1, n_embd=16, log_every=2, weight_norm="batch"))
    h = trn.history.df; assert {"w", "w_ess"} <= set(h.columns)
    assert np.allclose(h.w.dropna(), 1.0, atol=1e-4) and ((h.w_ess > 0) & (h.w_ess <= 1 + 1e-6)).all()

def test_select_lr_interior_and_extension():
    G = [1e-3, 1e-2, 1e-1]
    assert select_lr(lambda lr: -(math.log10(lr) + 2) ** 2, G) == (1e-2, {1e-3: -1.0, 1e-2: -0.0, 1e-1: -1.0})
    best, res = select_lr(lambda lr: lr, G, max_extend=1); assert best == 1.0 and len(res) == 4
