"Series 04 (es_dllm): the four-block decoding setting of the quality claims, its keep budget, and parity with the official rules."
import copy
import pytest, torch

from iclr26nb.models.tiny_lm import TinyLMConfig
from iclr26nb.es_dllm import (SamplerConfig, SkipSchedule, TinyMDLM, expected_token_layer_evals, generate_dual_cache, generate_es,
                              generate_vanilla, make_sort_task, reference_es_generate, task_tokenizer)

TK = task_tokenizer(10)
ONE = SkipSchedule(((1.0, 0.0),))


def _model(seed=0, d=32, L=8):
    cfg = TinyLMConfig(vocab_size=len(TK), d_model=d, n_layers=L, n_heads=4, max_len=96, causal=False)
    return TinyMDLM(cfg, TK.mask_id, TK.eos_id, seed=seed).double().eval()


def _prompts(n=3, seed=1):
    return make_sort_task(n, 12, 16, seed=seed)[0]


def _brute_evals(kf, N, last, Bk):
    "Token-layer evaluations of one skipping step: layer l is entered by N tokens, or by n_j of the last skip layer j < l (a layer whose keep fraction drops)."
    n = lambda j: max(int(kf[j] * N), min(last + 2, Bk))
    skips = [j for j in range(len(kf) - 1) if kf[j] < ([1.0] + kf)[j]]
    return sum(min([N] + [n(j) for j in skips if j < l]) for l in range(len(kf)))


@pytest.mark.parametrize("N,last,Bk", [(4, 1, 4), (5, 1, 4), (8, 1, 8), (64, 1, 64), (16, 3, 16)])
def test_closed_form_matches_layer_by_layer_count(N, last, Bk):
    p = SkipSchedule().keep_fractions(8)
    assert expected_token_layer_evals(SkipSchedule(), 8, N, last, Bk) == _brute_evals(p, N, last, Bk)


def test_blocks_of_four_keep_three_of_four():
    "At B_k=4 with one token per step the budget n_l = max(floor(p N), min(last+2, B_k)) keeps 3 of the 4 block tokens."
    p = SkipSchedule().keep_fractions(8)                       # depths 1/8 and 1/4 of 8 layers: 1, 0.5, 0.25, 0.25, ...
    assert p[:3] == [1.0, 0.5, 0.25] and SkipSchedule().skip_layers(8) == [1, 2]
    assert expected_token_layer_evals(SkipSchedule(), 8, 4, 1, 4) == 4 * 2 + 3 * 6            # B_k=4: 3 kept after layer 1
    assert expected_token_layer_evals(SkipSchedule(), 8, 8, 1, 8) == 8 * 2 + 4 + 3 * 5        # B_k=8: 4, then 3 kept


@pytest.mark.parametrize("Bk", [4, 8])
def test_keep_one_es_equals_vanilla_and_dual_cache(Bk):
    m, x = _model(), _prompts()
    sc = SamplerConfig(16, Bk)
    van, dual = generate_vanilla(m, x, sc).ids, generate_dual_cache(m, x, sc).ids
    assert torch.equal(generate_es(m, x, sc, ONE, prompt_update_freq=1, refresh_suffix=True).ids, van)
    assert torch.equal(generate_es(m, x, sc, ONE, prompt_update_freq=Bk, block_update_freq=1, refresh_suffix=True).ids, dual)


@pytest.mark.parametrize("tau", [None, 0.9])
@pytest.mark.parametrize("mode", ["hidden", "key"])
def test_generate_es_matches_reference_in_blocks_of_four(tau, mode):
    m, x = _model(seed=2), _prompts(seed=3)
    sc = SamplerConfig(16, 4, parallel_threshold=tau)
    assert torch.equal(generate_es(m, x, sc, mode=mode).ids, reference_es_generate(m, x, sc, mode=mode))


def test_counted_work_matches_closed_form_in_blocks_of_four():
    m, x = _model(), _prompts()
    assert all(t["all_update"] for t in generate_es(m, x, SamplerConfig(16, 4), trace=True).trace["steps"])   # default B_k/4 = 1: never skips
    tr = generate_es(m, x, SamplerConfig(16, 4), block_update_freq=4, trace=True).trace["steps"]
    skipping = [t for t in tr if not t["all_update"]]
    assert len(skipping) == 3 * 4, "all-update only at the 4 block starts"
    for t in skipping:
        assert t["evals"] == len(x) * expected_token_layer_evals(SkipSchedule(), 8, t["n_fwd"], t["last_cnt"], 4)


