// iclr26nb site: client-side search over page titles and headings (index in search_index.js), the scoreboard
// filter, and the '/' shortcut. Plain DOM, no library, nothing from a network.
(function () {
  "use strict";
  var root = document.body.getAttribute("data-root") || "";
  var index = window.ICLR26NB_SEARCH || [];
  var box = document.getElementById("search"), list = document.getElementById("search-results");

  function match(text, terms) {
    var t = text.toLowerCase();
    for (var i = 0; i < terms.length; i++) if (t.indexOf(terms[i]) < 0) return false;
    return true;
  }
  function search(q) {
    var terms = q.toLowerCase().split(/\s+/).filter(Boolean), hits = [];
    if (!terms.length) return hits;
    index.forEach(function (p) {
      if (match(p.t + " " + p.s + " " + (p.d || ""), terms)) hits.push({score: 3, title: p.t, sub: p.s, url: p.u});
      p.h.forEach(function (h) {
        if (match(h[0], terms)) hits.push({score: 2, title: h[0], sub: p.t, url: p.u + "#" + h[1]});
        else if (match(h[0] + " " + p.t, terms)) hits.push({score: 1, title: h[0], sub: p.t, url: p.u + "#" + h[1]});
      });
    });
    hits.sort(function (a, b) { return b.score - a.score; });
    return hits.slice(0, 25);
  }
  function show(q) {
    list.innerHTML = "";
    if (!q.trim()) { list.hidden = true; return; }
    var hits = search(q);
    if (!hits.length) {
      var li = document.createElement("li"); li.className = "none"; li.textContent = "no page title or heading matches";
      list.appendChild(li);
    }
    hits.forEach(function (h) {
      var li = document.createElement("li"), a = document.createElement("a"), s = document.createElement("span");
      a.href = root + h.url; a.textContent = h.title; s.className = "sub"; s.textContent = h.sub;
      a.appendChild(s); li.appendChild(a); list.appendChild(li);
    });
    list.hidden = false;
  }
  if (box && list) {
    box.addEventListener("input", function () { show(box.value); });
    box.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { var a = list.querySelector("a"); if (a) window.location.href = a.href; }
      if (e.key === "Escape") { box.value = ""; show(""); box.blur(); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "/" && document.activeElement !== box) { e.preventDefault(); box.focus(); }
    });
    document.addEventListener("click", function (e) { if (!e.target.closest(".search")) list.hidden = true; });
  }

  // scoreboard: filter rows by series and verdict; ?series=NN_slug&verdict=holds preselects
  var board = document.getElementById("claims-board");
  if (board) {
    var fs = document.getElementById("filter-series"), fv = document.getElementById("filter-verdict");
    var count = document.getElementById("scoreboard-count");
    var rows = Array.prototype.slice.call(board.querySelectorAll("tbody tr"));
    var apply = function () {
      var n = 0;
      rows.forEach(function (r) {
        var ok = (!fs.value || r.getAttribute("data-series") === fs.value) && (!fv.value || r.getAttribute("data-verdict") === fv.value);
        r.hidden = !ok; if (ok) n++;
      });
      count.textContent = n + (n === 1 ? " claim" : " claims");
    };
    var params = new URLSearchParams(window.location.search);
    if (params.get("series")) fs.value = params.get("series");
    if (params.get("verdict")) fv.value = params.get("verdict");
    fs.addEventListener("change", apply); fv.addEventListener("change", apply); apply();
  }
})();
