"Sweeps: split = serial to the last digit, on local threads, a 2-worker Dask LocalCluster (with a worker killed mid-run) and submitit's local executor; resume and retries; publishing a split run."
import json, os, shutil, signal, threading, time
from pathlib import Path
import nbformat
import pandas as pd
import pytest
from conftest import ROOT, read
from iclr26nb.cli import execute, sweep_series
from iclr26nb.core.sweep import Executor, claims_from_results, merge_sweep, plan_tasks, run_sweep

SETUP = '''import os, time, numpy as np, pandas as pd
from iclr26nb.core.params import resolve
from iclr26nb.core.verdict import Claim, save_results, verdict_table'''
PARAMS = '# parameters\nMODE = "smoke"\nDEVICE = "auto"\nSEED = 0\nSEEDS = None\nOUT = None\nSLEEP = 0.0\nFLAKY = ""'
RUN = '''cfg = resolve(MODE, slug="00_core", seed=SEED, device=DEVICE, out=OUT, seeds=SEEDS, smoke=dict(seeds=[0, 1]), full=dict(seeds=[0, 1, 2, 3]))
if FLAKY and not os.path.exists(FLAKY): open(FLAKY, "w").close(); raise RuntimeError("flaky task fails once")
rows = []
for s in cfg.seeds:
    time.sleep(SLEEP); x = np.random.default_rng(s).standard_normal(1000)
    rows += [dict(method="m", seed=s, metric="mean", value=float(x.mean())), dict(method="b", seed=s, metric="mean", value=float(x.mean()) - 1.0)]
df = pd.DataFrame(rows)
CLAIMS = [Claim("E1", "m beats b by 1", "demo", "mean", "m", baseline="b", margin=0.5)]
verdict_table(CLAIMS, df, mode=cfg.mode)'''
SAVE = "save_results(cfg, df, CLAIMS);"


def _repo(tmp: Path) -> Path:
    (tmp/"nbs"/"00_core").mkdir(parents=True); shutil.copy(ROOT/"settings.ini", tmp)
    cells = [nbformat.v4.new_markdown_cell("# demo\n> a tiny experiment"), nbformat.v4.new_code_cell(SETUP),
             nbformat.v4.new_code_cell(PARAMS), nbformat.v4.new_code_cell(RUN), nbformat.v4.new_code_cell(SAVE)]
    cells[2].metadata["tags"] = ["parameters"]
    book = nbformat.v4.new_notebook(cells=cells, metadata=dict(kernelspec=dict(name="python3", display_name="Python 3", language="python")))
    nbformat.write(book, tmp/"nbs"/"00_core"/"00z_demo.ipynb")
    return tmp


def _serial(root: Path, seeds, tmp: Path) -> pd.DataFrame:
    nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    execute(nb, tmp/"serial.ipynb", dict(MODE="full", DEVICE="cpu", SEEDS=seeds, OUT=str(tmp/"serial")))
    return pd.DataFrame(json.loads((tmp/"serial"/"full.json").read_text())["table"])


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    k = ["method", "seed", "metric"]
    a, b = a.sort_values(k).reset_index(drop=True), b.sort_values(k).reset_index(drop=True)
    return a[k + ["value"]].equals(b[k + ["value"]])


def test_split_equals_serial_local(tmp_path):
    root = _repo(tmp_path/"repo"); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    tasks = plan_tasks(nb, tmp_path/"sw"/"tasks", "full", "cpu", chunk=2)             # the mode's seeds [0..3], 2 per task
    assert [t.seeds for t in tasks] == [[0, 1], [2, 3]]
    with Executor("local", workers=2) as ex: r = run_sweep(tasks, ex, tmp_path/"sw")
    assert not r["failed"] and len(r["done"]) == 2
    m = merge_sweep(tasks)
    assert _same(m["table"], _serial(root, [0, 1, 2, 3], tmp_path)), "split and serial runs differ"
    assert [j["status"] for j in m["verdicts"]] == ["holds"] and m["verdicts"][0]["n"] == 4
    log = [json.loads(l) for l in (tmp_path/"sw"/"log.jsonl").read_text().splitlines()]
    assert {l["id"] for l in log if l["event"] == "done"} == {"s0-1", "s2-3"} and all("seconds" in l for l in log)


