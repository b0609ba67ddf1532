"""The Quarto-free docs build: every series has its pages, links and anchors resolve, formulas are MathML, pages carry
navigation and titles, the scoreboard links every claim, and experiment pages show a figure and the verdict."""
import json, os, re
from pathlib import Path
import nbformat
import pytest
import yaml
from filelock import FileLock
from conftest import ROOT, NBS, notebooks, is_experiment, read
from iclr26nb.core.docs import DocsBuildError, build_site, check_site, page_name

BUILD_BUDGET_S = 180      # the whole site on one CI core; it takes ~15 s for 37 pages here


def built_site(tmp_path_factory) -> Path:
    "The site built once per test session (shared by the xdist workers through a file lock); returns its index.html."
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        out = tmp_path_factory.getbasetemp()/"site"
        if not (out/"build.json").exists(): build_site(ROOT, out=out, quarto=False)
        return out/"index.html"
    base = tmp_path_factory.getbasetemp().parent             # shared by the workers of this session only
    with FileLock(str(base/"site.lock")):
        if not (base/"site"/"build.json").exists(): build_site(ROOT, out=base/"site", quarto=False)
    return base/"site"/"index.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return built_site(tmp_path_factory)


def _pages(site):
    return sorted(p for p in site.parent.rglob("*.html"))


def test_every_page_built_and_linked(site):
    text = site.read_text()
    for nb in notebooks():
        if nb.name == "index.ipynb": continue
        rel = f"{nb.parent.name}/{page_name(nb)}.html"
        assert (site.parent/rel).exists(), f"page {rel} was not built"
        assert f'href="{rel}"' in text, f"index.html does not link {rel}"
    assert (site.parent/"scoreboard.html").exists() and 'href="scoreboard.html"' in text


def test_links_anchors_and_math_are_clean(site):
    "No dead link or anchor, no image that points nowhere, no network resource, no raw TeX on any page."
    problems = check_site(site.parent)
    assert not problems, f"{len(problems)} problem(s):\n  " + "\n  ".join(problems[:40])


def test_build_stats(site):
    stats = json.loads((site.parent/"build.json").read_text())
    pages = _pages(site)
    assert stats["pages"] == len(pages), (stats, len(pages))
    shown = sum(p.read_text().count("<math") for p in pages)
    assert shown >= stats["formulas"] > 0, f"{stats['formulas']} formulas converted but {shown} <math> elements on the pages"
    assert stats["seconds"] < BUILD_BUDGET_S, f"the docs build took {stats['seconds']} s (budget {BUILD_BUDGET_S} s)"


@pytest.mark.parametrize("nb", [n for n in notebooks()], ids=lambda p: str(p.relative_to(NBS)))
def test_page_frame(nb, site):
    "Title from the notebook's H1, no prompts, sidebar, breadcrumb, prev/next, contents, viewport, no CDN script."
    rel = "index.html" if nb.name == "index.ipynb" else f"{nb.parent.name}/{page_name(nb)}.html"
    page = (site.parent/rel).read_text()
    h1 = next(l[2:] for c in read(nb).cells if c.cell_type == "markdown" for l in c.source.splitlines() if l.startswith("# "))
    title = re.search(r"<title>(.*?)</title>", page).group(1)
    assert title.endswith(" · iclr26nb") and title != "Notebook" and title.split(" · ")[0].split()[0] in h1, (title, h1)
    assert not re.search(r'class="jp-(Input|Output)Prompt', page) and "In&nbsp;[" not in page, f"{rel}: prompts shown"
    for mark in ('class="sidebar"', 'class="breadcrumb"', 'class="pager"', 'name="viewport"', "_static/search_index.js"):
        assert mark in page, f"{rel}: no {mark}"
    assert not re.search(r'<script[^>]+src="(https?:)?//|<script[^>]*>[^<]*mathjax', page, re.I), f"{rel}: loads a script from a network"
    if rel != "index.html":
        assert 'rel="prev"' in page, f"{rel}: no previous-page link"
        assert nb.name == "index.ipynb" or "source notebook" in page and f'href="{nb.name}"' in page, f"{rel}: no source-notebook link"


