"""Tests of iclr26nb.lamir beyond the method page's asserts: safe resolving, look-ahead on the learned model, and
the sampled path that needs no enumeration."""
import numpy as np, pyspiel, pytest, torch
from iclr26nb.lamir import (goofspiel, enumerate_game, history_table, solve_cfr, exploitability, best_response_value,
                            oracle_model, LookaheadAgent, LAMIRConfig, train_lamir, learned_lookahead_model, lift_policy,
                            _br_values, _check_strategy, true_dynamics_model)

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


@pytest.mark.parametrize("mode", ["continual", "each_iset"])
def test_merged_resolve_roots_at_most_K2_and_same_strategy(g3, mode):
    "Merging the paths of a (public state, k1, k2) triple at a resolve root bounds it by K^2 and leaves the strategy unchanged."
    _, tree, H, base = g3
    m, _ = train_lamir(tree, H, base, LAMIRConfig(K=4, steps=150, episodes=300, eps=0.5), seed=0, device="cpu")
    lm = learned_lookahead_model(m, tree, H, base, T=1, steps=100, episodes=200, seed=0)
    a = {mg: LookaheadAgent(lm.base, lm, depth=1, iterations=40, T=1, mode=mode, merge=mg) for mg in (True, False)}
    s = {mg: x.strategy() for mg, x in a.items()}
    assert np.allclose(np.concatenate(s[True]), np.concatenate(s[False]), atol=1e-9)
    assert all(r[2] <= m.K ** 2 and r[2] <= r[3] for r in a[True].roots)
    assert any(r[3] > r[2] for r in a[True].roots)                          # the expansion repeats triples: merging is exercised
    assert all(r[2] == r[3] for r in a[False].roots)
    for d, ps, n, _ in a[True].roots:                                       # one root history per distinct (k1, k2) pair
        S = np.flatnonzero((lm.ps[d] == ps) & ~lm.tree.term[d]); assert n == len(np.unique(lm.tree.iset[d][S], axis=0))

def test_true_dynamics_model_separates_abstraction_from_model_error(g3):
    g, tree, H, base = g3
    m1, _ = train_lamir(tree, H, base, LAMIRConfig(K=1, steps=20, episodes=50), seed=0, device="cpu")
    t1, op = true_dynamics_model(m1, tree, H), oracle_model(g, "public")
    assert t1.abstraction == "clusters" and t1.abstract.n_isets == op.abstract.n_isets        # K = 1 is the public abstraction
    assert all((a == b).all() for a, b in zip(t1.iset_map, op.iset_map))
    m, _ = train_lamir(tree, H, base, LAMIRConfig(K=6, steps=200, episodes=500, eps=0.5), seed=0, device="cpu")
    td = true_dynamics_model(m, tree, H); sig = td.lift(solve_cfr(td.abstract, 200)); _check_strategy(tree, sig)
    assert all(n1 <= n <= t for n1, n, t in zip(op.abstract.n_isets, td.abstract.n_isets, tree.n_isets))
    for p in range(2):                                                      # an abstract infoset never mixes legal-action sets
        for j in range(td.abstract.n_isets[p]): assert (tree.legal[p][td.iset_map[p] == j] == td.abstract.legal[p][j]).all()
    with pytest.raises(ValueError, match="sizes differ"):
        g4 = goofspiel(4); t4, f4 = enumerate_game(g4); true_dynamics_model(m, t4, history_table(t4, f4))

# --- the sampled path (no enumeration) ---
from iclr26nb.lamir import (SampledGame, sample_trajectories, train_stream_model, build_stream_tree, StreamPolicy,
                            play_sampled, uniform_policy)

@pytest.fixture(scope="module")
def zumo():
    sg = SampledGame(pyspiel.load_game("oshi_zumo", dict(coins=3, size=1, horizon=3)))
    D = sample_trajectories(sg, 150, seed=0); m, _ = train_stream_model(sg, D, LAMIRConfig(K=3, steps=120), seed=0)
    return sg, D, m

def test_sampled_path_end_to_end_oshi_zumo(zumo):
    sg, D, m = zumo
    assert D["ps"].shape == D["next_ps"].shape and D["ps"].shape[1] == sg.ps_dim
    assert ((D["legal"][0][np.arange(len(D["a"])), D["a"][:, 0]]) & (D["legal"][1][np.arange(len(D["a"])), D["a"][:, 1]])).all()
    at, keys = build_stream_tree(m, sg, max_depth=3, floor=0.5); sig = solve_cfr(at, 30); _check_strategy(at, sig)
    assert all(w.min() > 0 and w.max() <= 1 for w in at.w)
    pol = StreamPolicy(m, keys, sig); r = play_sampled(sg, pol, uniform_policy, 40, seed=0)
    assert abs(r["win"] + r["draw"] + r["loss"] - 1) < 1e-12 and r["win_lo"] <= r["win"] <= r["win_hi"]
    assert sum(pol.counts.values()) > 0
    assert play_sampled(sg, pol, uniform_policy, 20, seed=3) == play_sampled(sg, pol, uniform_policy, 20, seed=3)

def test_sequential_cast_as_simultaneous():
    sg = SampledGame(pyspiel.load_game("phantom_ttt")); assert sg.seq and sg.A == 10
    D = sample_trajectories(sg, 30, seed=0)
    mover = D["legal"][0][:, :-1].any(1)                                   # exactly one player moves, the other no-ops
    assert (mover ^ D["legal"][1][:, :-1].any(1)).all()
    assert (D["a"][mover, 1] == 9).all() and (D["a"][~mover, 0] == 9).all()
    assert set(np.unique(D["ret"])) <= {-1.0, 0.0, 1.0}

def test_sampled_path_refusals(zumo):
    sg, _, m = zumo
    with pytest.raises(ValueError, match="SampledGame needs a game without chance"): SampledGame(pyspiel.load_game("leduc_poker"))
    with pytest.raises(ValueError, match="max_actions=3"): SampledGame(pyspiel.load_game("oshi_zumo"), max_actions=3)
    with pytest.raises(TypeError, match="pyspiel.Game"): SampledGame("oshi_zumo")
    with pytest.raises(ValueError, match="zero-sum"): SampledGame(pyspiel.load_game("matrix_pd"))
    with pytest.raises(ValueError, match="eps"): sample_trajectories(sg, 5, eps=1.5)
    with pytest.raises(ValueError, match="floor"): build_stream_tree(m, sg, 2, floor=0)
