"Every notebook runs top to bottom under papermill in smoke mode, within its time budget."
import re, time
from pathlib import Path
import papermill as pm
from iclr26nb.cli import execute
import pytest
from conftest import NBS, notebooks, param_cells, read

BUDGET_S = 90          # hard limit per notebook on 2 CI cores (the brief's smoke budget)
_strip = lambda s: re.sub(r"\x1b\[[0-9;]*m", "", s)   # ANSI colours of IPython tracebacks


@pytest.mark.parametrize("nb", notebooks(), ids=lambda p: str(p.relative_to(NBS)))
def test_notebook_runs(nb: Path, tmp_path):
    params = dict(MODE="smoke", OUT=str(tmp_path/"results")) if param_cells(read(nb)) else {}
    t0 = time.perf_counter()
    try:
        execute(nb, tmp_path/nb.name, params, timeout=BUDGET_S + 60)
    except pm.PapermillExecutionError as e:
        pytest.fail(_strip(f"{nb.relative_to(NBS)}: cell {e.cell_index} (exec {e.exec_count}) raised {e.ename}: {e.evalue}\n"
                    f"--- cell source ---\n{e.source}\n--- traceback ---\n" + "\n".join(e.traceback)), pytrace=False)
    wall = time.perf_counter() - t0
    print(f"{nb.relative_to(NBS)}: {wall:.1f}s")
    assert wall <= BUDGET_S, f"{nb.relative_to(NBS)} took {wall:.1f}s in smoke mode; the budget is {BUDGET_S}s"
