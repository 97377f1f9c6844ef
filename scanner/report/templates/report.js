(function () {
  "use strict";
  // The data blob is parsed on first use (opening a file, listing an API's uses), not at load.
  var parsed = null;
  function data() {
    if (parsed === null) parsed = JSON.parse(document.getElementById("report-data").textContent);
    return parsed;
  }
  var MAX_USES = 500;

  function str(i) { return i < 0 ? null : data().s[i]; }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // ---------------------------------------------------------------- tables
  function cellValue(row, index, type) {
    var cell = row.cells[index];
    var v = cell.getAttribute("data-v");
    if (v === null) v = cell.textContent;
    return type === "num" ? parseFloat(v) || 0 : v.toLowerCase();
  }

  function closeUses(table) {
    var open = table.querySelectorAll("tr.uses-row");
    for (var i = 0; i < open.length; i++) {
      var prev = open[i].previousElementSibling;
      if (prev) { var b = prev.querySelector("button.uses"); if (b) b.setAttribute("aria-expanded", "false"); }
      open[i].parentNode.removeChild(open[i]);
    }
  }

  function sortable(table) {
    var heads = table.tHead.rows[0].cells;
    var body = table.tBodies[0];
    Array.prototype.forEach.call(body.rows, function (r, i) { r.setAttribute("data-i", i); });
    Array.prototype.forEach.call(heads, function (th, index) {
      var type = th.getAttribute("data-type");
      if (!type) return;
      th.setAttribute("tabindex", "0");
      function sort() {
        closeUses(table);
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        if (!th.hasAttribute("aria-sort") && type === "num") dir = -1;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        // Read every key once, then sort the keys (thousands of rows: no DOM reads while sorting).
        var keyed = Array.prototype.map.call(body.rows, function (r) {
          return [cellValue(r, index, type), +r.getAttribute("data-i"), r];
        });
        keyed.sort(function (a, b) {
          if (a[0] < b[0]) return -dir;
          if (a[0] > b[0]) return dir;
          return a[1] - b[1];
        });
        var frag = document.createDocumentFragment();
        keyed.forEach(function (k) { frag.appendChild(k[2]); });
        body.appendChild(frag);
        table.dispatchEvent(new Event("sorted"));
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  }

  // Big tables show at most LIMIT matching rows (the rest stay display:none, costing no layout)
  // until "Show all" is pressed; filtering and sorting always work on every row.
  var LIMIT = 500;
  function filterable(table, input, select, counter, more) {
    var rows = table.tBodies[0].rows;
    var limit = +table.getAttribute("data-limit") || LIMIT;
    function apply() {
      closeUses(table);
      var q = input.value.trim().toLowerCase();
      var cat = select.value;
      var matches = 0;
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i];
        var ok = (!q || r.getAttribute("data-q").indexOf(q) >= 0) &&
                 (!cat || (" " + r.getAttribute("data-cats") + " ").indexOf(" " + cat + " ") >= 0);
        if (ok) matches++;
        r.hidden = !ok || matches > limit;
      }
      if (matches > limit) {
        counter.textContent = "first " + limit + " of " + matches + " shown";
        more.hidden = false;
      } else {
        counter.textContent = matches + " of " + rows.length;
        more.hidden = true;
      }
    }
    input.addEventListener("input", apply);
    select.addEventListener("change", apply);
    more.addEventListener("click", function () { limit = Infinity; apply(); });
    table.addEventListener("sorted", apply);
    return apply;
  }

  var apiTable = document.getElementById("api-table");
  var fileTable = document.getElementById("file-table");
  sortable(apiTable);
  sortable(fileTable);
  var apiFilter = filterable(apiTable, document.getElementById("api-filter"), document.getElementById("api-category"),
                             document.getElementById("api-shown"), document.getElementById("api-more"));
  filterable(fileTable, document.getElementById("file-filter"), document.getElementById("file-category"),
             document.getElementById("file-shown"), document.getElementById("file-more"));

  // API row -> its uses
  apiTable.addEventListener("click", function (e) {
    var button = e.target.closest ? e.target.closest("button.uses") : null;
    if (!button) return;
    var row = button.closest("tr");
    var next = row.nextElementSibling;
    if (next && next.classList.contains("uses-row")) {
      next.parentNode.removeChild(next);
      button.setAttribute("aria-expanded", "false");
      return;
    }
    var api = +row.getAttribute("data-api");
    var locations = data().apis[api];
    var tr = el("tr", "uses-row");
    var td = el("td");
    td.colSpan = row.cells.length;
    var list = el("div", "uselist");
    for (var i = 0; i < locations.length && i < MAX_USES; i++) {
      var a = el("a", null, data().paths[locations[i][0]] + ":" + locations[i][1]);
      a.href = "#f" + locations[i][0] + "-L" + locations[i][1];
      list.appendChild(a);
    }
    td.appendChild(list);
    if (locations.length > MAX_USES) td.appendChild(el("div", "muted", "and " + (locations.length - MAX_USES) + " more"));
    tr.appendChild(td);
    row.parentNode.insertBefore(tr, row.nextSibling);
    button.setAttribute("aria-expanded", "true");
  });

  // ---------------------------------------------------------------- sources
  function lineNode(fileId, number, text, ranges, marks) {
    var line = el("div", "line");
    line.id = "f" + fileId + "-L" + number;
    line.appendChild(el("span", "ln", number));
    var tx = el("span", "tx");
    var cuts = [0, text.length];
    var i;
    for (i = 0; i < ranges.length; i += 3) cuts.push(ranges[i], ranges[i] + ranges[i + 1]);
    for (i = 0; i < marks.length; i++) cuts.push(marks[i][0], marks[i][1]);
    cuts = cuts.filter(function (c) { return c >= 0 && c <= text.length; }).sort(function (a, b) { return a - b; });
    for (var c = 0; c + 1 < cuts.length; c++) {
      var start = cuts[c], end = cuts[c + 1];
      if (end <= start) continue;
      var cls = "";
      for (i = 0; i < ranges.length; i += 3) {
        if (ranges[i] <= start && start < ranges[i] + ranges[i + 1]) { cls = "k-" + data().classes[ranges[i + 2]]; break; }
      }
      for (i = 0; i < marks.length; i++) {
        if (marks[i][0] <= start && start < marks[i][1]) { cls += " mark"; break; }
      }
      var piece = text.slice(start, end);
      if (cls) tx.appendChild(el("span", cls.trim(), piece)); else tx.appendChild(document.createTextNode(piece));
    }
    if (!text.length) tx.appendChild(document.createTextNode(" "));
    line.appendChild(tx);
    return line;
  }

  function findingNode(f) {
    var category = str(f[6]);
    var box = el("div", "finding c-" + category);
    var head = el("div", "head");
    head.appendChild(el("span", "code", str(f[4])));
    head.appendChild(el("span", "sev s-" + str(f[5]), str(f[5])));
    if (str(f[13])) head.appendChild(el("span", "runtime", str(f[13])));
    head.appendChild(el("span", "msg", str(f[7])));
    var links = el("span", "links");
    if (f[8] >= 0) {
      var back = el("a", null, "API table");
      back.href = "#api-" + f[8];
      back.title = data().api_names[f[8]];
      links.appendChild(back);
    }
    if (str(f[10])) {
      var doc = el("a", null, "docs");
      doc.href = str(f[10]);
      doc.target = "_blank";
      doc.rel = "noreferrer noopener";
      links.appendChild(doc);
    }
    head.appendChild(links);
    box.appendChild(head);
    var rw = f[11];
    if (rw) {
      var wrap = el("div", "rewrite");
      wrap.appendChild(el("div", "title", "Suggested rewrite: " + str(rw[0]) + (rw[4] ? "" : " (review: unsafe fix)")));
      if (str(rw[2])) wrap.appendChild(el("pre", "del", str(rw[2]).split("\n").map(function (l) { return "- " + l; }).join("\n")));
      if (str(rw[3])) wrap.appendChild(el("pre", "add", str(rw[3]).split("\n").map(function (l) { return "+ " + l; }).join("\n")));
      box.appendChild(wrap);
    } else if (f[12] >= 0) {
      box.appendChild(el("div", "muted", "Fix: " + str(f[12])));
    }
    return box;
  }

  function renderFile(details) {
    var body = details.querySelector(".body");
    if (body.getAttribute("data-done")) return;
    body.setAttribute("data-done", "1");
    var id = +details.getAttribute("data-file");
    var file = data().files[id];
    var byLine = {};
    file.f.forEach(function (f) { (byLine[f[0]] = byLine[f[0]] || []).push(f); });
    var src = el("div", "src");
    var placed = {};
    var lastEnd = 0;
    file.c.forEach(function (chunk) {
      var start = chunk[0], lines = chunk[1], ranges = chunk[2];
      if (start > lastEnd + 1) src.appendChild(el("div", "gap", "\u22ef lines " + (lastEnd + 1) + "\u2013" + (start - 1) + " not shown"));
      for (var i = 0; i < lines.length; i++) {
        var n = start + i;
        var here = byLine[n] || [];
        var marks = here.filter(function (f) { return f[2] === f[0] && f[3] > f[1]; }).map(function (f) { return [f[1], f[3]]; });
        var node = lineNode(id, n, lines[i], ranges[i] || [], marks);
        if (here.length) {
          var sevs = here.map(function (f) { return str(f[5]); });
          var worst = sevs.indexOf("error") >= 0 ? "error" : sevs.indexOf("warning") >= 0 ? "warning" : "info";
          node.className += " hit s-" + worst;
        }
        src.appendChild(node);
        here.forEach(function (f) { src.appendChild(findingNode(f)); });
        placed[n] = true;
      }
      lastEnd = start + lines.length - 1;
    });
    var orphans = file.f.filter(function (f) { return !placed[f[0]]; });
    if (orphans.length) {
      var top = el("div", "src");
      orphans.forEach(function (f) {
        top.appendChild(el("div", "gap", "line " + f[0]));
        top.appendChild(findingNode(f));
      });
      body.appendChild(top);
    }
    body.appendChild(src);
  }

  var sections = document.querySelectorAll("details.file");
  Array.prototype.forEach.call(sections, function (d) {
    d.addEventListener("toggle", function () { if (d.open) renderFile(d); });
  });
  document.getElementById("expand-all").addEventListener("click", function () {
    Array.prototype.forEach.call(sections, function (d) { d.open = true; });
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    Array.prototype.forEach.call(sections, function (d) { d.open = false; });
  });

  // ---------------------------------------------------------------- links
  function flash(node) {
    node.classList.remove("flash");
    void node.offsetWidth;
    node.classList.add("flash");
  }

  function go(hash) {
    var m = /^#f(\d+)(?:-L(\d+))?$/.exec(hash);
    if (m) {
      var details = document.getElementById("f" + m[1]);
      if (!details) return;
      details.open = true;
      renderFile(details);
      var target = m[2] ? document.getElementById("f" + m[1] + "-L" + m[2]) : details;
      if (target) { target.scrollIntoView({ block: m[2] ? "center" : "start" }); if (m[2]) flash(target); }
      return;
    }
    m = /^#api-(\d+)$/.exec(hash);
    if (m) {
      var row = document.getElementById("api-" + m[1]);
      if (!row) return;
      if (row.hidden) {
        document.getElementById("api-filter").value = "";
        document.getElementById("api-category").value = "";
        apiFilter();
      }
      row.hidden = false;  // past the row limit: show this one anyway
      row.scrollIntoView({ block: "center" });
      flash(row);
    }
  }

  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a[href^='#']") : null;
    if (!a) return;
    var hash = a.getAttribute("href");
    if (/^#(f\d+|api-\d+)/.test(hash)) {
      e.preventDefault();
      try { if (location.hash !== hash) history.pushState(null, "", hash); } catch (err) { /* file: URLs in some browsers */ }
      go(hash);
    }
  });
  window.addEventListener("popstate", function () { go(location.hash); });
  if (location.hash) go(location.hash);
})();
