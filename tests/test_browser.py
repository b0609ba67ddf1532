"""The built site in a real browser: headless Chromium (Debian's `chromium`) with networking disabled, driven over
the DevTools protocol on a pipe (no port, no websocket library). For every page: no console error, no raw TeX in the
visible text, every <img> loaded, every internal link and anchor resolves, the sidebar lists every built series.
Screenshots of the index, one method and one experiments page go to runs/docs/. Skipped only when Chromium is absent."""
import base64, fcntl, json, os, re, shutil, subprocess, threading, time
from pathlib import Path
from urllib.parse import unquote, urlparse
import pytest
from conftest import ROOT, NBS
from test_docs import built_site
from iclr26nb.core.docs import RAW_TEX
from iclr26nb.core.registry import CORE, get_paper

EXE = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = pytest.mark.skipif(EXE is None, reason="chromium is not installed (Debian: apt-get install -y chromium; "
                                                      ".ci/run installs it, so CI runs this test)")
SHOTS = ROOT/"runs"/"docs"
FLAGS = ["--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
         "--disable-component-update", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
         # no network: every proxied request goes to a closed port and no host name resolves
         "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,900"]


class Chromium:
    "Headless Chromium over the DevTools protocol on fds 3/4 (--remote-debugging-pipe): NUL-separated JSON messages."
    def __init__(self, profile: Path):
        r_in, w_in = self._pipe_hi()      # we write commands, Chromium reads fd 3
        r_out, w_out = self._pipe_hi()    # Chromium writes replies and events on fd 4
        redir = f'exec "$0" "$@" 3<&{r_in} 4>&{w_out}'                  # bash: dash redirects only fds 0-9
        self.proc = subprocess.Popen([shutil.which("bash") or "/bin/bash", "-c", redir, EXE, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     pass_fds=(r_in, w_out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(r_in); os.close(w_out)
        self.w, self.r, self.n, self.lock = os.fdopen(w_in, "wb", buffering=0), os.fdopen(r_out, "rb"), 0, threading.Condition()
        self.replies, self.events = {}, []
        threading.Thread(target=self._read, daemon=True).start()
        tid = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.sid = self.send("Target.attachToTarget", targetId=tid, flatten=True)["sessionId"]
        for dom in ("Page", "Runtime", "Log"): self.send(f"{dom}.enable", session=True)

    @staticmethod
    def _pipe_hi():
        "(read end, write end) of a pipe, both above fd 10, so that the redirections to fds 3 and 4 cannot clobber them."
        r, w = os.pipe()
        hi = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (r, w)]
        os.close(r); os.close(w)
        return hi

    def _read(self):
        buf = b""
        while chunk := self.r.read1(1 << 16):
            buf += chunk
            *msgs, buf = buf.split(b"\0")
            with self.lock:
                for m in msgs:
                    m = json.loads(m)
                    if "id" in m: self.replies[m["id"]] = m
                    else: self.events.append(m)
                self.lock.notify_all()

    def send(self, method, session=False, timeout=60, **params):
        with self.lock: self.n += 1; i = self.n
        msg = dict(id=i, method=method, params=params, **({"sessionId": self.sid} if session else {}))
        self.w.write(json.dumps(msg).encode() + b"\0")
        with self.lock:
            if not self.lock.wait_for(lambda: i in self.replies, timeout):
                raise TimeoutError(f"Chromium did not answer {method} within {timeout} s")
            r = self.replies.pop(i)
        if "error" in r: raise RuntimeError(f"{method}: {r['error']}")
        return r["result"]

    def open(self, url: str, timeout=60) -> list:
        "Navigate and wait for the load event; returns the console errors, exceptions and failed loads it logged."
        with self.lock: self.events.clear()
        self.send("Page.navigate", session=True, url=url)
        with self.lock:
            if not self.lock.wait_for(lambda: any(e["method"] == "Page.loadEventFired" for e in self.events), timeout):
                raise TimeoutError(f"{url} did not load within {timeout} s")
        self.eval("new Promise(r => setTimeout(r, 30))")           # let late console messages arrive
        with self.lock: ev = list(self.events)
        out = []
        for e in ev:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown": out.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"].get("text"))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"{p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
        return out

    def eval(self, js: str):
        r = self.send("Runtime.evaluate", session=True, expression=js, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r: raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path: Path, width=1280, height=900, mobile=False):
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=2 if mobile else 1, mobile=mobile)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self):
        if self.proc.poll() is None:
            try: self.send("Browser.close", timeout=10)
            except (BrokenPipeError, TimeoutError):   # it exited or hung while closing: reaped or killed just below
                self.proc.kill()
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()


