// pglab report: each point's six panels drawn by plotly.js from the numbers in the page, when
// the point is open and scrolled to (a page of 200 points draws only what is looked at).
// plotly.js is inlined as text and run on the first chart. Zoom with the mouse, values on hover.
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message || e)); }, true);
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];
  var drawn = 0;

  function plotly() {
    if (!window.Plotly) {
      var lib = document.createElement("script");
      lib.text = document.getElementById("plotly-js").textContent;
      document.head.appendChild(lib);
    }
    return window.Plotly;
  }

  // the grid: [x axis, y axis, x domain, y domain, title] of each panel
  var COLS = [[0, 0.33], [0.51, 0.84]];  // each panel's legend to its right
  var ROWS = [[0.72, 1], [0.37, 0.65], [0.02, 0.30]];
  var PANELS = [
    ["x", "y", COLS[0], ROWS[0]], ["x2", "y2", COLS[1], ROWS[0]],
    ["x3", "y3", COLS[0], ROWS[1]], ["x4", "y4", COLS[1], ROWS[1]],
    ["x5", "y5", COLS[0], ROWS[2]], ["x6", "y6", COLS[1], ROWS[2]]
  ];
  var TITLES = ["TPS per second (checkpoints shaded)", "Latency percentiles per second, ms",
                "Wait events of the active sessions (sessions)", "Buffers written per second; WAL MB/s (dashed)",
                "CPU % (stacked), pgbench's share (dashed)", "Disk MB/s; dirty memory MB (dashed)"];
  var PROGRESS_TITLES = ["Operations' progress phases, % done (pg_stat_progress_*)",
                         "Rate of each progress phase so far, MB/s"];
  // kit = "tpch": its queries in the TPS panel's place; a run of queries has no latency log
  var QUERIES_TITLE = "Each query: its seconds, drawn where it ran (timeouts hatched)";

  function line(xy, panel, name, color, extra) {
    var t = { x: xy[0], y: xy[1], mode: "lines", name: name, xaxis: PANELS[panel][0],
              yaxis: PANELS[panel][1], line: { color: color, width: 1 },
              legend: "legend" + (panel ? panel + 1 : "") };
    Object.keys(extra || {}).forEach(function (k) { t[k] = extra[k]; });
    return t;
  }

  function traces(d) {
    var out = [];
    d.others.forEach(function (xy, i) {
      out.push(line(xy, 0, "the other " + d.others.length + " repeat(s)", "#aaa", { showlegend: i === 0, legendgroup: "others" }));
    });
    if (d.tps) { out.push(line(d.tps, 0, "TPS, run " + d.run, PALETTE[0])); }
    (d.queries || []).forEach(function (q, i) {  // each query a bar from its start, its seconds
      out.push({ type: "bar", x: q.start, y: q.seconds, width: q.seconds, offset: 0, name: q.name,
                 xaxis: "x", yaxis: "y", legend: "legend", opacity: 0.75,
                 marker: { color: PALETTE[i % 10], line: { color: "#fff", width: 0.5 },
                           pattern: { shape: q.timed_out.map(function (t) { return t ? "/" : ""; }) } },
                 text: q.query.map(function (n) { return "Q" + n; }), textposition: "none",
                 hovertemplate: "%{text}: %{y:.3f} s<extra>" + q.name + "</extra>" });
    });
    (d.progress || []).forEach(function (p, i) {  // maintenance operations: progress phases
      var c = PALETTE[i % 10];
      out.push(line(p.pct, 0, p.name, c, { mode: "lines+markers", marker: { size: 3, color: c }, legendgroup: "p" + i }));
      if (p.rate) { out.push(line(p.rate, 1, p.name, c, { showlegend: false, legendgroup: "p" + i })); }
    });
    d.scripts.forEach(function (xy, i) {
      out.push(line(xy, 0, "script " + (i + 1), PALETTE[[4, 1, 2, 5, 6, 8, 9][i % 7]], { line: { dash: "dash", width: 1, color: PALETTE[[4, 1, 2, 5, 6, 8, 9][i % 7]] } }));
    });
    Object.keys(d.latency).forEach(function (k, i) { out.push(line(d.latency[k], 1, k, PALETTE[i])); });
    if (d.waits) {
      d.waits.names.forEach(function (name, i) {
        out.push(line([d.waits.x, d.waits.layers[i]], 2, name, PALETTE[i % 10],
                      { stackgroup: "waits", line: { width: 0.5, shape: "hv", color: PALETTE[i % 10] } }));
      });
    }
    Object.keys(d.buffers).forEach(function (k, i) {
      if (d.buffers[k]) { out.push(line(d.buffers[k], 3, "written by " + k, PALETTE[i])); }
    });
    if (d.wal_mb_s) { out.push(line(d.wal_mb_s, 3, "WAL MB/s", PALETTE[4], { yaxis: "y7", line: { dash: "dash", width: 1, color: PALETTE[4] } })); }
    Object.keys(d.cpu).forEach(function (k, i) {
      out.push(line(d.cpu[k], 4, k, PALETTE[i], { stackgroup: "cpu" }));
    });
    if (d.pgbench_cpu && !d.queries) { out.push(line(d.pgbench_cpu, 4, "pgbench", "#000", { line: { dash: "dash", width: 1, color: "#000" } })); }
    if (d.disk.read) { out.push(line(d.disk.read, 5, "read MB/s", PALETTE[0])); }
    if (d.disk.write) { out.push(line(d.disk.write, 5, "write MB/s", PALETTE[3])); }
    if (d.dirty_mb) { out.push(line(d.dirty_mb, 5, "dirty MB", PALETTE[2], { yaxis: "y8", line: { dash: "dash", width: 1, color: PALETTE[2] } })); }
    return out;
  }

  function layout(d) {
    var lay = { height: 760, margin: { t: 30, r: 30, b: 40, l: 55 }, hovermode: "x",
                showlegend: true, shapes: [], annotations: [] };
    PANELS.forEach(function (p, i) {
      var xa = "xaxis" + (i ? i + 1 : ""), ya = "yaxis" + (i ? i + 1 : "");
      lay[xa] = { domain: p[2], anchor: p[1], matches: i ? "x" : undefined,
                  title: i >= 4 ? { text: "seconds since the first measured phase started" } : undefined };
      lay[ya] = { domain: p[3], anchor: p[0], rangemode: "tozero" };
      lay["legend" + (i ? i + 1 : "")] = { x: p[2][1] + (i % 2 ? 0.055 : 0.01), y: p[3][1], xanchor: "left",
                                           yanchor: "top", font: { size: 10 }, tracegroupgap: 2 };
      var title = d.progress && i < 2 ? PROGRESS_TITLES[i] : TITLES[i];
      if (d.queries && i === 0) { title = QUERIES_TITLE; }
      if (d.queries && i === 4) { title = "CPU % (stacked)"; }  // no pgbench runs the queries
      if (d.queries && i === 1) {  // no latency can exist for a run of queries: no panel
        lay[xa].visible = false;
        lay[ya].visible = false;
        return;
      }
      lay.annotations.push({ text: title, xref: "paper", yref: "paper", x: p[2][0], y: p[3][1],
                             xanchor: "left", yanchor: "bottom", showarrow: false, font: { size: 12 } });
    });
    if (d.progress) {  // % of each progress phase, and its MB/s
      lay.yaxis.range = [0, 105];
      lay.legend.font.size = 9;  // long phase names: less of the next panel covered
    } else if (d.queries) {  // the queries' seconds
      lay.yaxis.title = { text: "seconds" };
    } else {  // latency on a log scale
      lay.yaxis2.type = "log";
      lay.yaxis2.dtick = "D2";
      lay.yaxis2.tickformat = ".2~g";
      lay.yaxis2.rangemode = undefined;
    }
    lay.yaxis5.range = [0, 100];
    lay.yaxis7 = { overlaying: "y4", side: "right", rangemode: "tozero", showgrid: false, anchor: "x4", tickformat: ".3~g", tickmode: "auto" };
    lay.yaxis8 = { overlaying: "y6", side: "right", rangemode: "tozero", showgrid: false, anchor: "x6", tickformat: ".3~g", tickmode: "auto" };
    d.checkpoints.forEach(function (c) {
      lay.shapes.push({ type: "rect", xref: "x", yref: "y domain", x0: c[0], x1: c[1], y0: 0, y1: 1,
                        fillcolor: "#d62728", opacity: 0.12, line: { width: 0 } });
    });
    d.phases.forEach(function (x) {
      lay.shapes.push({ type: "line", xref: "x", yref: "y domain", x0: x, x1: x, y0: 0, y1: 1,
                        line: { color: "#888", width: 1, dash: "dot" } });
    });
    return lay;
  }

  // CPU profiles: a flame graph (an icicle, the roots at the bottom) and the differential
  // against the baseline, each frame coloured by the change of its share (points of %)
  function icicle(t, delta) {
    var tr = { type: "icicle", ids: t.ids, labels: t.labels, parents: t.parents, values: t.values,
               branchvalues: "total", tiling: { orientation: "v", flip: "y" }, maxdepth: 14,
               textinfo: "label", hovertemplate: "%{label}<br>%{value} samples, %{percentRoot:.1%} of all<extra></extra>" };
    if (delta) {
      var top = Math.max.apply(null, delta.map(Math.abs).concat([1]));
      tr.marker = { colors: delta, colorscale: "RdBu", reversescale: true, cmin: -top, cmax: top,
                    showscale: true, colorbar: { title: { text: "Δ share, points" }, thickness: 12 } };
      tr.customdata = delta;
      tr.hovertemplate = "%{label}<br>%{value} samples; share %{customdata:+.2f} points vs the baseline<extra></extra>";
    }
    return tr;
  }

  function flames(n, d) {
    var cfg = { responsive: true, displaylogo: false };
    var lay = function (title) { return { height: 520, margin: { t: 28, r: 10, b: 10, l: 10 },
                                          title: { text: title, font: { size: 13 }, x: 0 } }; };
    var f = document.getElementById("pflame-" + n);
    if (f && d.flame) {
      plotly().newPlot(f, [icicle(d.flame, null)], lay("CPU samples of run " + d.run + " (" + d.flame.samples + ")"), cfg);
      f.dataset.drawn = "1";
    }
    var g = document.getElementById("pflamediff-" + n);
    if (g && d.flame_diff) {
      plotly().newPlot(g, [icicle(d.flame_diff, d.flame_diff.delta)], lay("Run " + d.run + " against the baseline " + d.flame_diff.base_label + " (run " + d.flame_diff.base + ")"), cfg);
      g.dataset.drawn = "1";
    }
  }

  function draw(el) {
    if (el.dataset.drawn) { return; }
    el.dataset.drawn = "1";
    try {
      var d = JSON.parse(document.getElementById("pdata-" + el.dataset.point).textContent);
      plotly().newPlot(el, traces(d), layout(d), { responsive: true, displaylogo: false });
      flames(el.dataset.point, d);
      drawn++;
      document.body.dataset.pointsDrawn = String(drawn);
    } catch (e) {
      errors.push("point chart " + el.dataset.point + ": " + e);
      document.body.dataset.errors = errors.join(" | ");
    }
  }

  var seen = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (e.isIntersecting && e.target.closest("details").open) { seen.unobserve(e.target); draw(e.target); }
    });
  }, { rootMargin: "400px" }) : null;
  var charts = document.querySelectorAll("div.pchart");
  charts.forEach(function (el) {
    if (seen) { seen.observe(el); }
    el.closest("details").addEventListener("toggle", function (ev) {
      if (ev.target.open && !seen) { draw(el); }
      if (ev.target.open && seen) { seen.unobserve(el); seen.observe(el); }
    });
  });
  // one point's chart now, or every one at once (the tests; or a reader who wants them all)
  window.pglabDraw = function (n) { draw(document.getElementById("pchart-" + n)); };
  window.pglabDrawAll = function () {
    charts.forEach(function (el) { el.closest("details").open = true; draw(el); });
  };
  // a link to a point (#point-N, from the table or pasted) opens it and draws its chart at once,
  // not when an observer next sees it scrolled into view
  function fromHash() {
    var m = /^#point-(\d+)$/.exec(window.location.hash);
    var el = m && document.getElementById("pchart-" + m[1]);
    if (el) { el.closest("details").open = true; draw(el); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();

  function check() {
    var imgs = document.querySelectorAll("img[data-chart]");
    var ok = 0;
    imgs.forEach(function (img) { if (img.complete && img.naturalWidth > 0) { ok++; } else { errors.push("chart not drawn: " + img.dataset.chart); } });
    document.body.dataset.chartsDrawn = String(ok);
    document.body.dataset.pointsDrawn = String(drawn);
    if (charts.length && !document.getElementById("plotly-js")) { errors.push("plotly.js is missing"); }
    document.body.dataset.errors = errors.join(" | ");
  }
  if (document.readyState === "complete") { check(); } else { window.addEventListener("load", check); }
})();
