"Core unit tests beyond the notebooks' own asserts: determinism, resolve errors, atomic writes, judge."
import json
import numpy as np
import pandas as pd
import pytest
import torch
from iclr26nb.core.runtime import atomic_write, get_device, seed_everything
from iclr26nb.core.params import resolve
from iclr26nb.core.train import fit, compare, sgd_step
from iclr26nb.core.verdict import Claim, judge, save_results


def _train(seed):
    seed_everything(seed); torch.set_num_threads(1)
    m = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(m.parameters(), 1e-2); g = torch.Generator().manual_seed(seed)
    X = torch.randn(64, 4, generator=g); y = X.sum(1, keepdim=True)
    h = fit(lambda i: dict(loss=sgd_step(m, opt, ((m(X) - y)**2).mean())), 50, verbose=False)
    return dict(loss=h.last["loss"])


def test_determinism_fit_and_compare():
    a = compare(dict(mlp=_train), [0, 1]); b = compare(dict(mlp=_train), [0, 1])
    assert a.value.tolist() == b.value.tolist()
    assert compare(dict(mlp=_train), [2]).value.tolist() != a.value.tolist()[:1]


@pytest.mark.parametrize("kw,msg", [
    (dict(mode="fast", smoke={}, full={}), "MODE must be one of"),
    (dict(mode="smoke", smoke=dict(a=1), full=dict(b=1)), "same keys"),
    (dict(mode="smoke", smoke=dict(a=1), full=dict(a=[1])), "differ only in values"),
    (dict(mode="smoke", smoke=dict(device=1), full=dict(device=2)), "reserved"),
    (dict(mode="smoke", seed=1.5, smoke={}, full={}), "SEED must be an int"),
    (dict(mode="smoke", out=3, smoke={}, full={}), "OUT must be None or a path"),
])
def test_resolve_errors(kw, msg):
    mode = kw.pop("mode")
    with pytest.raises(ValueError, match=msg): resolve(mode, **kw)


def test_get_device_errors():
    with pytest.raises(ValueError, match="allowed"): get_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="not available"): get_device("cuda")


def test_atomic_write_no_partial_file(tmp_path):
    p = tmp_path/"r.json"
    with pytest.raises(ZeroDivisionError):
        with atomic_write(p) as f: f.write('{"half": '); 1 / 0
    assert list(tmp_path.iterdir()) == []
    with atomic_write(p) as f: json.dump(dict(ok=1), f)
    assert json.loads(p.read_text()) == dict(ok=1) and len(list(tmp_path.iterdir())) == 1


def _tab(ours, base, metric="acc"):
    return pd.DataFrame([dict(method=m, seed=s, metric=metric, value=v) for m, vs in (("ours", ours), ("base", base))
                         for s, v in enumerate(vs)])


@pytest.mark.parametrize("ours,status", [([0.9, 0.92, 0.91], "holds"), ([0.79, 0.8, 0.81], "does not hold"),
                                         ([0.8, 0.97, 0.88], "inconclusive")])
def test_judge_statuses(ours, status):
    c = Claim("C1", "ours beats base", "Tab. 1", "acc", "ours", baseline="base", margin=0.05)
    assert judge(c, _tab(ours, [0.8, 0.8, 0.8]))["status"] == status
    assert judge(c, _tab(ours, [0.8, 0.8, 0.8]), mode="smoke")["status"] == "not judged (smoke)"


def test_judge_lower_and_threshold():
    c = Claim("C2", "error below 5%", "Fig. 3", "err", "ours", threshold=0.05, better="lower")
    assert judge(c, _tab([0.01, 0.02], [0, 0], "err"))["status"] == "holds"
    assert judge(c, _tab([0.2, 0.3], [0, 0], "err"))["status"] == "does not hold"
    with pytest.raises(ValueError, match="no rows"): judge(c, _tab([1], [1], "acc"))


def test_save_results_full_json(tmp_path):
    cfg = resolve("full", slug="00_core", out=tmp_path, smoke=dict(n=1), full=dict(n=2))
    c = Claim("C1", "x", "Tab. 1", "acc", "ours", baseline="base")
    p = save_results(cfg, _tab([0.9, 0.9], [0.8, 0.8]), [c])
    blob = json.loads(p.read_text())
    assert p.name == "full.json" and blob["claims"][0]["status"] == "holds" and blob["mode"] == "full"
