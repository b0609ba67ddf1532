"""ABBA/LoHa adapters round-trip through the real Hugging Face + PEFT stack: a tiny Llama checkpoint written with
`save_pretrained`, our adapters on q/v projections, export under PEFT-LoHa keys, `PeftModel.from_pretrained` on the export."""
import json
import pytest
import torch

transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
from safetensors.torch import save_file
from iclr26nb.abba import adapters, apply_adapters, load_local_model, merge_all, unmerge_all, to_peft_loha_state_dict


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_llama")
    cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16)
    torch.manual_seed(0)                                   # test code: a fixed random checkpoint
    transformers.LlamaForCausalLM(cfg).save_pretrained(d)
    return d


def _logits(model, ids):
    with torch.no_grad(): out = model(ids)
    return getattr(out, "logits", out)


@pytest.mark.parametrize("kind", ["abba", "loha"])
def test_peft_loha_round_trip(checkpoint, tmp_path, kind):
    ids = torch.randint(0, 32, (2, 9), generator=torch.Generator().manual_seed(1))
    ours = load_local_model(checkpoint); z0 = _logits(ours, ids)
    apply_adapters(ours, kind, ["q_proj", "v_proj"], r=8, generator=torch.Generator().manual_seed(2))
    assert len(adapters(ours)) == 4
    assert (_logits(ours, ids) - z0).abs().max() <= 1e-6                          # identity at init
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in ours.parameters():
            if p.requires_grad: p.add_(0.1 * torch.randn(p.shape, generator=g))
    z1 = _logits(ours, ids); assert (z1 - z0).abs().max() > 1e-3                 # the adapters now change the output
    W = {k: v.clone() for k, v in ours.state_dict().items()}
    merge_all(ours); assert (_logits(ours, ids) - z1).abs().max() <= 1e-5
    unmerge_all(ours); assert max(float((ours.state_dict()[k] - W[k]).abs().max()) for k in W) <= 1e-6
    out = tmp_path/"peft_adapter"; out.mkdir()
    peft.LoHaConfig(r=4, alpha=4, target_modules=["q_proj", "v_proj"]).save_pretrained(out)
    save_file({k: v.contiguous() for k, v in to_peft_loha_state_dict(ours).items()}, out/"adapter_model.safetensors")
    base = transformers.AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    pm = peft.PeftModel.from_pretrained(base, out).eval()
    assert (_logits(pm, ids) - z1).abs().max() <= 1e-5                             # PEFT reads our export as we run it
    assert json.loads((out/"adapter_config.json").read_text())["peft_type"] == "LOHA"