def test_random_and_importance_do_the_same_work():
    m, x = _model(), _prompts()
    sc = SamplerConfig(16, 8)
    a = generate_es(m, x, sc)
    b = generate_es(m, x, sc, selector="random", generator=torch.Generator().manual_seed(0))
    assert a.token_layer_evals == b.token_layer_evals and a.steps == b.steps == 16


def test_seeded_decode_is_repeatable_on_cpu():
    m, x = _model(), _prompts()
    sc = SamplerConfig(16, 4, temperature=0.2, top_p=0.95)
    r = [generate_es(m, x, sc, generator=torch.Generator().manual_seed(5)).ids for _ in range(2)]
    assert torch.equal(r[0], r[1])


def test_bad_block_length_is_rejected():
    with pytest.raises(ValueError, match="multiple of block_length"): SamplerConfig(16, 5)
    with pytest.raises(ValueError, match="positive int"): SamplerConfig(16, 0)


@pytest.fixture(scope="module")
def eos_model():
    "A sort model trained for a few steps on G=16: it already predicts EOS past the answer, so delay_eos has EOS to hold back."
    from iclr26nb.es_dllm import train_tiny_mdlm
    trp, tra = make_sort_task(500, 5, 16, n_digits=5, seed=0)
    cfg = TinyLMConfig(vocab_size=len(TK), d_model=32, n_layers=8, n_heads=4, max_len=96, causal=False)
    m, _ = train_tiny_mdlm(trp, tra, cfg, TK.mask_id, TK.eos_id, steps=60, batch_size=32, lr=3e-3, device="cpu", seed=0, verbose=False)
    return copy.deepcopy(m).double().eval(), make_sort_task(4, 5, 16, n_digits=5, seed=1)[0]


@pytest.mark.parametrize("tau", [None, 0.9])
@pytest.mark.parametrize("G,Bk", [(16, 8), (64, 16)])
def test_parity_held_eos_and_block_starts(eos_model, G, Bk, tau):
    "Token identity with the restated official rules; a held EOS never gets the top-2 bonus; every later block start is an all-update refresh from 0."
    m, x = eos_model
    sc = SamplerConfig(G, Bk, parallel_threshold=tau)
    r = generate_es(m, x, sc, trace=True)
    assert torch.equal(r.ids, reference_es_generate(m, x, sc))
    st = r.trace["steps"]
    assert sum(t["n_held"] for t in st) > 0, "delay_eos must have held some EOS back for the check to mean anything"
    assert sum(t["bonus_held"] for t in st) == 0
    starts = [t for t in st if t["bstep"] == 0 and t["block"] > 0]
    assert len(starts) == G // Bk - 1 and all(t["all_update"] and t["lo"] == 0 for t in starts)
    assert [t["clock"] for t in starts] == [b * Bk for b in range(1, G // Bk)]


def test_dllm_cache_counts_qkv_of_every_response_token():
    "dLLM-Cache FLOPs by hand: a partial layer computes Q, K, V for all G response tokens, W_o / MLP / attention for the rho*G chosen."
    from iclr26nb.es_dllm import generate_dllm_cache
    m, x = _model(), _prompts(2)
    B, P = x.shape; G, L = 16, 8; T = P + G
    c = m.lm.config; D, Fd, V = c.d_model, c.d_ff, c.vocab_size
    r = generate_dllm_cache(m, x, SamplerConfig(G, G), prompt_interval=100, gen_interval=4, ratio=0.25)
    full = lambda n: 2 * n * (4 * D * D + 3 * D * Fd) + 4 * n * T * D                    # n tokens, all attending to T keys
    part = 2 * G * 3 * D * D + 2 * 4 * (D * D + 3 * D * Fd) + 4 * 4 * T * D             # Q/K/V for 16, the rest for 4
    expect = B * (L * (full(T) + 3 * full(G) + 12 * part) + 2 * D * V * (T + 15 * G))    # step 0; steps 4, 8, 12; 12 partial steps
    assert r.flops == pytest.approx(expect, rel=1e-12)
    assert r.token_layer_evals == B * L * (T + 3 * G + 12 * 4)


def test_padded_batch_decodes_each_row_as_alone():
    from iclr26nb.es_dllm import pad_prompts
    m, x = _model(), _prompts(3)
    rows = [x[0, :7], x[1], x[2, 2:]]
    ids, mask = pad_prompts(rows, TK.pad_id)
    sc = SamplerConfig(16, 4)
    for fn in (generate_vanilla, generate_dual_cache, lambda *a, **k: generate_es(*a, block_update_freq=4, **k)):
        assert torch.equal(fn(m, ids, sc, attention_mask=mask).ids, torch.cat([fn(m, r[None], sc).ids for r in rows]))
