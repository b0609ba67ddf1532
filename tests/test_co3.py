"Fast checks of iclr26nb.co3 beyond the notebooks' asserts: determinism, closed-form NFE, weight constraints, space identities."
import importlib.util, math
import numpy as np, pytest, torch
from iclr26nb.core.runtime import seeded
from iclr26nb.co3 import (CO3Corrector, CondEps, CondUNet, CFGpp, DigitPairs, NFECounter, Prompts, ShapesScenes, TextCond, TweedieMix,
                          UNetConfig, ddim_sample, nfe_per_image)

class Fixed:
    "Fixed noise predictions per condition id."
    def __init__(self, E): self.E = E
    def __call__(self, x, t, conds): return torch.stack([self.E[c].expand_as(x) for c in conds])

def _fixed(K=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    E = {i: torch.randn(3, 1, 4, 4, generator=g) for i in range(K + 2)}
    return Fixed(E), Prompts(joint=1, concepts=list(range(2, K + 2)), null=0), torch.randn(3, 1, 4, 4, generator=g)

def test_sampler_is_deterministic_on_cpu():
    sc = ShapesScenes(concepts=("square", "disk", "triangle", "plus"))
    with seeded(0):
        net = CondUNet(UNetConfig(channels=(8, 16), vocab_size=len(sc.vocab)))
        for p in net.out.parameters(): torch.nn.init.normal_(p, std=0.1)      # a zero-initialised head predicts ε = 0
    m, P = CondEps(net), sc.prompts([("square", "disk"), ("triangle", "plus")], np.random.default_rng(0))
    co = CO3Corrector(n_corrected=3, n_resample=2, iters=2, first_iters=3)
    a, b = [ddim_sample(m, P, 8, corrector=co, generator=torch.Generator().manual_seed(3)) for _ in range(2)]
    assert torch.equal(a, b) and torch.isfinite(a).all()

@pytest.mark.parametrize("K", [2, 3, 4])
@pytest.mark.parametrize("nc", [0, 2, 6])
def test_counted_nfe_equals_closed_form(K, nc):
    class PM:
        shape, T = (1, 2, 2), 1000
        def __init__(self):
            from iclr26nb.co3 import cosine_abar
            self.abar = cosine_abar()
        def __call__(self, x, t, conds): return torch.stack([x * 0.1] * len(conds))
    P = Prompts(joint=torch.zeros(2), concepts=[torch.zeros(2)] * K, null=torch.zeros(2))
    co = CO3Corrector(n_corrected=nc, n_resample=min(3, nc), normalize="none") if nc else None
    _, st = ddim_sample(PM(), P, 20, corrector=co, return_stats=True)
    iters = sum(10 if i < 2 else 5 for i in range(nc))
    assert st["nfe"] == 40 + iters * (K + 2) == nfe_per_image(20, K, corrector=co)

def test_sum_one_weights_make_noise_and_tweedie_space_agree():
    m, P, x = _fixed()
    kw = dict(algo="correct", normalize="none", weights=(2.0, -0.5, -0.5))
    tw, ns = CO3Corrector(**kw).correct(x, 500, 0.3, m, P), CO3Corrector(space="noise", **kw).correct(x, 500, 0.3, m, P)
    torch.testing.assert_close(tw, ns)                                        # they differ by (1 - Σw) x = 0
    off = dict(algo="correct", normalize="none", weights=(2.0, -0.25, -0.25), allow_unnormalized=True)
    assert not torch.allclose(CO3Corrector(**off).correct(x, 500, 0.3, m, P), CO3Corrector(space="noise", **off).correct(x, 500, 0.3, m, P))

def test_weight_constraints_raise():
    with pytest.raises(ValueError, match="must sum to 1"): CO3Corrector(algo="correct", weights=(1.0, -0.5, -0.5))
    with pytest.raises(ValueError, match="must sum to 0"): CO3Corrector(algo="resample", weights=(1.0, -0.25, -0.25))
    with pytest.raises(ValueError, match="explicit weights need"): CO3Corrector(weights=(2.0, -0.5, -0.5))
    CO3Corrector(algo="resample", weights=(1.0, -0.5, -0.5))                   # sum zero: accepted
    m, P, x = _fixed(K=3)
    with pytest.raises(ValueError, match="2 concept weights were given for 3"): CO3Corrector(algo="correct", weights=(2.0, -0.5, -0.5)).correct(x, 500, .3, m, P)

def test_tweediemix_without_distinct_concepts_is_cfgpp():
    m, P, x = _fixed()
    e = torch.stack([m.E[0], m.E[1], m.E[1], m.E[1]])                           # every concept predicts like the joint prompt
    torch.testing.assert_close(TweedieMix(0.7, joint=0.3).combine(e, P)[0], CFGpp(0.7).combine(e[:2], P)[0])

def test_text_cond_and_digit_pairs():
    c = TextCond(torch.zeros(1, 2, 3), {"mask": torch.ones(1, 2)}).repeat(4)
    assert len(TextCond.cat([c, c])) == 8
    dp = DigitPairs(digits=(2, 5))
    x1, x2 = [dp.render([(0, 1), (1,)], np.random.default_rng(9)) for _ in range(2)]
    assert torch.equal(x1, x2) and x1.shape == (2, 1, 16, 24)

@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("diffusers", "transformers")), reason="needs the hf extra")
def test_sdxl_standin_counts_and_decodes(tmp_path):
    from iclr26nb.co3 import co3_generate_pipe, load_pipeline, make_tiny_pipeline
    pipe = load_pipeline(make_tiny_pipeline(tmp_path/"sdxl", "sdxl"))
    co = CO3Corrector(n_corrected=2, n_resample=1, iters=1, first_iters=2)
    x, st = co3_generate_pipe(pipe, n=1, steps=6, corrector=co, generator=torch.Generator().manual_seed(0), return_stats=True)
    assert st["nfe"] == nfe_per_image(6, 2, corrector=co) == 6 * 2 + (2 + 2) * 4
    img = co3_generate_pipe(pipe, n=1, steps=6, corrector=co, generator=torch.Generator().manual_seed(0), output="image")
    assert img.shape == (1, 3, 16, 16) and 0 <= img.min() <= img.max() <= 1

