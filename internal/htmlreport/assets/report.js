// heapledger's HTML report: draws the data heapledger wrote into this page (#heapledger-data)
// with the libraries embedded before this script, d3-flame-graph (on d3) for the flame graphs
// and uPlot for the chart over time. Nothing is fetched: the file works offline.
//
// The page keeps what it drew in window.heapledgerReport (the data, the flame-graph charts, the
// uPlot chart, and `ready`, the time in ms from navigation start at which it had drawn
// everything), for scripting it from the console and for the browser tests.
(function () {
  "use strict";

  var report = (window.heapledgerReport = { ready: 0, flames: {}, overTime: null, error: null });
  var data;

  // ---- formatting, as heapledger's text reports print figures

  function bytes(n) {
    if (n == null || !isFinite(n)) return "?";
    var sign = n < 0 ? "-" : "";
    n = Math.abs(n);
    if (n < 10 * 1024) return sign + n + " B";
    var units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    var f = n;
    for (var i = 0; i < units.length; i++) {
      f /= 1024;
      if (f < 1024 || i === units.length - 1) return sign + f.toFixed(1).replace(/\.0$/, "") + " " + units[i];
    }
  }

  function count(n) {
    return n == null ? "?" : Number(n).toLocaleString("en-US");
  }

  function share(part, total) {
    return total > 0 ? (100 * part / total).toFixed(1) + "%" : "-";
  }

  // el builds an element: el("td", {className: "num"}, "12", child, ...).
  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      for (var k in props) {
        if (k === "dataset") Object.assign(node.dataset, props[k]);
        else node[k] = props[k];
      }
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c == null) continue;
      node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  // table builds a table; columns are {head, num (right-aligned), cell(row) -> text or node}.
  function table(columns, rows, footRows) {
    var head = el("tr");
    columns.forEach(function (c) {
      head.appendChild(el("th", { className: c.num ? "num" : "" }, c.head));
    });
    var body = el("tbody");
    function add(section, r) {
      var tr = el("tr");
      columns.forEach(function (c) {
        tr.appendChild(el("td", { className: c.num ? "num" : "" }, c.cell(r)));
      });
      section.appendChild(tr);
    }
    rows.forEach(function (r) { add(body, r); });
    var t = el("table", null, el("thead", null, head), body);
    if (footRows && footRows.length) {
      var foot = el("tfoot");
      footRows.forEach(function (r) { add(foot, r); });
      t.appendChild(foot);
    }
    return t;
  }

  function section(id, title) {
    var s = document.getElementById(id);
    s.appendChild(el("h2", null, title));
    var nav = document.getElementById("nav");
    nav.appendChild(el("a", { href: "#" + id }, title));
    return s;
  }

  function note(text, className) {
    return el("p", { className: className || "note" }, text);
  }

  // ---- header and accounts

  function header() {
    var snaps = data.snapshots;
    document.getElementById("version").textContent = data.version || "";
    if (!snaps.length) {
      document.getElementById("subtitle").textContent = "Heap dump " + data.heap.dump + ". Report written " + data.generated + ".";
      return;
    }
    var last = snaps[data.latest];
    var what = "program " + (last.program || "?") + ", pid " + (last.pid || "?");
    var when = snaps.length === 1 ? "one " + (last.reason || "") + " snapshot at " + (last.time || "?") :
      snaps.length + " snapshots, the latest (" + (last.reason || "") + ") at " + (last.time || "?");
    document.getElementById("subtitle").textContent = what + ": " + when + ". Report written " + data.generated + ".";
  }

  function bytesCell(t) {
    return bytes(t.bytes) + (t.unknown_size_rows ? "+?" : "");
  }

  function accounts() {
    var rep = data.report;
    if (!rep) return;
    var last = data.snapshots[data.latest];
    var s = section("accounts", "Memory accounts");
    s.appendChild(note("Who allocated what in " + last.path + ": every allocation is charged to the nearest accounted method on the stack (the principal), not to the library that said new."));
    var cols = [
      { head: "account", cell: function (a) { return a.name; } },
      { head: "objects", num: true, cell: function (a) { return count(a.totals.objects); } },
      { head: "arrays", num: true, cell: function (a) { return count(a.totals.arrays); } },
      { head: "elements", num: true, cell: function (a) { return count(a.totals.elements); } },
      { head: "bytes", num: true, cell: function (a) { return bytesCell(a.totals); } },
      { head: "share", num: true, cell: function (a) { return share(a.totals.bytes, rep.total.bytes); } },
    ];
    if (rep.liveness) {
      cols.push(
        { head: "live", num: true, cell: function (a) { return count(a.totals.live || 0); } },
        { head: "live bytes", num: true, cell: function (a) { return bytes(a.totals.live_bytes || 0); } },
        { head: "reclaimed", num: true, cell: function (a) { return count(a.totals.reclaimed || 0); } }
      );
    }
    var total = { name: "(total)", totals: rep.total };
    var t = table(cols, rep.accounts, [total]);
    t.id = "accounts-table";
    s.appendChild(t);
    if (rep.liveness) {
      s.appendChild(note("Liveness " + (last.liveness || "on") + (String(last.liveness).indexOf("sample:") === 0 ?
        ": live and reclaimed figures are estimates scaled from a sample of each site's allocations." : ".")));
    }
    if (rep.total.unknown_size_rows) {
      s.appendChild(note(rep.total.unknown_size_rows + " rows had no known object size: their objects are counted, their bytes are not (marked +?)."));
    }
    if (rep.object_init_hook) {
      var h = rep.object_init_hook;
      s.appendChild(note("Object.<init> hook (--object-init), not in the figures above: " + count(h.constructed.objects) +
        " objects constructed, " + count(h.not_seen.objects) + " (" + bytes(h.not_seen.bytes) + ") not seen at any rewritten site."));
    }
    rep.accounts.forEach(function (a) {
      if (!a.top_sites || !a.top_sites.length) return;
      var d = el("details", { className: "top-sites" }, el("summary", null, a.name + ": top allocation sites"));
      d.appendChild(table([
        { head: "objects", num: true, cell: function (e) { return count(e.totals.objects + e.totals.arrays); } },
        { head: "bytes", num: true, cell: function (e) { return bytesCell(e.totals); } },
        { head: "site", cell: function (e) { return e.name; } },
      ], a.top_sites));
      s.appendChild(d);
    });
  }

  // ---- flame graphs

  // pick is the tree of sample type index i in d3-flame-graph's input form, leaving out the
  // frames with nothing of that type.
  function pick(node, i) {
    var out = { n: node.n, v: node.vs[i], k: node.k };
    if (node.f) out.f = node.f;
    if (node.c) {
      var kids = [];
      for (var j = 0; j < node.c.length; j++) {
        if (node.c[j].vs[i] > 0) kids.push(pick(node.c[j], i));
      }
      if (kids.length) out.c = kids;
    }
    return out;
  }

  // hash gives a stable number in [0, 1) for a name, so a frame keeps its colour.
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return (h >>> 0) / 4294967296;
  }

  var HIGHLIGHT = "#e600e6";

  function colour(d, original) {
    if (d.highlight) return HIGHLIGHT;
    var x = hash(d.data.n);
    switch (d.data.k) {
      case "r": return "#c8c8c8";
      case "a": return "hsl(220, 35%, " + Math.round(72 + 10 * x) + "%)";
      case "t": return "hsl(" + Math.round(185 + 25 * x) + ", 65%, " + Math.round(58 + 12 * x) + "%)";
    }
    return original;
  }

  // flame draws one flame graph: the tree of the latest snapshot in one of kinds (sample types
  // that may be shown, the first by default), with a search box, zoom by click, and a reset.
  function flame(parent, key, title, kinds) {
    var prof = data.profile;
    var avail = kinds.filter(function (k) { return prof.types.some(function (t) { return t.type === k.type; }); });
    if (!avail.length) return;
    var first = prof.types.findIndex(function (t) { return t.type === avail[0].type; });
    if (!prof.flame.vs[first]) {
      parent.appendChild(el("h3", null, title));
      parent.appendChild(note("Nothing: the snapshot counts no " + avail[0].label + "."));
      return;
    }
    var box = el("div", { className: "flame", id: "flame-" + key });
    var select = el("select", { className: "flame-type", title: "what the widths show" });
    avail.forEach(function (k) { select.appendChild(el("option", { value: k.type }, k.label)); });
    var search = el("input", { type: "search", className: "flame-search", placeholder: "search frames (text)", size: 32 });
    var reset = el("button", { type: "button", className: "flame-reset" }, "reset zoom");
    var details = el("div", { className: "flame-details" }, "\u00a0");
    var chartBox = el("div", { className: "flame-chart" });
    box.appendChild(el("h3", null, title));
    box.appendChild(el("div", { className: "controls" }, select, search, reset));
    box.appendChild(details);
    box.appendChild(chartBox);
    parent.appendChild(box);

    var index = function () {
      for (var i = 0; i < prof.types.length; i++) if (prof.types[i].type === select.value) return i;
      return -1;
    };
    var unitOf = function () { return prof.types[index()].unit; };
    var fmt = function (v) { return unitOf() === "bytes" ? bytes(v) : count(v) + " objects"; };
    var total = function () { return prof.flame.vs[index()]; };

    var chart = flamegraph.default()
      .width(Math.max(chartBox.clientWidth, 320))
      .cellHeight(18)
      .transitionDuration(250)
      .minFrameSize(1)
      .selfValue(false)
      .sort(false)
      .setColorMapper(colour)
      .setDetailsElement(details)
      .setLabelHandler(function (d) {
        var where = d.data.f ? " [" + d.data.f + "]" : "";
        return d.data.n + where + ": " + fmt(d.data.v) + " (" + share(d.data.v, total()) + " of all)";
      })
      .setSearchMatch(function (d, term) {
        return !!term && d.data.n.toLowerCase().indexOf(term.toLowerCase()) >= 0;
      })
      .setSearchHandler(function (results, sum, all) {
        var matched = results.length === 1 ? "1 frame matches: " : results.length + " frames match: ";
        details.textContent = results.length ? matched + fmt(sum) + " of " + fmt(all) +
          " (" + share(sum, all) + ")" : "no frame matches";
      });
    var draw = function () {
      d3.select(chartBox).datum(pick(prof.flame, index())).call(chart);
    };
    draw();
    select.addEventListener("change", function () {
      chart.update(pick(prof.flame, index()));
      if (search.value) chart.search(search.value);
    });
    var pending = 0;
    search.addEventListener("input", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        if (search.value) chart.search(search.value);
        else { chart.clear(); details.textContent = "\u00a0"; }
      }, 100);
    });
    reset.addEventListener("click", function () { chart.resetZoom(); });
    report.flames[key] = { chart: chart, element: chartBox, select: select, search: search };
  }

  function flames() {
    var prof = data.profile;
    if (!prof) return;
    var s = section("flames", "Flame graphs");
    s.appendChild(note("Each stack is an account (at the root, in brackets), the allocating method, and what it allocated (the top frames, in blue). Widths are the figure chosen; click a frame to zoom, search to highlight frames by name."));
    if (prof.comments && prof.comments.length) {
      var d = el("details", null, el("summary", null, "what the figures are"));
      prof.comments.forEach(function (c) { d.appendChild(note(c)); });
      s.appendChild(d);
    }
    flame(s, "alloc", "Allocations", [
      { type: "alloc_space", label: "bytes allocated" },
      { type: "alloc_objects", label: "objects allocated" },
    ]);
    flame(s, "live", "Live objects", [
      { type: "inuse_space", label: "live bytes" },
      { type: "inuse_objects", label: "live objects" },
    ]);
    if (!prof.types.some(function (t) { return t.type === "inuse_space"; })) {
      s.appendChild(note("No live figures: the program ran without liveness (rewrite with --liveness all or sample:N for a graph of what is still held)."));
    }
  }

  // ---- over time

  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

  function overTime() {
    var o = data.over_time;
    if (!o) return;
    var s = section("over-time", "Over time");
    var measure = o.measure === "live_bytes" ? "live bytes" : "bytes allocated so far (the snapshots have no live figures)";
    s.appendChild(note("Each account's " + measure + " in each of the " + o.x.length + " snapshots."));
    var box = el("div", { className: "chart", id: "over-time-chart" });
    s.appendChild(box);
    var series = [{ label: o.x_is_time ? "time" : "uptime (s)" }];
    o.accounts.forEach(function (a, i) {
      series.push({
        label: a.name, stroke: PALETTE[i % PALETTE.length], width: 2,
        points: { show: true, size: 7 },
        value: function (u, v) { return v == null ? "" : bytes(v); },
      });
    });
    var opts = {
      width: Math.max(box.clientWidth, 320), height: 320,
      // From 0: a rise reads at its true size.
      scales: { x: { time: o.x_is_time }, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } } },
      series: series,
      axes: [{}, { size: 80, values: function (u, vals) { return vals.map(bytes); } }],
    };
    var values = [o.x].concat(o.accounts.map(function (a) { return a.values; }));
    report.overTime = new uPlot(opts, values, box);
    growing(s);
  }

  function growing(s) {
    var g = data.growing;
    if (!g) return;
    s.appendChild(el("h3", null, "Growing allocation sites"));
    if (g.error) {
      s.appendChild(note("No ranking: " + g.error, "warning"));
      return;
    }
    g.warnings.forEach(function (w) { s.appendChild(note("warning: " + w, "warning")); });
    if (!g.leaks.length) {
      s.appendChild(note("No site's live objects kept growing across these snapshots."));
      return;
    }
    s.appendChild(note("Sites whose live objects rose overall, in at least half the intervals and still in the last third (heapledger leaks), most live bytes gained first."));
    var t = table([
      { head: "#", num: true, cell: function (l) { return String(g.leaks.indexOf(l) + 1); } },
      { head: "account", cell: function (l) { return l.account; } },
      { head: "type", cell: function (l) { return l.type; } },
      { head: "live first → last", num: true, cell: function (l) { return count(l.live[0]) + " → " + count(l.live[l.live.length - 1]); } },
      { head: "gained", num: true, cell: function (l) {
        var b = l.live_bytes, n = b.length;
        return b[0] >= 0 && b[n - 1] >= 0 ? bytes(b[n - 1] - b[0]) : "?";
      } },
      { head: "per s", num: true, cell: function (l) { return l.slope_per_s.toFixed(1); } },
      { head: "grew", num: true, cell: function (l) { return l.intervals_grown + "/" + l.intervals; } },
      { head: "generations", num: true, cell: function (l) { return count(l.generations); } },
      { head: "site", cell: function (l) { return l.site; } },
    ], g.leaks);
    t.id = "growing-table";
    s.appendChild(t);
    if (g.total > g.leaks.length) s.appendChild(note((g.total - g.leaks.length) + " more (heapledger leaks --top 0 lists all)."));
  }

  // ---- heap dump

  function groups(title, rows, estimates) {
    if (!rows || !rows.length) return null;
    return el("div", null, el("h4", null, title), table([
      { head: "retained", num: true, cell: function (g) {
        return bytes(g.retained) + (estimates && g.error ? " ± " + bytes(g.error) : "");
      } },
      { head: "objects", num: true, cell: function (g) { return count(g.objects); } },
      { head: "shallow", num: true, cell: function (g) { return bytes(g.shallow); } },
      { head: "account", cell: function (g) { return g.account || ""; } },
      { head: "site", cell: function (g) { return g.site || ""; } },
    ], rows));
  }

  function path(title, steps) {
    if (!steps || !steps.length) return null;
    var d = el("details", null, el("summary", null, title));
    var ol = el("ol", { className: "path" });
    steps.forEach(function (st) { ol.appendChild(el("li", null, el("code", null, st.reference), " ", st.object)); });
    d.appendChild(ol);
    return d;
  }

  function heap() {
    var h = data.heap;
    if (!h) return;
    var s = section("heap", "Heap dump");
    s.appendChild(note(h.dump + " (dump " + h.dump_index + " of " + h.dumps + "; " + h.size_model + ")" + (h.partial ? " PARTIAL" : "") + ": " +
      count(h.objects) + " objects, " + bytes(h.bytes) + " strongly reachable; " + count(h.weakly_held_objects) + " objects (" +
      bytes(h.weakly_held_bytes) + ") held only by weak, soft, phantom or final references; " + count(h.unreachable_objects) +
      " unreachable objects (" + bytes(h.unreachable_bytes) + ") " + (h.unreachable_kept ? "analysed" : "left out") + "."));
    var hl = h.heapledger;
    if (hl) {
      s.appendChild(note("heapledger (liveness " + hl.liveness + "): " + count(hl.tracking_references) + " tracking references and " +
        count(hl.runtime_objects - hl.tracking_references) + " other objects of its runtime (" + bytes(hl.runtime_bytes) +
        " in all) are left out of every figure" + (hl.estimates ? "; retained sizes per account and site are estimates from a sample" : "") + "."));
    }
    s.appendChild(el("h3", null, "Leak suspects (retaining more than " + h.threshold_percent + "% of the heap): " + h.suspects.length));
    var ol = el("ol", { className: "suspects", id: "suspects" });
    h.suspects.forEach(function (sp) {
      var li = el("li", null, el("strong", null, sp.object), " retains " + bytes(sp.retained) + " (" + sp.percent.toFixed(1) + "%); dynamic size " + bytes(sp.dynamic));
      if (sp.accumulation_point && sp.accumulation_point.object !== sp.object) {
        li.appendChild(el("div", null, "memory accumulates in ", el("strong", null, sp.accumulation_point.object), ", retaining " + bytes(sp.accumulation_point.retained)));
      }
      if (sp.allocated_by) {
        var g1 = groups("allocated by account", sp.allocated_by.accounts, hl && hl.estimates);
        var g2 = groups("allocated at site", sp.allocated_by.sites, hl && hl.estimates);
        if (g1) li.appendChild(g1);
        if (g2) li.appendChild(g2);
      }
      var p1 = path("shortest path from a GC root (" + sp.path.length + " references)", sp.path);
      if (p1) li.appendChild(p1);
      if (sp.accumulation_point && sp.accumulation_point.object !== sp.object) {
        var p2 = path("shortest path to the accumulation point", sp.accumulation_path);
        if (p2) li.appendChild(p2);
      }
      ol.appendChild(li);
    });
    s.appendChild(ol);
    s.appendChild(el("h3", null, "Top objects by retained size"));
    var tr = table([
      { head: "retained", num: true, cell: function (o) { return bytes(o.retained); } },
      { head: "dynamic", num: true, cell: function (o) { return bytes(o.dynamic); } },
      { head: "shallow", num: true, cell: function (o) { return bytes(o.shallow); } },
      { head: "object", cell: function (o) { return o.object; } },
    ], h.top_retained || []);
    tr.id = "top-retained";
    s.appendChild(tr);
    s.appendChild(el("h3", null, "Retained size by class"));
    var bc = table([
      { head: "retained", num: true, cell: function (c) { return bytes(c.retained); } },
      { head: "instances", num: true, cell: function (c) { return count(c.instances); } },
      { head: "shallow", num: true, cell: function (c) { return bytes(c.shallow); } },
      { head: "class", cell: function (c) { return c.class; } },
    ], h.retained_by_class || []);
    bc.id = "retained-by-class";
    s.appendChild(bc);
    if (hl) {
      var a = groups("Retained by memory account", hl.retained_by_account, hl.estimates);
      var b = groups("Retained by allocation site", hl.retained_by_site, hl.estimates);
      if (a) s.appendChild(a);
      if (b) s.appendChild(b);
    }
  }

  try {
    data = report.data = JSON.parse(document.getElementById("heapledger-data").textContent);
    header();
    accounts();
    flames();
    overTime();
    heap();
    report.ready = performance.now();
  } catch (e) {
    report.error = String(e && e.stack || e);
    var f = document.getElementById("failure");
    f.hidden = false;
    f.textContent = "This report could not be drawn: " + e;
    console.error("heapledger report:", e);
  }
})();
