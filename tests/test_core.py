"Core unit tests beyond the notebooks' own asserts: determinism, resolve errors, atomic writes, every branch of judge."
import json
import numpy as np
import pandas as pd
import pytest
import torch
from iclr26nb.core.runtime import atomic_write, get_device, seed_everything, seeded
from iclr26nb.core.params import resolve, repo_root
from iclr26nb.core.plot import method_colors, set_method_colors
from iclr26nb.core.train import fit, compare, sgd_step
from iclr26nb.core.verdict import Claim, judge, judge_all, save_results, verdict_table


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


C1 = Claim("C1", "ours beats base", "Tab. 1", "acc", "ours", baseline="base", margin=0.05)


@pytest.mark.parametrize("ours,status", [([0.9, 0.92, 0.91], "holds"), ([0.79, 0.8, 0.81], "does not hold"),
                                         ([0.8, 0.97, 0.88], "does not hold")])      # one seed short of the margin
def test_judge_statuses(ours, status):
    assert judge(C1, _tab(ours, [0.8, 0.8, 0.8]))["status"] == status
    assert judge(C1, _tab(ours, [0.8, 0.8, 0.8]), mode="smoke")["status"] == "not judged (smoke)"


def test_judge_lower_and_threshold():
    c = Claim("C2", "error below 5%", "Fig. 3", "err", "ours", threshold=0.05, better="lower")
    assert judge(c, _tab([0.01, 0.02, 0.03], [0, 0, 0], "err"))["status"] == "holds"
    assert judge(c, _tab([0.2, 0.3, 0.01], [0, 0, 0], "err"))["status"] == "does not hold"
    with pytest.raises(ValueError, match="no rows"): judge(c, _tab([1], [1], "acc"))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("where", ["ours", "base"])
def test_judge_non_finite_never_holds(bad, where):
    ours, base = [0.95, 0.96, 0.97], [0.8, 0.8, 0.8]
    (ours if where == "ours" else base)[2] = bad
    j = judge(C1, _tab(ours, base))
    assert j["status"] == "does not hold" and j["reason"] == "non-finite value at seed 2", j


def test_judge_duplicates_raise():
    df = pd.concat([_tab([0.9, 0.9, 0.9], [0.8] * 3), _tab([0.7], [])], ignore_index=True)
    with pytest.raises(ValueError, match=r"duplicate .* seeds \[0\]"): judge(C1, df)


def test_judge_non_finite_threshold_raises():
    with pytest.raises(ValueError, match="finite"): Claim("C", "x", "s", "acc", "ours", threshold=float("inf"))


def test_judge_disjoint_seeds_are_inconclusive_and_shown_paired():
    df = pd.concat([_tab([0.9, 0.1, 0.1], []), _tab([], [0.0])], ignore_index=True)
    j = judge(C1, df)
    assert j["verdict"] == "inconclusive (seeds differ)" and j["ours"].startswith("0.3667 ± ")
    assert j["baseline_str"] == "0 (n=1)" and j["diff"] == "+0.9"            # the difference shown is on paired seeds


def test_judge_min_n():
    assert judge(C1, _tab([0.9, 0.9], [0.8, 0.8]))["verdict"] == "inconclusive (n < min_n: 2 < 3)"
    c5 = Claim("C5", "x", "s", "acc", "ours", baseline="base", min_n=5)
    assert judge(c5, _tab([0.9] * 4, [0.8] * 4))["status"] == "inconclusive"
    assert judge(c5, _tab([0.9] * 5, [0.8] * 5))["status"] == "holds"


def test_judge_k_of_n():
    c = Claim("C", "x", "s", "acc", "ours", baseline="base", margin=0.05, rule="k_of_n", k=4)
    assert c.min_n == 4
    four, three = [0.9, 0.9, 0.9, 0.9, 0.8], [0.9, 0.9, 0.9, 0.8, 0.8]
    assert judge(c, _tab(four, [0.8] * 5))["status"] == "holds"
    assert judge(c, _tab(three, [0.8] * 5))["status"] == "does not hold"
    assert judge(C1, _tab(four, [0.8] * 5))["status"] == "does not hold"     # 4 of 5 fails the "all" rule
    with pytest.raises(ValueError, match="needs an int k"): Claim("C", "x", "s", "acc", "ours", threshold=0, rule="k_of_n")