def _perturb(model, seed=3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad: p.add_(0.1 * torch.randn(p.shape, generator=g))


@pytest.mark.parametrize("kind", ["lora", "rslora", "dora", "hira", "loha", "abba"])
def test_peft_from_pretrained_matches_our_forward(checkpoint, tmp_path, kind):
    """Our export (save_peft_adapter) loaded by PeftModel.from_pretrained gives our outputs; identity at init; merge round trip."""
    from iclr26nb.abba import save_peft_adapter
    ids = torch.randint(0, 32, (2, 9), generator=torch.Generator().manual_seed(1))
    ours = load_local_model(checkpoint); z0 = _logits(ours, ids)
    apply_adapters(ours, kind, ["q_proj", "v_proj", "up_proj"], r=8, generator=torch.Generator().manual_seed(2))
    assert (_logits(ours, ids) - z0).abs().max() <= 1e-6                          # identity at init
    _perturb(ours); z1 = _logits(ours, ids); assert (z1 - z0).abs().max() > 1e-3
    W = {k: v.clone() for k, v in ours.state_dict().items()}
    merge_all(ours); assert (_logits(ours, ids) - z1).abs().max() <= 1e-5
    unmerge_all(ours); assert max(float((ours.state_dict()[k] - W[k]).abs().max()) for k in W) <= 1e-6
    out = save_peft_adapter(ours, tmp_path/"ours_as_peft")
    base = transformers.AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    pm = peft.PeftModel.from_pretrained(base, out).eval()
    assert (_logits(pm, ids) - z1).abs().max() <= 1e-5                             # PEFT runs our export as we do


@pytest.mark.parametrize("kind", ["lora", "rslora", "dora", "hira", "loha"])
def test_load_adapter_on_a_peft_folder(checkpoint, tmp_path, kind):
    """A folder written by PEFT itself (PeftModel.save_pretrained) loads with load_adapter and runs as PEFT runs it;
    from_peft_state_dict inverts to_peft_state_dict."""
    from iclr26nb.abba import load_adapter, to_peft_state_dict, from_peft_state_dict
    ids = torch.randint(0, 32, (2, 9), generator=torch.Generator().manual_seed(1))
    tm = ["q_proj", "v_proj"]
    cfg = dict(lora=peft.LoraConfig(r=4, lora_alpha=8, target_modules=tm), rslora=peft.LoraConfig(r=4, lora_alpha=8, use_rslora=True, target_modules=tm),
               dora=peft.LoraConfig(r=4, lora_alpha=8, use_dora=True, target_modules=tm), hira=peft.HiraConfig(r=4, target_modules=tm),
               loha=peft.LoHaConfig(r=4, alpha=8, target_modules=tm))[kind]
    torch.manual_seed(5)                                   # test code: PEFT's own random init
    pm = peft.get_peft_model(transformers.AutoModelForCausalLM.from_pretrained(checkpoint), cfg)
    _perturb(pm); pm.eval(); zp = _logits(pm, ids)
    pm.save_pretrained(tmp_path/"peft_written")
    ours = load_adapter(load_local_model(checkpoint), tmp_path/"peft_written")
    assert len(adapters(ours)) == 4
    assert (_logits(ours, ids) - zp).abs().max() <= 1e-5
    sd = to_peft_state_dict(ours)
    fresh = load_adapter(load_local_model(checkpoint), tmp_path/"peft_written")
    _perturb(fresh, seed=9); from_peft_state_dict(fresh, sd)
    assert (_logits(fresh, ids) - zp).abs().max() <= 1e-6


def test_loha_export_refuses_unequal_ranks(checkpoint):
    from iclr26nb.abba import to_peft_state_dict
    ours = apply_adapters(load_local_model(checkpoint), "abba", ["q_proj"], r=7)    # r1 = 4, r2 = 3
    with pytest.raises(ValueError, match="r1 == r2"): to_peft_state_dict(ours)


def test_load_local_model_uses_the_checkpoint_class(tmp_path):
    """An encoder checkpoint (architectures = BertModel) loads as itself, not under a random LM head: save/load is exact."""
    cfg = transformers.BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                  max_position_embeddings=32)
    torch.manual_seed(0)                                   # test code: a fixed random checkpoint
    ref = transformers.BertModel(cfg).eval(); ref.save_pretrained(tmp_path/"bert")
    ids = torch.randint(0, 40, (2, 7), generator=torch.Generator().manual_seed(1))
    m = load_local_model(tmp_path/"bert")
    assert type(m).__name__ == "BertModel"
    with torch.no_grad(): assert (m(ids).last_hidden_state - ref(ids).last_hidden_state).abs().max() <= 1e-6


def test_als_abba_rejects_a_negative_or_nonfinite_ridge():
    import numpy as np
    from iclr26nb.abba import als_abba
    T = np.outer(np.arange(1.0, 7.0), np.arange(1.0, 5.0))
    assert als_abba(T, 1, 1, sweeps=5, ridge=0.0).error < 1e-10                 # ridge = 0 is allowed (plain least squares)
    for bad in (-1e-6, float("nan"), float("inf"), "0"):
        with pytest.raises(ValueError, match="ridge must be"): als_abba(T, 1, 1, ridge=bad)
