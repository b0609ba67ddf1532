"The library is exactly what the notebooks export, and the notebooks are clean (fastai's clean -> export gate)."
import filecmp, shutil, subprocess
from pathlib import Path
import pytest
from conftest import ROOT, NBS, notebooks

def _copy(tmp: Path) -> Path:
    dst = tmp/"repo"; dst.mkdir()
    for f in ("settings.ini", "setup.py", "README.md", "_quarto.yml"): shutil.copy(ROOT/f, dst/f)
    shutil.copytree(ROOT/"nbs", dst/"nbs", symlinks=True, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT/"iclr26nb", dst/"iclr26nb", ignore=shutil.ignore_patterns("__pycache__"))
    return dst

def _pyfiles(root: Path):
    return sorted(p.relative_to(root) for p in root.rglob("*.py") if "__pycache__" not in p.parts)

def test_export_leaves_library_unchanged(tmp_path):
    dst = _copy(tmp_path)
    for p in (dst/"iclr26nb").rglob("*.py"):
        if p.name != "__init__.py": p.unlink()        # regenerate everything the notebooks export
    subprocess.run(["nbdev_export"], cwd=dst, check=True, capture_output=True)
    ours, theirs = _pyfiles(ROOT/"iclr26nb"), _pyfiles(dst/"iclr26nb")
    assert ours == theirs, f"modules differ: only in iclr26nb/: {set(ours)-set(theirs)}; only exported: {set(theirs)-set(ours)}"
    changed = [str(p) for p in ours if (ROOT/"iclr26nb"/p).read_text() != (dst/"iclr26nb"/p).read_text()]
    assert not changed, (f"iclr26nb/ differs from what nbdev_export writes: {changed}. Edit the notebooks, "
                         "never iclr26nb/ by hand, then run nbdev_export.")

def test_notebooks_are_clean(tmp_path):
    dst = _copy(tmp_path)
    subprocess.run(["nbdev_clean"], cwd=dst, check=True, capture_output=True)
    dirty = [str(nb.relative_to(NBS)) for nb in notebooks()
             if (dst/"nbs"/nb.relative_to(NBS)).read_bytes() != nb.read_bytes()]
    assert not dirty, f"run nbdev_clean: these notebooks are not clean: {dirty}"
