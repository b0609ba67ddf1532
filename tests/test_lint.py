"Published pages read clean, and library code keeps to the core's one way of seeding, timing and training."
import json, re
from pathlib import Path
import pytest
from conftest import ROOT, NBS, notebooks, read

ids = lambda p: str(p.relative_to(NBS))
BAR = re.compile(r"\d+%\|[^\n]*\||\d+(\.\d+)?(it/s|s/it)\]")                 # a saved tqdm bar
BANNERS = re.compile(r"Running HiGHS|HiGHS run time|Coefficient ranges:|Presolving model|CVXPY\s+v\d|"
                     r"Academic license|Welcome to IPOPT|={10,}\s*\n\s*CVXPY")
PATHS = re.compile(r"(?<![\w.])(/work/|/home/\w|/tmp/|/root/|/Users/\w|/private/var/|[A-Z]:\\\\Users)")
PROCESS = re.compile(r"\b(the|this) issue\b|\bissue #?\d+|\bthis session\b|\bthe lead\b|\bthe spec\b|\bthe brief\b|"
                     r"\bsub-?agents?\b|\bTODO\b|\bFIXME\b|\bXXX\b|\bthe CEO\b", re.I)


def _outputs(nb):
    "Every text a committed notebook shows in its outputs (streams, plain text, HTML, errors)."
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            if "text" in o: yield o.get("name", "stream"), o["text"]
            for k, v in o.get("data", {}).items():
                if k.startswith("text/"): yield k, v if isinstance(v, str) else "".join(v)
            if o.get("output_type") == "error": yield "error", "\n".join(o.get("traceback", []))


@pytest.mark.parametrize("nb", notebooks(), ids=ids)
def test_outputs_have_no_run_noise(nb):
    bad = []
    for kind, text in _outputs(read(nb)):
        for what, rx in (("a saved progress bar", BAR), ("a solver banner", BANNERS), ("a machine path", PATHS)):
            m = rx.search(text)
            if m: bad.append(f"{what} in a {kind} output: ...{text[max(0, m.start() - 40):m.end() + 40]!r}...")
        if kind == "error": bad.append("an error output")
    assert not bad, f"{ids(nb)}: " + "; ".join(bad[:5])


@pytest.mark.parametrize("nb", notebooks(), ids=ids)
def test_prose_is_about_the_paper(nb):
    "Markdown speaks to a reader of the paper; no words about how the work was organised."
    hits = [m.group(0) for c in read(nb).cells if c.cell_type == "markdown" for m in PROCESS.finditer(c.source)]
    assert not hits, f"{ids(nb)}: process words in prose: {sorted(set(hits))}"


RULES = {r"torch\.manual_seed\(": "use iclr26nb.core.runtime.seeded(seed) or an explicit torch.Generator",
         r"time\.perf_counter\(": "use iclr26nb.core.runtime.Timer(sync=device)",
         r"\.backward\(": "use iclr26nb.core.train.sgd_step, or say why not"}
WHY = re.compile(r"#\s*\S+(\s+\S+){2,}")                                       # a trailing comment of 3+ words


def _library_files():
    return sorted(p for p in (ROOT/"iclr26nb").rglob("*.py") if "core" not in p.relative_to(ROOT/"iclr26nb").parts[:1]
                  and p.name != "_modidx.py")


@pytest.mark.parametrize("f", _library_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_library_uses_the_core_helpers(f):
    bad = []
    for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
        code, _, comment = line.partition("#")
        for rx, fix in RULES.items():
            if re.search(rx, code) and not WHY.search("#" + comment if comment else ""):
                bad.append(f"{f.name}:{i}: {line.strip()}  ({fix}; or add a comment saying why)")
    assert not bad, "\n".join(bad)


def test_lint_patterns_can_fail():
    "Each pattern above catches the noise it is meant to catch."
    assert BAR.search("train:  45%|████▌     | 45/100 [00:01<00:01, 40.1it/s]")
    assert BANNERS.search("Running HiGHS 1.7.0 (git hash: 0)") and PATHS.search("saved to /work/main/results/x.png")
    assert PROCESS.search("As the issue asks, we") and not PROCESS.search("the issuer of a bond")
    assert not PATHS.search("results/01_relu_dag/full.json") and WHY.search("# why: scoped by fork_rng")
