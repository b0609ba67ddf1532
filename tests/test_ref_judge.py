"Reference-guided judges: score memo, shared samples, evaluation shortcuts, and bad inputs (small untrained models, CPU, seconds)."
import copy
import numpy as np
import pytest
import torch
from iclr26nb.models.tiny_lm import TinyLM, TinyLMConfig
from iclr26nb.ref_judge import (RubricWorld, LMJudge, FallbackJudge, MultiRefJudge, CoupledJudge, LexicalJudge, OracleJudge,
                                build_preference_pairs, sample_responses, evaluate_policy, judge_accuracy, dpo, dpo_loss)


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    w = RubricWorld(n_styles=2, n_topics=6, n_words=12, seed=1)
    lm = TinyLM(TinyLMConfig(w.vocab_size, d_model=16, n_layers=1, n_heads=2, max_len=40), seed=0).eval()
    rng = np.random.default_rng(0)
    ps = w.sample_prompts(24, rng)
    return w, lm, ps, w.generate(ps, "web", rng), w.generate(ps, "front", rng), rng


def test_cache_gives_the_uncached_scores(setup):
    w, lm, ps, ys, rs, _ = setup
    for mode in ("free", "ref", "match"):
        refs = None if mode == "free" else rs
        plain = LMJudge(lm, w, mode, batch_size=5).score(ps, ys, refs)
        cached = LMJudge(lm, w, mode, batch_size=5, cache=True)
        assert torch.equal(cached.score(ps, ys, refs), plain)                   # first call: the same batches, bit for bit
        n = len(cached.memo)
        assert torch.equal(cached.score(ps[::-1], ys[::-1], None if refs is None else refs[::-1]), plain.flip(0))
        assert len(cached.memo) == n == (2 if mode == "match" else 1) * len(ps)  # second call: all hits, nothing added


def test_shared_memo_serves_every_judge_of_one_lm(setup):
    w, lm, ps, ys, rs, rng = setup
    memo = {}
    J = {m: LMJudge(lm, w, m, cache=memo) for m in ("free", "ref", "match")}
    J["ref"].score(ps, ys, rs); J["free"].score(ps, ys)
    n = len(memo)
    pairs = w.make_pairs(ps, "natural", rng)
    R = w.generate([x.prompt for x in pairs], "front", rng)
    trio = [J["ref"], J["free"], LexicalJudge()]
    coupled = judge_accuracy(CoupledJudge(trio, "majority"), pairs, R).acc
    fresh = [LMJudge(lm, w, "ref"), LMJudge(lm, w, "free"), LexicalJudge()]
    assert coupled == judge_accuracy(CoupledJudge(fresh, "majority"), pairs, R).acc
    assert len(memo) > n
    half = [r if i % 2 else None for i, r in enumerate(rs)]
    fb = FallbackJudge(J["ref"], J["free"]).score(ps, ys, half)
    torch.testing.assert_close(fb, FallbackJudge(LMJudge(lm, w, "ref"), LMJudge(lm, w, "free")).score(ps, ys, half), rtol=0, atol=1e-6)
    one = MultiRefJudge(J["ref"]).score(ps, ys, [[r] for r in rs])
    torch.testing.assert_close(one, J["ref"].score(ps, ys, rs), rtol=0, atol=1e-12)


def test_cache_rejects_other_types(setup):
    w, lm, *_ = setup
    with pytest.raises(TypeError, match="cache must be a bool or a dict"): LMJudge(lm, w, "free", cache=[])


def test_given_samples_give_the_same_pairs(setup):
    w, lm, ps, ys, rs, _ = setup
    draws = sample_responses(lm, w, ps, 4, 1.0, 3)
    for J in (OracleJudge(w), LexicalJudge(), LMJudge(lm, w, "ref")):
        assert build_preference_pairs(lm, J, w, ps, rs, n=4, seed=3) == build_preference_pairs(None, J, w, ps, rs, n=4, samples=draws)
    with pytest.raises(ValueError, match="n=4 responses for each of the 24"):
        build_preference_pairs(lm, OracleJudge(w), w, ps, rs, n=4, samples=draws[:-1])


def test_evaluate_policy_shortcuts_change_no_number(setup):
    w, lm, ps, ys, rs, _ = setup
    pol = copy.deepcopy(lm)
    full = evaluate_policy(pol, w, ps, rs, n_samples=3, baseline=lm, seed=5, lengths=True)
    given = evaluate_policy(pol, w, ps, rs, n_samples=3, baseline_samples=sample_responses(lm, w, ps, 3, 1.0, 6), seed=5, lengths=True)
    assert given == full
    lean = evaluate_policy(pol, w, ps, rs, n_samples=3, seed=5, greedy=False)
    assert lean == {k: full[k] for k in ("mean_q", "win_vs_ref", "mean_len")}
    with pytest.raises(ValueError, match="not both"):
        evaluate_policy(pol, w, ps, rs, n_samples=3, baseline=lm, baseline_samples=sample_responses(lm, w, ps, 3, 1.0, 6))
    with pytest.raises(ValueError, match="n_samples=2 responses"):
        evaluate_policy(pol, w, ps, rs, n_samples=2, baseline_samples=sample_responses(lm, w, ps, 3, 1.0, 6))


def test_bad_inputs(setup):
    w, lm, ps, ys, rs, _ = setup
    z = torch.zeros(3)
    with pytest.raises(ValueError, match="beta"): dpo_loss(z, z, z, z, beta=0)
    with pytest.raises(ValueError, match="same shape"): dpo_loss(z, z, z, torch.zeros(2), beta=0.1)
    with pytest.raises(ValueError, match="non-finite"): dpo_loss(z, z, z, torch.tensor([0.0, float("nan"), 0.0]), beta=0.1)
    pp = build_preference_pairs(lm, OracleJudge(w), w, ps, rs, n=4, seed=0)
    with pytest.raises(ValueError, match="frozen copy"): dpo(lm, lm, w, pp)
    with pytest.raises(ValueError, match="n must be an int >= 2"): build_preference_pairs(lm, OracleJudge(w), w, ps, rs, n=1)
    with pytest.raises(ValueError, match="temperature"): build_preference_pairs(lm, OracleJudge(w), w, ps, rs, temperature=0)
    with pytest.raises(ValueError, match="reference 3 is missing"): LMJudge(lm, w, "ref").score(ps, ys, rs[:3] + [None] + rs[4:])
    with pytest.raises(ValueError, match="non-empty list"): LMJudge(lm, w, "free").score([], [])
    with pytest.raises(ValueError, match="non-increasing"): RubricWorld(weights=(0.2, 0.7, 0.4, 0.1))
    with pytest.raises(ValueError, match="k_range"): RubricWorld(n_topics=3, k_range=(2, 4))


def test_dpo_rejects_a_pair_without_preference(setup):
    from iclr26nb.ref_judge import PrefPair
    w, lm, ps, ys, rs, _ = setup
    good = PrefPair(ps[0], tuple(rs[0]), tuple(ys[0]), 1.0, w.quality(ps[0], rs[0]), w.quality(ps[0], ys[0]))
    tie = PrefPair(ps[1], tuple(rs[1]), tuple(rs[1]), 0.0, w.quality(ps[1], rs[1]), w.quality(ps[1], rs[1]))
    with pytest.raises(ValueError, match="pair 1 has identical chosen and rejected"): dpo(copy.deepcopy(lm), lm, w, [good, tie])
    assert len(dpo(copy.deepcopy(lm), lm, w, [good], epochs=1)) == 1