def test_judge_exact():
    e = Claim("E", "identity", "Eq. 1", "err", "ours", threshold=1e-12, better="lower", exact=True)
    assert e.min_n == 1 and judge(e, _tab([1e-15], [], "err"))["status"] == "holds"
    assert judge(e, _tab([1e-3], [], "err"))["status"] == "does not hold"
    with pytest.raises(TypeError, match="bool"): Claim("E", "x", "s", "err", "ours", threshold=0, exact=1)


def test_preconditions():
    p = Claim("P", "baseline works", "ours", "acc", "base", threshold=0.7)
    c = Claim("C2", "x", "s", "acc", "ours", baseline="base", requires="P")
    ok, bad = judge_all([c, p], _tab([0.9] * 3, [0.8] * 3)), judge_all([c, p], _tab([0.9] * 3, [0.6] * 3))
    assert [j["status"] for j in ok] == ["holds", "holds"]
    assert bad[0]["verdict"] == "inconclusive (precondition P not met)"
    with pytest.raises(ValueError, match="not among"): judge_all([c], _tab([0.9] * 3, [0.8] * 3))


def test_verdict_table_shows_baseline_difference_and_rule():
    vt = verdict_table([C1], _tab([0.9, 0.92, 0.91], [0.8, 0.81, 0.82]))
    row = vt.loc["C1"]
    assert row["baseline / threshold"] == "0.81 ± 0.01 (n=3)" and row["difference (paired)"] == "+0.1 ± 0.01"
    assert row["rule"] == "every seed (n >= 3)" and row["verdict"] == "holds"
    html = vt._repr_html_()
    assert "ours beats base (Tab. 1)" in html and "#d1e7dd" in html and "text-align: left" in html


def test_seeded_is_scoped():
    torch.manual_seed(7); ref = torch.rand(3)
    torch.manual_seed(7)
    with seeded(1) as rng: a, x = torch.rand(2), rng.random()
    assert torch.equal(torch.rand(3), ref)
    with seeded(1) as rng: assert torch.equal(torch.rand(2), a) and rng.random() == x


def test_method_colors_one_map_per_page():
    set_method_colors(None)
    first = method_colors(["abba", "lora"]); second = method_colors(["dora", "lora", "abba"])
    assert second["abba"] == first["abba"] and second["lora"] == first["lora"] and len(set(second.values())) == 3
    set_method_colors(None)


def test_resolve_seeds_override(tmp_path):
    cfg = resolve("full", out=tmp_path, seeds=[7], smoke=dict(seeds=[0]), full=dict(seeds=[0, 1, 2]))
    assert cfg.seeds == [7]
    with pytest.raises(ValueError, match="list of ints"): resolve("full", out=tmp_path, seeds=[1.5], smoke=dict(seeds=[0]), full=dict(seeds=[0]))


def test_outside_a_checkout_is_one_clear_error(tmp_path, monkeypatch, capsys):
    import iclr26nb.core.params as params
    from iclr26nb.cli import main
    monkeypatch.setattr(params, "_pkg_root", lambda: tmp_path/"site-packages"); monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="not inside an iclr26nb checkout"): repo_root()
    with pytest.raises(ValueError, match="not inside an iclr26nb checkout"):
        resolve("full", slug="00_core", smoke=dict(n=1), full=dict(n=1))
    assert main(["scoreboard"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run this from a clone" in err[0], err
    assert main(["list"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 19 and "(no checkout here)" in out[0]


def test_save_results_full_json(tmp_path):
    cfg = resolve("full", slug="00_core", out=tmp_path, smoke=dict(n=1), full=dict(n=2))
    c = Claim("C1", "x", "Tab. 1", "acc", "ours", baseline="base")
    p = save_results(cfg, _tab([0.9, 0.9, 0.9], [0.8, 0.8, 0.8]), [c])
    blob = json.loads(p.read_text())
    assert p.name == "full.json" and blob["claims"][0]["status"] == "holds" and blob["mode"] == "full"


def test_series_are_exposed_lazily():
    import importlib, sys, iclr26nb
    assert iclr26nb.lamir.__name__ == "iclr26nb.lamir" and "lamir" in dir(iclr26nb)
    with pytest.raises(AttributeError, match="no attribute 'gpt5'"): iclr26nb.gpt5