def test_scoreboard_links_every_claim(site):
    board = (site.parent/"scoreboard.html").read_text()
    for f in sorted((ROOT/"results").glob("*/full.json")):
        if f.parent.name == "00_core" or not (NBS/f.parent.name).is_dir(): continue
        for c in json.loads(f.read_text()).get("claims", []):
            cid = re.sub(r"[^a-z0-9]+", "-", c["id"].lower())
            assert re.search(rf'<tr data-series="{f.parent.name}"[^>]*>\s*<td><a href="{f.parent.name}/[a-z0-9_]+\.html"', board), f.parent.name
            assert re.search(rf'href="{f.parent.name}/[a-z0-9_]+\.html#claim-{cid}"', board), \
                f"scoreboard: {f.parent.name} {c['id']} does not link the claim's verdict row (is the verdict table shown?)"
    assert 'id="filter-series"' in board and 'id="filter-verdict"' in board


def test_search_index_covers_every_page(site):
    idx = json.loads((site.parent/"search.json").read_text())
    assert sorted(e["u"] for e in idx) == sorted(p.relative_to(site.parent).as_posix() for p in _pages(site))
    assert sum(len(e["h"]) for e in idx) > len(idx), "headings are missing from the search index"
    js = (site.parent/"_static"/"search_index.js").read_text()
    assert js.startswith("window.ICLR26NB_SEARCH = ") and json.loads(js[len("window.ICLR26NB_SEARCH = "):].rstrip().rstrip(";")) == idx


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
        status = c.get("status") or c.get("verdict", "")
        assert c["id"] in shown and status in shown, f"{nb.name}: verdict row {c['id']} ({status}) not shown"


def test_bad_formula_is_a_build_error_naming_page_and_formula(tmp_path):
    (tmp_path/"nbs"/"19_lamir").mkdir(parents=True)
    md = nbformat.v4.new_markdown_cell
    nb = nbformat.v4.new_notebook(cells=[md("# A page\n> Sub.\n\nFine $x^2$, broken $\\frac{1}{$, unknown $\\foo{y}$.")])
    nbformat.write(nb, tmp_path/"nbs"/"19_lamir"/"19a_method.ipynb")
    with pytest.raises(DocsBuildError) as e: build_site(tmp_path, out=tmp_path/"_site", quarto=False)
    msg = str(e.value)
    assert "2 problem(s)" in msg and "nbs/19_lamir/19a_method.ipynb (19_lamir/method.html): formula $\\frac{1}{$" in msg
    assert "formula $\\foo{y}$: unsupported command `\\foo`" in msg


def test_static_check_catches_regressions(tmp_path):
    "check_site reports planted raw TeX, a dead link, a missing anchor, a missing image and a duplicate id."
    (tmp_path/"nbs"/"19_lamir").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A page\n> Sub.\n\n## Part\nFine $x^2$.")])
    nbformat.write(nb, tmp_path/"nbs"/"19_lamir"/"19a_method.ipynb")
    site = build_site(tmp_path, out=tmp_path/"_site", quarto=False).parent
    assert check_site(site) == []
    page = site/"19_lamir"/"method.html"
    page.write_text(page.read_text().replace("</main>", '<p>raw $y^2$</p><a href="nope.html">x</a><a href="#nowhere">y</a>'
                                                        '<img src="gone.png"><i id="part"></i></main>'))
    got = "\n".join(check_site(site))
    for what in ("raw TeX '$y^2$'", "dead link nope.html", "missing anchor #nowhere", "dead link gone.png", "duplicate id 'part'"):
        assert what in got, f"check_site missed {what!r}: {got}"


def test_quarto_config():
    "One _quarto.yml (nbs/_quarto.yml links to it), a generated sidebar, page navigation, offline math."
    link = NBS/"_quarto.yml"
    assert link.is_symlink() and os.readlink(link) == "../_quarto.yml", "nbs/_quarto.yml must be a symlink to ../_quarto.yml"
    q = yaml.safe_load((ROOT/"_quarto.yml").read_text())
    assert q["website"]["sidebar"]["contents"] == "auto", "the sidebar must be generated (contents: auto)"
    assert q["website"]["page-navigation"] is True
    assert q["format"]["html"]["html-math-method"] == "mathml", "Quarto's default MathJax loads from a CDN"
    assert (NBS/q["format"]["html"]["css"]).exists()
