"The iclr26nb console script."
import shutil, subprocess, sys
from pathlib import Path
from conftest import ROOT
from iclr26nb.cli import run_series


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "iclr26nb.cli", *args], cwd=ROOT, capture_output=True, text=True)


def test_list_shows_nineteen():
    r = _cli("list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 19 and lines[0].startswith("01  relu_dag") and lines[-1].startswith("19  lamir")


def test_unknown_slug_is_a_clear_error():
    r = _cli("run", "gpt5")
    assert r.returncode == 2 and "unknown series 'gpt5'" in r.stderr and "lamir" in r.stderr


def test_run_core_notebook_in_copy(tmp_path):
    "`iclr26nb run core` machinery on a copy holding one core notebook: it executes and writes the output."
    (tmp_path/"nbs"/"00_core").mkdir(parents=True); shutil.copy(ROOT/"settings.ini", tmp_path)
    shutil.copy(ROOT/"nbs"/"00_core"/"00a_runtime.ipynb", tmp_path/"nbs"/"00_core")
    recs = run_series("core", "smoke", "cpu", out=tmp_path/"runs", root=tmp_path)
    assert [r["ok"] for r in recs] == [True], recs
    assert (tmp_path/"runs"/"00_core"/"00a_runtime.ipynb").exists()
