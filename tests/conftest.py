"Shared fixtures of the iclr26nb test suite: notebook discovery and the one-thread kernel environment."
import os
from pathlib import Path
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT/"nbs"

# every kernel papermill starts inherits this: one thread per kernel (2 kernels share 2 cores in CI), no GUI
for k, v in dict(THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                 MPLBACKEND="Agg", ICLR26NB_PROGRESS="0", PYTHONHASHSEED="0").items():
    os.environ.setdefault(k, v)


def notebooks():
    "All notebooks under nbs/ in run order: 00_core first, then each series' a, b, c... (honours `.notest`)."
    out = []
    for nb in sorted(NBS.rglob("*.ipynb")):
        rel = nb.relative_to(NBS)
        if any(p.startswith((".", "_")) for p in rel.parts) or ".ipynb_checkpoints" in rel.parts: continue
        if (nb.parent/".notest").exists(): continue
        out.append(nb)
    return out


def series_dirs():
    return sorted(d for d in NBS.iterdir() if d.is_dir() and d.name[:2].isdigit() and d.name != "00_core")


def is_experiment(nb: Path) -> bool:
    "An experiment notebook is one that exports nothing (no default_exp), other than the landing page."
    return nb.name != "index.ipynb" and "#| default_exp" not in nb.read_text(encoding="utf-8")


def read(nb: Path):
    return nbformat.read(nb, as_version=4)


def param_cells(nb):
    return [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
