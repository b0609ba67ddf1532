"""Tests of iclr26nb.lamir beyond the method page's asserts: safe resolving, look-ahead on the learned model, and
the sampled path that needs no enumeration."""
import numpy as np, pyspiel, pytest, torch
from iclr26nb.lamir import (goofspiel, enumerate_game, history_table, solve_cfr, exploitability, best_response_value,
                            oracle_model, LookaheadAgent, LAMIRConfig, train_lamir, learned_lookahead_model, lift_policy,
                            _br_values, _check_strategy)

torch.set_num_threads(1)

@pytest.fixture(scope="module")
def g3():
    g = goofspiel(3); tree, feats = enumerate_game(g); H = history_table(tree, feats)
    return g, tree, H, solve_cfr(tree, 3, plus=False)

def test_br_values_root_is_best_response_value(g3):
    _, tree, _, base = g3
    for p in range(2): assert _br_values(tree, base, p)[0][0] == pytest.approx(best_response_value(tree, base, p), abs=1e-15)
    # a best response is at least the on-policy value at every history
    from iclr26nb.lamir import _values
    u = _values(tree, base)
    for p, sg in ((0, 1.0), (1, -1.0)):
        ub = _br_values(tree, base, p)
        assert all((ub[d] >= sg * u[d] - 1e-12).all() for d in range(len(u)))

@pytest.mark.parametrize("cards", [3, 4])
def test_full_depth_continual_resolving_matches_cfr_plus(cards):
    "Safe resolving with best-response gadget values: full-depth look-ahead stays within 1e-3 of CFR+ (same iterations)."
    g = goofspiel(cards); om = oracle_model(g); tree = om.tree; base = solve_cfr(tree, 3, plus=False)
    sig = LookaheadAgent(base, om, depth=len(tree.parent), iterations=200, T=0).strategy()
    assert abs(exploitability(tree, sig) - exploitability(tree, solve_cfr(tree, 200))) <= 1e-3

def test_learned_lookahead_model_invariants(g3):
    _, tree, H, base = g3
    m, _ = train_lamir(tree, H, base, LAMIRConfig(K=4, steps=150, episodes=300, eps=0.5), seed=0, device="cpu")
    lm = learned_lookahead_model(m, tree, H, base, T=1, steps=100, episodes=200, seed=0)
    _check_strategy(lm.tree, lm.base)
    assert lm.n_dirs == 2 and len(lm.leaf_u) == 2 and all(len(r) == 2 for r in lm.leaf_u)
    assert all(len(lm.leaf_u[0][0][d]) == len(lm.tree.parent[d]) for d in range(len(lm.tree.parent)))
    live = [x[:, 0] >= 0 for x in lm.tree.iset]
    assert all((lm.ps[d][live[d]] >= 0).all() for d in range(len(live)))       # every live abstract history has a public state
    a = LookaheadAgent(lm.base, lm, depth=1, iterations=30, T=1)
    sig, info = lift_policy(m, tree, H, lm.keys, a.strategy(), warn=False)
    _check_strategy(tree, sig); assert 0 < info["coverage"] <= 1
    assert len(a.latency) == len(a.roots) > 0 and all(r[2] >= 1 for r in a.roots)
    lm2 = learned_lookahead_model(m, tree, H, base, T=1, steps=100, episodes=200, seed=0)
    assert np.allclose(np.concatenate(lm2.leaf_u[1][0]), np.concatenate(lm.leaf_u[1][0]))   # seeded: same numbers twice
    with pytest.raises(ValueError, match="directions"): LookaheadAgent(lm.base, lm, T=3)
    with pytest.raises(ValueError, match="oracle_model"): LookaheadAgent(base, "model")
