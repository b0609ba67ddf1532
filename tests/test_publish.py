"Publishing cannot clobber: a bare 'Run all' is smoke, only --inplace touches results/, failures leave the tree as it was."
import configparser, json, os, re, shutil, subprocess, sys, time
from pathlib import Path
import nbformat
import pytest
from nbclient import NotebookClient
from conftest import ROOT, NBS, notebooks, is_experiment, read
from iclr26nb.cli import EncryptedKernelManager, execute, run_series

ids = lambda p: str(p.relative_to(NBS))
EXPERIMENTS = [nb for nb in notebooks() if is_experiment(nb)]


def _snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): (p.stat().st_mtime_ns, p.stat().st_size) for p in d.rglob("*") if p.is_file()} if d.exists() else {}


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=ids)
def test_run_all_is_smoke(nb):
    "The committed notebook, opened fresh and run from the top with no parameters, resolves to smoke and writes nothing under results/."
    book = read(nb)
    at = next(i for i, c in enumerate(book.cells) if c.cell_type == "code" and re.search(r"\bcfg\s*=\s*resolve\(", c.source))
    book.cells = book.cells[:at + 1] + [nbformat.v4.new_code_cell(
        "import json as _j; print(_j.dumps(dict(mode=cfg.mode, out=str(cfg.out))))")]
    for c in book.cells: c.outputs = [] if c.cell_type == "code" else None
    book.cells = [c for c in book.cells if c.cell_type == "code"]
    mine = ROOT/"results"/nb.parent.name                       # this series' folder (other series may publish meanwhile)
    before = _snapshot(mine)
    NotebookClient(book, timeout=120, kernel_name="python3", kernel_manager_class=EncryptedKernelManager,
                   resources=dict(metadata=dict(path=str(nb.parent)))).execute()
    out = "".join(o.get("text", "") for o in book.cells[-1].outputs if o.get("name") == "stdout")   # a print may arrive in pieces
    got = json.loads(out.strip().splitlines()[-1])
    assert got["mode"] == "smoke", f"{ids(nb)}: a bare Run all resolves to {got['mode']!r}"
    assert not Path(got["out"]).resolve().is_relative_to((ROOT/"results").resolve()), f"{ids(nb)}: smoke writes to {got['out']}"
    assert _snapshot(mine) == before, f"{ids(nb)}: running the first cells changed results/{nb.parent.name}/"


DEMO = '''from iclr26nb.core.params import resolve
from iclr26nb.core.verdict import Claim, save_results
import pandas as pd'''
RUN = '''cfg = resolve(MODE, slug="00_core", device=DEVICE, out=OUT, smoke=dict(seeds=[0]), full=dict(seeds=[0, 1, 2]))
df = pd.DataFrame([dict(method="m", seed=s, metric="x", value=1.0 + s) for s in cfg.seeds])
save_results(cfg, df, [Claim("E1", "x is positive", "demo", "x", "m", threshold=0.0)])'''


def _demo_repo(tmp: Path, fail: bool = False) -> Path:
    (tmp/"nbs"/"00_core").mkdir(parents=True); shutil.copy(ROOT/"settings.ini", tmp)
    cells = [nbformat.v4.new_markdown_cell("# demo\n> a tiny experiment"), nbformat.v4.new_code_cell(DEMO),
             nbformat.v4.new_code_cell('# parameters\nMODE = "smoke"\nDEVICE = "auto"\nOUT = None'), nbformat.v4.new_code_cell(RUN)]
    cells[2].metadata["tags"] = ["parameters"]
    if fail: cells.append(nbformat.v4.new_code_cell('raise RuntimeError("boom after save_results")'))
    book = nbformat.v4.new_notebook(cells=cells, metadata=dict(kernelspec=dict(name="python3", display_name="Python 3", language="python")))
    nbformat.write(book, tmp/"nbs"/"00_core"/"00z_demo.ipynb")
    return tmp


def test_full_without_inplace_stays_under_runs(tmp_path):
    root = _demo_repo(tmp_path)
    [rec] = run_series("core", "full", "cpu", root=root)
    assert rec["ok"], rec
    assert (root/"runs"/"full"/"00_core"/"results"/"full.json").exists() and not (root/"results").exists()


def test_inplace_publishes_a_note_and_failure_restores(tmp_path):
    root = _demo_repo(tmp_path); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    [rec] = run_series("core", "full", "cpu", inplace=True, root=root)
    assert rec["ok"], rec
    book = read(nb); tags = [c.metadata.get("tags", []) for c in book.cells]
    assert ["injected-parameters"] not in tags and ["published-run"] in tags
    assert 'MODE = "smoke"' in book.cells[2].source
    res = root/"results"/"00_core"/"full.json"; good = res.read_bytes()
    assert json.loads(good)["claims"][0]["status"] == "holds"
    # a failing publication leaves the notebook and results/ as they were
    failing = _demo_repo(tmp_path/"again", fail=True); bad_nb = failing/"nbs"/"00_core"/"00z_demo.ipynb"
    (failing/"results"/"00_core").mkdir(parents=True); (failing/"results"/"00_core"/"full.json").write_bytes(good)
    committed = bad_nb.read_bytes()
    [rec] = run_series("core", "full", "cpu", inplace=True, root=failing)
    assert not rec["ok"] and "boom" in rec["error"], rec
    assert bad_nb.read_bytes() == committed and (failing/"results"/"00_core"/"full.json").read_bytes() == good


def test_inplace_needs_full_and_no_out(tmp_path):
    with pytest.raises(ValueError, match="--mode full"): run_series("core", "smoke", inplace=True, root=_demo_repo(tmp_path))
    with pytest.raises(ValueError, match="no --out"): run_series("core", "full", out=tmp_path, inplace=True, root=tmp_path)


def test_bad_device_fails_before_running():
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "iclr26nb.cli", "run", "core", "--device", "tpu"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "allowed" in r.stderr and time.monotonic() - t0 < 30, (r.returncode, r.stderr)


def test_kernels_start_without_the_tcp_warning(tmp_path):
    nb = tmp_path/"k.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")], metadata=dict(kernelspec=dict(name="python3", display_name="Python 3", language="python"))), nb)
    code = f"from iclr26nb.cli import execute; execute({str(nb)!r}, {str(tmp_path/'o.ipynb')!r})"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "without encryption" not in r.stderr, r.stderr


def test_nbdev_never_rewrites_the_readme():
    "nbdev_docs rebuilds README.md from readme_nb when that file is newer; ours names no existing notebook, so it never does."
    from nbdev.quarto import _doc_mtime_not_older
    cp = configparser.ConfigParser(); cp.read(ROOT/"settings.ini")
    target = NBS/cp["DEFAULT"]["readme_nb"]
    assert not target.exists(), f"readme_nb = {target.name} exists, so nbdev_docs would overwrite the hand-written README"
    assert _doc_mtime_not_older(ROOT/"README.md", target) is True


def test_figures_are_saved_even_with_agg(tmp_path, monkeypatch):
    "MPLBACKEND=Agg (as CI sets it) must not strip inline figures from executed or published notebooks."
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = tmp_path/"f.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2]);")],
                   metadata=dict(kernelspec=dict(name="python3", display_name="Python 3", language="python"))), nb)
    execute(nb, tmp_path/"o.ipynb")
    assert any("image/png" in o.get("data", {}) for o in read(tmp_path/"o.ipynb").cells[0].outputs)