# What each page reports: raw TeX in text outside code/pre/math, images that did not load, links, ids, the sidebar.
PROBE = """(async () => {
  await Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  const skip = 'pre,code,math,script,style,textarea,template,title', w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let text = '';
  while (w.nextNode()) { const p = w.currentNode.parentElement; if (p && !p.closest(skip)) text += w.currentNode.data; }
  const side = [...document.querySelectorAll('nav.sidebar details.nav-section')];
  return {
    title: document.title,
    tex: text.match(new RegExp(%s, 'g')) || [],
    badImages: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 120)),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id).concat([...document.querySelectorAll('a[name]')].map(a => a.name)),
    dupIds: [...new Set([...document.querySelectorAll('[id]')].map(e => e.id).filter((x, i, a) => a.indexOf(x) !== i))],
    sidebar: side.map(d => ({folder: d.dataset.series, label: d.querySelector('summary').textContent, links: [...d.querySelectorAll('a')].map(a => a.href)})),
    unrenderedMath: [...document.querySelectorAll('math')].filter(m => m.checkVisibility() && m.getBoundingClientRect().width === 0).length,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
  };
})()""" % json.dumps(RAW_TEX)


def expected_series() -> dict:
    "{folder: sidebar title} for every series folder under nbs/ that holds notebooks."
    out = {}
    for d in sorted(NBS.iterdir()):
        if d.is_dir() and re.fullmatch(r"\d\d_\w+", d.name) and any(not f.name.startswith(("_", ".")) for f in d.glob("*.ipynb")):
            try: p = get_paper(d.name)
            except ValueError: p = None
            out[d.name] = "Shared core" if p is CORE else p.title if p else d.name
    return out


def audit(b: Chromium, site: Path, pages: list, series: dict | None) -> tuple[dict, list]:
    "Visit `pages` (paths relative to the site), return ({page: probe}, problems)."
    seen, problems = {}, []
    for rel in pages:
        errs = b.open((site/rel).as_uri())
        r = seen[rel] = b.eval(PROBE)
        problems += [f"{rel}: console error: {e}" for e in errs]
        problems += [f"{rel}: raw TeX in visible text: {t!r}" for t in r["tex"][:5]]
        problems += [f"{rel}: image not loaded: {s}" for s in r["badImages"]]
        problems += [f"{rel}: duplicate id {i!r}" for i in r["dupIds"]]
        problems += [f"{rel}: {r['unrenderedMath']} MathML formulas rendered with zero width"] * bool(r["unrenderedMath"])
        if r["title"] in ("", "Notebook") or not r["title"].endswith("iclr26nb"): problems.append(f"{rel}: page title {r['title']!r}")
        if series is not None:
            got = {s["folder"]: s for s in r["sidebar"]}
            if set(got) != set(series): problems.append(f"{rel}: sidebar lists {sorted(got)}, built series are {sorted(series)}")
            for f, title in series.items():
                if f in got and title not in got[f]["label"]: problems.append(f"{rel}: sidebar section {f} reads {got[f]['label']!r}, not the paper title")
                want = {(site/p.relative_to(site)).as_uri() for p in (site/f).glob("*.html")}
                if f in got and not want <= set(got[f]["links"]): problems.append(f"{rel}: sidebar section {f} misses pages {sorted(want - set(got[f]['links']))}")
    root = site.resolve()
    for rel, r in seen.items():
        for href in r["links"]:
            u = urlparse(href)
            if u.scheme != "file": continue
            target = Path(unquote(u.path))
            if root not in target.parents and target != root: problems.append(f"{rel}: link leaves the site: {href}"); continue
            if not target.exists(): problems.append(f"{rel}: dead link {href}"); continue
            if u.fragment and target.suffix == ".html":
                t = target.relative_to(root).as_posix()
                ids = seen[t]["ids"] if t in seen else re.findall(r'\bid="([^"]+)"', target.read_text(encoding="utf-8"))
                if unquote(u.fragment) not in ids: problems.append(f"{rel}: missing anchor {href}")
    return seen, problems


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return built_site(tmp_path_factory).parent