def test_resume_and_retry(tmp_path):
    root = _repo(tmp_path/"repo"); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    flag = tmp_path/"flaky"
    tasks = plan_tasks(nb, tmp_path/"sw"/"tasks", "full", "cpu", seeds=[0, 1], grid=None)
    tasks[1].params["FLAKY"] = str(flag)                                                   # fails on its first attempt
    with Executor("local", workers=2) as ex: r = run_sweep(tasks, ex, tmp_path/"sw", retries=1)
    assert not r["failed"] and len(r["done"]) == 2 and flag.exists()
    events = [json.loads(l)["event"] for l in (tmp_path/"sw"/"log.jsonl").read_text().splitlines()]
    assert events.count("failed") == 1 and events.count("done") == 2
    with Executor("local", workers=1) as ex: again = run_sweep(tasks, ex, tmp_path/"sw")
    assert again["done"] == [] and sorted(again["skipped"]) == ["s0", "s1"]               # resume runs nothing
    # without retries the failure is recorded, nothing half-written is merged, and a rerun completes it
    flag.unlink(); fresh = plan_tasks(nb, tmp_path/"sw2"/"tasks", "full", "cpu", seeds=[0, 1]); fresh[1].params["FLAKY"] = str(flag)
    with Executor("local", workers=1) as ex: r0 = run_sweep(fresh, ex, tmp_path/"sw2", retries=0)
    assert list(r0["failed"]) == ["s1"] and merge_sweep(fresh)["missing"] == ["s1"]
    assert not [p for p in (tmp_path/"sw2"/"tasks").iterdir() if ".partial-" in p.name]
    with Executor("local", workers=1) as ex: r1 = run_sweep(fresh, ex, tmp_path/"sw2", retries=0)
    assert [d["id"] for d in r1["done"]] == ["s1"] and merge_sweep(fresh)["verdicts"] is not None


def test_dask_local_cluster_survives_a_killed_worker(tmp_path):
    pytest.importorskip("distributed")
    root = _repo(tmp_path/"repo"); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    tasks = plan_tasks(nb, tmp_path/"sw"/"tasks", "full", "cpu", seeds=[0, 1, 2, 3])
    for t in tasks: t.params["SLEEP"] = 2.0
    with Executor("dask", workers=2) as ex:
        pids = ex.client.run(os.getpid)
        def kill():                                   # kill one worker process while tasks are running
            time.sleep(6); os.kill(next(iter(pids.values())), signal.SIGKILL)
        threading.Thread(target=kill, daemon=True).start()
        r = run_sweep(tasks, ex, tmp_path/"sw", retries=2)
    assert not r["failed"] and len(r["done"]) == 4, r
    assert _same(merge_sweep(tasks)["table"], _serial(root, [0, 1, 2, 3], tmp_path))


def test_submitit_local_executor(tmp_path):
    pytest.importorskip("submitit")
    root = _repo(tmp_path/"repo"); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    tasks = plan_tasks(nb, tmp_path/"sw"/"tasks", "full", "cpu", seeds=[0, 1])
    with Executor("slurm", folder=tmp_path/"sw", cluster="local", resources=dict(cpus=1, mem_gb=2, time_min=5)) as ex:
        r = run_sweep(tasks, ex, tmp_path/"sw")
    assert not r["failed"] and len(r["done"]) == 2
    assert _same(merge_sweep(tasks)["table"], _serial(root, [0, 1], tmp_path))


def test_grid_and_claims_round_trip(tmp_path):
    root = _repo(tmp_path/"repo"); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    tasks = plan_tasks(nb, tmp_path/"sw"/"tasks", "full", "cpu", seeds=[0], grid=dict(SLEEP=[0.0, 0.01]))
    with Executor("local", workers=2) as ex: run_sweep(tasks, ex, tmp_path/"sw")
    m = merge_sweep(tasks)
    assert m["verdicts"] is None and set(m["summary"].SLEEP) == {0.0, 0.01}
    blob = json.loads((Path(tasks[0].out)/"results"/"full.json").read_text())
    assert claims_from_results(blob)[0].margin == 0.5 and claims_from_results(blob)[0].rule == "all"


def test_publish_a_split_run(tmp_path):
    root = _repo(tmp_path/"repo"); nb = root/"nbs"/"00_core"/"00z_demo.ipynb"
    [rec] = sweep_series("core", "full", "cpu", "local", 2, seeds=[0, 1, 2], inplace=True, root=root)
    assert not rec["failed"]
    res = json.loads((root/"results"/"00_core"/"full.json").read_text())
    assert res["claims"][0]["n"] == 3 and res["extra"]["sweep"]["tasks"] == ["s0", "s1", "s2"]
    book = read(nb); notes = [c for c in book.cells if "published-run" in c.metadata.get("tags", [])]
    assert len(notes) == 1 and "split into 3 tasks" in notes[0].source
    shown = [o for c in book.cells if "verdict_table(" in c.source for o in c.outputs]
    assert "(n=3)" in shown[0]["data"]["text/plain"]
