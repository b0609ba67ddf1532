"Structure lint: series layout, parameters cells, exports, claims, published full runs."
import ast, json, re, shutil, subprocess
from pathlib import Path
import nbformat
import pytest
from conftest import ROOT, NBS, notebooks, series_dirs, is_experiment, read, param_cells
from iclr26nb.core.registry import PAPERS

FOLDERS = {p.folder for p in PAPERS}
EXPERIMENTS = [nb for nb in notebooks() if is_experiment(nb)]
SERIES_EXP = [nb for nb in EXPERIMENTS if nb.parent.name != "00_core"]
ids = lambda p: str(p.relative_to(NBS))


def test_series_folders_are_registered():
    bad = [d.name for d in series_dirs() if d.name not in FOLDERS]
    assert not bad, f"folders {bad} are not NN_slug of a registered paper (see iclr26nb.core.registry)"


@pytest.mark.parametrize("d", series_dirs(), ids=lambda d: d.name)
def test_series_has_method_and_experiments(d):
    nn = d.name[:2]
    names = sorted(p.name for p in d.glob("*.ipynb"))
    assert f"{nn}a_method.ipynb" in names and f"{nn}b_experiments.ipynb" in names, f"{d.name}: has {names}"
    assert all(re.fullmatch(rf"{nn}[a-d]_[a-z0-9_]+\.ipynb", n) for n in names), f"{d.name}: bad notebook names {names}"


@pytest.mark.parametrize("nb", notebooks(), ids=ids)
def test_title_and_subtitle(nb):
    first = next(c for c in read(nb).cells if c.cell_type == "markdown").source.strip().splitlines()
    assert first[0].startswith("# ") and any(l.startswith("> ") for l in first[1:3]), \
        f"{ids(nb)}: the first markdown cell must be '# Title' then '> one-line summary'"


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=ids)
def test_experiment_notebook_shape(nb):
    cells = read(nb).cells
    pc = param_cells(read(nb))
    assert len(pc) == 1, f"{ids(nb)}: needs exactly one cell tagged 'parameters' (found {len(pc)}); papermill cannot set MODE"
    src = pc[0].source
    assert src.startswith("# parameters"), f"{ids(nb)}: the parameters cell must start with '# parameters'"
    for node in ast.parse(src).body:
        assert isinstance(node, ast.Assign), f"{ids(nb)}: parameters cell may hold only assignments"
        ast.literal_eval(node.value)    # raises on anything but a literal
    assert "MODE" in src and '"smoke"' in src, f"{ids(nb)}: MODE must default to \"smoke\""
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert "#| export" not in code, f"{ids(nb)}: experiment notebooks import from iclr26nb, they export nothing"
    for fn in ("resolve(", "verdict_table(", "save_results("):
        assert fn in code, f"{ids(nb)}: must call {fn}...)"


def test_default_exp_unique():
    seen = {}
    for nb in notebooks():
        for m in re.findall(r"#\| default_exp (\S+)", "\n".join(c.source for c in read(nb).cells if c.cell_type == "code")):
            assert m not in seen, f"default_exp {m} in both {seen[m]} and {ids(nb)}: the second export overwrites the first"
            seen[m] = ids(nb)


@pytest.mark.parametrize("nb", SERIES_EXP, ids=ids)
def test_full_run_is_published(nb):
    "The committed notebook carries its full run (a provenance note, no injected MODE), results/NN_slug/full.json its numbers."
    cells = read(nb).cells
    tags = lambda c: c.get("metadata", {}).get("tags", [])
    assert not [c for c in cells if "injected-parameters" in tags(c)], \
        f"{ids(nb)}: an injected-parameters cell makes a bare 'Run all' a full run; publish with `iclr26nb run SLUG --mode full --inplace`"
    notes = [c for c in cells if "published-run" in tags(c)]
    assert len(notes) == 1 and notes[0].cell_type == "markdown" and "`full` run" in notes[0].source, \
        f"{ids(nb)}: publish the full run (iclr26nb run SLUG --mode full --inplace)"
    res = ROOT/"results"/nb.parent.name/"full.json"
    assert res.exists(), f"{res.relative_to(ROOT)} is missing"
    blob = json.loads(res.read_text())
    assert blob["mode"] == "full" and blob["claims"], f"{res.relative_to(ROOT)}: no judged claims"
    method = nb.parent/f"{nb.parent.name[:2]}a_method.ipynb"
    text = "\n".join(c.source for c in read(method).cells if c.cell_type == "markdown")
    missing = [c["id"] for c in blob["claims"] if not re.search(rf"\b{re.escape(c['id'].split('.')[0])}\b", text)]
    assert not missing, f"claim ids {missing} of {res.name} are not introduced on {method.name}"


def test_parameters_tag_survives_nbdev_clean(tmp_path):
    "Without allowed_cell_metadata_keys = tags, nbdev_clean strips papermill's tag; prove it survives."
    shutil.copy(ROOT/"settings.ini", tmp_path/"settings.ini"); (tmp_path/"nbs").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("# parameters\nMODE = 'smoke'")])
    nb.cells[0].metadata["tags"] = ["parameters"]; nb.cells[0].metadata["scrolled"] = True
    f = tmp_path/"nbs"/"x.ipynb"; nbformat.write(nb, f)
    subprocess.run(["nbdev_clean", "--fname", str(f)], cwd=tmp_path, check=True, capture_output=True)
    md = nbformat.read(f, as_version=4).cells[0].metadata
    assert md.get("tags") == ["parameters"] and "scrolled" not in md, md


def test_quarto_single_source():
    "nbs/_quarto.yml is a link to the top-level _quarto.yml (one source of truth; its sidebar is generated, see test_docs)."
    q = NBS/"_quarto.yml"
    assert q.is_symlink() and q.resolve() == (ROOT/"_quarto.yml").resolve(), "nbs/_quarto.yml must link to ../_quarto.yml"
