// pglab serve: a campaign's page comes first as its outline (the points and their verdicts,
// read without any run's per-second series); what the series give is fetched from the whole
// report, which the server reads meanwhile: the summary's latency, wait and WAL cells and the
// warnings at once, each point's body (its chart's numbers, telemetry, scripts) when the point
// is open and scrolled to, then drawn by points.js (window.pglabDraw).
(function () {
  "use strict";
  var body = document.body;

  function fail(what, e) {
    var said = body.dataset.errors ? body.dataset.errors.split(" | ") : [];
    said.push(what + ": " + e);
    body.dataset.errors = said.join(" | ");
  }

  function get(url, json) {
    return fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status + " from " + url); }
      return json ? r.json() : r.text();
    });
  }

  var sections = document.getElementById("lazy-sections");
  if (sections) {
    get(sections.dataset.src, true).then(function (p) {
      document.querySelectorAll("td[data-cell]").forEach(function (td) {
        var v = p.cells[td.dataset.cell];
        if (v !== undefined) { td.textContent = v; td.removeAttribute("data-cell"); }
      });
      sections.outerHTML = p.sections;
      body.dataset.partsLoaded = "1";
    }).catch(function (e) { fail("the summary's cells and the warnings", e); });
  }

  function load(el) {
    if (el.dataset.loading) { return; }
    el.dataset.loading = "1";
    if (seen) { seen.unobserve(el); }
    var n = el.closest("details").id.replace("point-", "");
    get(el.dataset.src, false).then(function (html) {
      el.outerHTML = html;
      body.dataset.pointsLoaded = String(Number(body.dataset.pointsLoaded || 0) + 1);
      if (document.getElementById("pchart-" + n)) { window.pglabDraw(n); }
    }).catch(function (e) { el.dataset.loading = ""; fail("point " + n, e); });
  }

  var seen = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      var d = e.target.closest("details");
      if (e.isIntersecting && d && d.open) { load(e.target); }
    });
  }, { rootMargin: "400px" }) : null;
  document.querySelectorAll("div.pbody[data-src]").forEach(function (el) {
    var d = el.closest("details");
    if (seen) { seen.observe(el); }
    d.addEventListener("toggle", function () {
      if (!d.open || !el.isConnected) { return; }
      if (seen) { seen.unobserve(el); seen.observe(el); } else { load(el); }
    });
  });

  // a link to a point (#point-N) opens it and loads it at once
  function fromHash() {
    var m = /^#point-(\d+)$/.exec(window.location.hash);
    var d = m && document.getElementById("point-" + m[1]);
    var el = d && d.querySelector("div.pbody[data-src]");
    if (el) { d.open = true; load(el); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