def test_every_page_in_chromium(browser, site):
    t0 = time.perf_counter()
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    series = expected_series()
    assert len(pages) >= 2 + sum(len(list((NBS/f).glob("*.ipynb"))) for f in series), f"too few pages built: {pages}"
    seen, problems = audit(browser, site, pages, series)
    # screenshots for a person to look at (taken before judging, so that a failure can be looked at too): the index,
    # one method and one experiments page, and the index and the method page on a phone
    method = "19_lamir/method.html" if "19_lamir/method.html" in seen else next(p for p in pages if p.endswith("/method.html"))
    expts = method.replace("method.html", "experiments.html")
    expts = expts if expts in seen else next(p for p in pages if p.endswith("/experiments.html"))
    for name, rel in (("index", "index.html"), ("method", method), ("experiments", expts)):
        browser.open((site/rel).as_uri()); browser.screenshot(SHOTS/f"{name}.png")
    for name, rel in (("index-mobile", "index.html"), ("method-mobile", method)):
        browser.send("Emulation.setDeviceMetricsOverride", session=True, width=390, height=844, deviceScaleFactor=2, mobile=True)
        browser.open((site/rel).as_uri())
        over = browser.eval("document.documentElement.scrollWidth - window.innerWidth")
        if over > 1: problems.append(f"{rel} on a 390 px wide phone is {over} px wider than the screen")
        browser.screenshot(SHOTS/f"{name}.png", 390, 844, mobile=True)
    browser.send("Emulation.clearDeviceMetricsOverride", session=True)
    assert not problems, f"{len(problems)} problem(s) in the browser:\n  " + "\n  ".join(problems[:40])
    assert all((SHOTS/f"{n}.png").stat().st_size > 10_000 for n in ("index", "method", "experiments"))
    print(f"chromium: {len(pages)} pages checked in {time.perf_counter() - t0:.1f} s; screenshots in {SHOTS.relative_to(ROOT)}/")


def test_search_and_scoreboard_filter(browser, site):
    "Typing in the search box lists matching pages and headings; the scoreboard filters by series and by verdict."
    browser.open((site/"index.html").as_uri())
    hits = browser.eval("""(() => { const b = document.getElementById('search'); b.value = 'verdict';
        b.dispatchEvent(new Event('input')); return [...document.querySelectorAll('#search-results a')].map(a => a.href); })()""")
    assert hits and all(Path(unquote(urlparse(h).path)).exists() for h in hits), f"search for 'verdict' found {hits}"
    browser.open((site/"scoreboard.html").as_uri())
    res = browser.eval("""(() => { const rows = [...document.querySelectorAll('#claims-board tbody tr')];
        const s = document.getElementById('filter-series'), v = document.getElementById('filter-verdict');
        const shown = () => rows.filter(r => !r.hidden).length, out = {all: rows.length, series: [], verdicts: []};
        for (const o of [...s.options].slice(1)) { s.value = o.value; s.dispatchEvent(new Event('change'));
          out.series.push([o.value, shown(), rows.filter(r => r.dataset.series === o.value).length]); }
        s.value = ''; for (const o of [...v.options].slice(1)) { v.value = o.value; v.dispatchEvent(new Event('change'));
          out.verdicts.push([o.value, shown(), rows.filter(r => r.dataset.verdict === o.value).length]); }
        return out; })()""")
    claims = sum(len(json.loads(f.read_text()).get("claims", [])) for f in (ROOT/"results").glob("*/full.json")
                 if f.parent.name != CORE.folder and (NBS/f.parent.name).is_dir())
    assert res["all"] == claims, f"scoreboard shows {res['all']} claims, results/ holds {claims}"
    assert res["series"] and all(a == b > 0 for _, a, b in res["series"]), res["series"]
    assert res["verdicts"] and all(a == b > 0 for _, a, b in res["verdicts"]), res["verdicts"]


def test_checks_catch_regressions(browser, site, tmp_path):
    """Plant raw TeX, a dead link, a missing anchor, a broken image, a duplicate id, a console error and a lost sidebar
    section into a copy of the site: the browser check reports every one."""
    bad = tmp_path/"site"; shutil.copytree(site, bad, copy_function=os.link)      # hard links: instant
    page = next(p for p in sorted(bad.glob("*/method.html")))
    rel = page.relative_to(bad).as_posix()
    plant = ('<p id="planted">planted $x^2$ here</p><a href="nope.html">dead</a><a href="#no-such-anchor">anchor</a>'
             '<img src="missing.png"><span id="planted"></span><script>console.error("planted error")</script>')
    text = page.read_text(encoding="utf-8").replace("</main>", plant + "</main>")
    text = re.sub(r'<details class="nav-section" data-series="[^"]+".*?</details>', "", text, count=1, flags=re.S)
    page.unlink(); page.write_text(text, encoding="utf-8")                     # a new file: the original stays intact
    _, problems = audit(browser, bad, [rel], expected_series())
    joined = "\n".join(problems)
    for what in ("raw TeX in visible text: '$x^2$'", "dead link", "nope.html", "missing anchor", "#no-such-anchor",
                 "image not loaded", "console error: console.error: planted error", "sidebar lists", "duplicate id 'planted'"):
        assert what in joined, f"the browser check missed {what!r}; it reported:\n{joined}"
