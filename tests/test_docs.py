"The Quarto-free docs build: every series has its pages, links resolve, pages show a figure and the verdict."
import json, re
from pathlib import Path
import pytest
from conftest import ROOT, NBS, notebooks, series_dirs, is_experiment, read
from iclr26nb.core.docs import build_site, page_name


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build_site(ROOT, out=tmp_path_factory.mktemp("site"), quarto=False)


def test_every_page_built_and_linked(site):
    text = site.read_text()
    for nb in notebooks():
        if nb.name == "index.ipynb": continue
        rel = f"{nb.parent.name}/{page_name(nb)}.html"
        assert (site.parent/rel).exists(), f"page {rel} was not built"
        assert f'href="{rel}"' in text, f"index.html does not link {rel}"
    dead = [h for h in re.findall(r'href="([^"#:]+)"', text) if not (site.parent/h).exists()]
    assert not dead, f"dead links on index.html: {dead}"


@pytest.mark.parametrize("nb", [n for n in notebooks() if is_experiment(n) and n.parent.name != "00_core"],
                         ids=lambda p: str(p.relative_to(NBS)))
def test_experiment_page_has_figure_and_verdict(nb):
    outs = [o for c in read(nb).cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outs), f"{nb.name}: no figure in the committed outputs"
    res = ROOT/"results"/nb.parent.name/"full.json"
    assert res.exists(), f"{res} missing"
    shown = "\n".join(str(o.get("data", {}).get("text/html", "")) + str(o.get("data", {}).get("text/plain", ""))
                      for o in outs)
    for c in json.loads(res.read_text())["claims"]:
        assert c["id"] in shown and c["status"] in shown, f"{nb.name}: verdict row {c['id']} ({c['status']}) not shown"