def _tiny_net(seed=3, canvas=16, vocab=9):
    from iclr26nb.core.runtime import seeded
    with seeded(seed): net = CondUNet(UNetConfig(canvas=canvas, channels=(16, 32), vocab_size=vocab))
    for p in net.out.parameters(): torch.nn.init.normal_(p, std=0.05)
    return net

def test_masked_tweediemix_all_background_is_cfgpp_and_counts():
    sc = ShapesScenes(concepts=("square", "disk", "triangle", "plus"))
    m, P = NFECounter(CondEps(_tiny_net(vocab=len(sc.vocab)))), sc.prompts([("square", "disk"), ("triangle", "plus")], np.random.default_rng(0))
    g = lambda: torch.Generator().manual_seed(2)
    bg = ddim_sample(m, P, 8, baseline=TweedieMix(0.7, masks="attention", thr=2.0), generator=g())
    torch.testing.assert_close(bg, ddim_sample(m, P, 8, baseline=CFGpp(0.7), generator=g()))
    tm = TweedieMix(0.7, masks="attention", switch=0.5)
    x, st = ddim_sample(m, P, 8, baseline=tm, generator=g(), return_stats=True)
    assert st["nfe"] == 2 * 4 + 1 + 4 * 4 == nfe_per_image(8, 2, rule=tm)
    torch.testing.assert_close(tm.M.sum(0), torch.ones(2, 1, 16, 16)); assert set(tm.M.unique().tolist()) <= {0.0, 1.0}

def test_region_masks_bad_inputs():
    from iclr26nb.co3 import region_masks
    A = torch.rand(1, 16, 3); j = torch.tensor([[3, 2, 4]])
    with pytest.raises(ValueError, match="missing from the joint prompt"): region_masks(A, j, [torch.tensor([[5]]), torch.tensor([[4]])], (8, 8))
    with pytest.raises(ValueError, match="do not tile"): region_masks(A, j, [torch.tensor([[3]]), torch.tensor([[4]])], (8, 10))
    with pytest.raises(ValueError, match="masks must be"): TweedieMix(masks="sam")

@pytest.mark.parametrize("K", [2, 3, 4])
def test_activation_bytes_closed_form(K):
    from iclr26nb.co3 import activation_bytes
    m = CondEps(_tiny_net()); x = torch.randn(5, 1, 16, 16); c = torch.tensor([[3, 0, 0, 0, 0]])
    b1 = activation_bytes(m, x[:1], 100, [c])
    assert activation_bytes(m, x, 100, [c.expand(5, -1)] * (K + 2)) == (K + 2) * 5 * b1

def test_digit_pairs_is_a_drop_in_world():
    from iclr26nb.co3 import train_denoiser, train_concept_classifier, evaluate_composition
    dp = DigitPairs(digits=(0, 1, 2), held_out=((0, 1),), pair_rate=.3)
    m = train_denoiser(dp, UNetConfig(canvas=dp.canvas, channels=(16, 32), vocab_size=len(dp.vocab)), steps=3, batch=8, n_pool=64, device="cpu")
    clf = train_concept_classifier(dp, steps=3, batch=8, n_pool=64, n_test=16, device="cpu")
    P = dp.prompts([(0, 1)] * 3, np.random.default_rng(0))
    x = ddim_sample(m, P, 4, corrector=CO3Corrector(n_corrected=2, n_resample=1, iters=1, first_iters=1), generator=torch.Generator().manual_seed(0))
    assert x.shape == (3, 1, 16, 24) and torch.isfinite(x).all()
    r = evaluate_composition(x, [(0, 1)] * 3, clf, ref=dp.render([(0, 1)] * 8))
    assert 0 <= r["coverage"] <= 1 and r["fd"] >= 0
