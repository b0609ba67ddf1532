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
