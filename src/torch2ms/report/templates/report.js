(function () {
  "use strict";
  var started = performance.now();
  // Everything below is built from the embedded data, a little at a time: no step adds more than a
  // few hundred rows or one screen of source, so no interaction blocks the page for long.
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var S = D.s;
  var FIELDS = 8;        // per finding: line, col, end line, end col, kind, message, api, doc
  var PAGE = 200;        // table rows on a page
  var SECTION_BATCH = 100;  // file sections created (or opened) per frame
  var PARSE_BATCH = 100000;  // characters of per-file data read per frame when all of it is needed
  var SEGMENT_LINES = 120;  // source lines rendered together
  var MAX_USES = 500;
  var LINE_PX = 19.4, FINDING_PX = 46;

  function str(i) { return i < 0 ? null : S[i]; }
  function fmt(n) { return Number(n).toLocaleString("en-US"); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  var later = window.requestAnimationFrame ? function (f) { window.requestAnimationFrame(function () { setTimeout(f, 0); }); }
                                           : function (f) { setTimeout(f, 16); };
  function badge(cls, text, title) { var b = el("span", "badge " + cls, text); if (title) b.title = title; return b; }

  // ------------------------------------------------------------------ per-file data, parsed on use
  function fileFindings(i) {
    var node = document.getElementById("d" + i);
    return parseFindings(node ? node.textContent : '{"f":[],"x":[]}');
  }
  function parseFindings(text) {  // lines are stored as steps: make them line numbers; index the fixes
    var data = JSON.parse(text);
    var f = data.f, line = 0;
    for (var at = 0; at < f.length; at += FIELDS) { line += f[at]; f[at] = line; f[at + 2] += line; }
    data.fixOf = {};
    data.x.forEach(function (fix) {  // edit lines are steps from the finding's line and the edit's start
      var at = fix[0] * FIELDS;
      for (var k = 3; k < fix.length; k += 5) { fix[k] += f[at]; fix[k + 2] += fix[k]; }
      data.fixOf[at] = fix;
    });
    return data;
  }
  function fileSource(i) {
    var node = document.getElementById("s" + i);
    return node ? JSON.parse(node.textContent) : [];
  }
  function kind(k) { return D.kinds[k]; }  // [code, severity, category, the code's doc url, runtime label]
  function message(f, at) {
    var text = str(f[at + 5]);
    var api = f[at + 6];
    return api >= 0 ? text.split("\u0001").join(str(D.apis[api][0])) : text;
  }

  // ------------------------------------------------------------------ tables
  // A table is rows of data plus column descriptions; only the rows on screen exist in the page.
  var tables = {};

  function makeTable(name, spec) {
    var table = document.getElementById(spec.id);
    var controls = document.querySelector('.controls[data-table="' + name + '"]');
    var rows = spec.rows;
    var cols = spec.columns;
    var state = { order: null, matched: [], page: 0, sortCol: -1, dir: 1, q: "", choice: "" };
    var keys = {};
    var head = el("thead"), hr = el("tr");
    cols.forEach(function (c, index) {
      var th = el("th", c.num ? "n" : "", c.label);
      if (c.width) th.style.width = c.width;
      if (c.sort !== false) {
        th.setAttribute("data-key", c.key);
        th.setAttribute("data-type", c.num ? "num" : "text");
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortBy(index); });
        th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(index); } });
      }
      hr.appendChild(th);
    });
    head.appendChild(hr);
    var body = el("tbody");
    table.appendChild(head);
    table.appendChild(body);

    var input = el("input");
    input.type = "search";
    input.placeholder = spec.placeholder || "Filter";
    input.id = name + "-filter";
    input.setAttribute("aria-label", input.placeholder);
    controls.appendChild(input);
    var select = null;
    if (spec.choices) {
      select = el("select");
      select.id = name + "-choice";
      spec.choices.forEach(function (c) { var o = el("option", null, c[1]); o.value = c[0]; select.appendChild(o); });
      controls.appendChild(select);
    }
    var showAll = null;
    if (spec.hidden) {  // rows left out until the box is ticked (files without findings)
      var hiddenCount = rows.filter(spec.hidden).length;
      if (hiddenCount) {
        var toggle = el("label", "toggle");
        showAll = el("input");
        showAll.type = "checkbox";
        showAll.id = name + "-all";
        toggle.appendChild(showAll);
        toggle.appendChild(document.createTextNode(" " + spec.hiddenLabel(hiddenCount)));
        controls.appendChild(toggle);
      }
    }
    var counter = el("span", "shown");
    counter.id = name + "-shown";
    controls.appendChild(counter);
    var prev = el("button", "more", "\u2039 Previous");
    prev.type = "button";
    prev.id = name + "-prev";
    controls.appendChild(prev);
    var next = el("button", "more", "Next \u203a");
    next.type = "button";
    next.id = name + "-next";
    controls.appendChild(next);
    var csvButton = el("button", "more", "CSV");
    csvButton.type = "button";
    csvButton.id = name + "-csv";
    csvButton.title = "Download the rows that match, in this order, as CSV";
    controls.appendChild(csvButton);

    function key(index) {
      if (!keys[index]) {
        var c = cols[index];
        keys[index] = rows.map(function (r) { var v = (c.sortValue || c.value)(r); return c.num ? +v : String(v).toLowerCase(); });
      }
      return keys[index];
    }
    function match() {
      var q = state.q, choice = state.choice;
      var base = state.order || rows.map(function (_, i) { return i; });
      state.matched = base.filter(function (i) {
        var r = rows[i];
        return (!q || spec.text(r).toLowerCase().indexOf(q) >= 0) && (!choice || spec.choose(r, choice)) &&
               (!spec.hidden || (showAll && showAll.checked) || !spec.hidden(r));
      });
    }
    function rowNode(i) {
      var tr = el("tr");
      tr.setAttribute("data-i", i);
      if (spec.rowId) tr.id = spec.rowId(i);
      cols.forEach(function (c) {
        var td = el("td", c.num ? "n" : (c.cls || ""));
        var content = c.cell ? c.cell(rows[i], i) : c.value(rows[i]);
        if (content instanceof Node) td.appendChild(content); else td.textContent = content === null ? "" : String(content);
        if (c.num && +c.value(rows[i]) === 0) td.className += " zero";
        tr.appendChild(td);
      });
      return tr;
    }
    function counterText() {
      var total = state.matched.length, first = state.page * PAGE;
      counter.textContent = total > PAGE ? "rows " + fmt(total ? first + 1 : 0) + "\u2013" + fmt(Math.min(first + PAGE, total)) +
                                           " of " + fmt(total) + (total < rows.length ? " (of " + fmt(rows.length) + ")" : "")
                                         : fmt(total) + " of " + fmt(rows.length);
      prev.hidden = next.hidden = total <= PAGE;
      prev.disabled = state.page === 0;
      next.disabled = first + PAGE >= total;
    }
    function render(page) {  // one page of rows: a page never holds more than PAGE rows
      state.page = Math.max(0, Math.min(page || 0, Math.ceil(state.matched.length / PAGE) - 1));
      var frag = document.createDocumentFragment();
      var first = state.page * PAGE, last = Math.min(first + PAGE, state.matched.length);
      for (var k = first; k < last; k++) frag.appendChild(rowNode(state.matched[k]));
      body.textContent = "";
      body.appendChild(frag);
      counterText();
    }
    function sortBy(index) {
      var c = cols[index];
      var dir = state.sortCol === index ? -state.dir : (c.num ? -1 : 1);
      var k = key(index);
      var all = rows.map(function (_, i) { return i; });
      all.sort(function (a, b) { return k[a] < k[b] ? -dir : k[a] > k[b] ? dir : a - b; });
      state.order = all;
      state.sortCol = index;
      state.dir = dir;
      Array.prototype.forEach.call(hr.cells, function (h) { h.removeAttribute("aria-sort"); });
      hr.cells[index].setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      match();
      render(0);
    }
    function apply() { state.q = input.value.trim().toLowerCase(); state.choice = select ? select.value : ""; match(); render(0); }
    input.addEventListener("input", apply);
    if (select) select.addEventListener("change", apply);
    if (showAll) showAll.addEventListener("change", apply);
    prev.addEventListener("click", function () { render(state.page - 1); });
    next.addEventListener("click", function () { render(state.page + 1); });
    csvButton.addEventListener("click", function () { download(name + ".csv", csv()); });
    function csv() {
      var out = [cols.map(function (c) { return quote(c.label); }).join(",")];
      state.matched.forEach(function (i) { out.push(cols.map(function (c) { return quote(c.value(rows[i])); }).join(",")); });
      return out.join("\r\n") + "\r\n";
    }
    function reveal(i) {  // show row i (a link led here): the page that holds it, without a filter if need be
      var at = state.matched.indexOf(i);
      if (at < 0) {
        input.value = "";
        if (select) select.value = "";
        if (showAll) showAll.checked = true;
        apply();
        at = state.matched.indexOf(i);
      }
      if (at >= 0 && Math.floor(at / PAGE) !== state.page) render(Math.floor(at / PAGE));
      return body.querySelector('tr[data-i="' + i + '"]');
    }
    if (spec.sortFirst !== undefined) sortBy(spec.sortFirst); else { match(); render(0); }
    var api = { csv: csv, page: render, sortBy: sortBy, apply: apply, reveal: reveal, state: state, body: body,
                table: table };
    tables[name] = api;
    return api;
  }

  function quote(v) {
    var s = v === null || v === undefined ? "" : String(v);
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function download(fileName, text) {
    var url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
    var a = el("a");
    a.href = url;
    a.download = fileName;
    document.body.appendChild(a);
    a.click();
    document.body.removeChild(a);
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }

  // ------------------------------------------------------------------ table contents
  var EFF = D.efforts, CATS = D.cats;
  function effortBadge(i) { return badge("e-" + EFF[i], D.effortShort[i], D.effortLabels[i]); }
  function catBadge(i) { return badge("c-" + CATS[i], D.catLabels[i]); }
  function code(text) { return text ? el("code", null, text) : el("span", "muted", "\u2014"); }
  function fileLink(i) {
    var path = str(D.files[i][0]);
    if (!D.files[i][2]) return el("span", "path", path);
    var a = el("a", "path", path);
    a.href = "#f" + i;
    return a;
  }
  var apiCols = [
    { label: "Torch API", key: "api", width: "22%", value: function (r) { return str(r[0]); },
      cell: function (r) { var box = el("div"); box.appendChild(el("code", null, str(r[0]))); if (str(r[7])) box.appendChild(el("div", "note", str(r[7]))); return box; } },
    { label: "Uses", key: "uses", num: true, width: "7%", value: function (r) { return r[1]; },
      cell: function (r) { var b = el("button", "uses", fmt(r[1])); b.type = "button"; b.title = "List the uses"; b.setAttribute("aria-expanded", "false"); return b; } },
    { label: "Files", key: "files", num: true, width: "6%", value: function (r) { return r[2]; } },
    { label: "Category", key: "category", width: "12%", value: function (r) { return D.catLabels[r[3]]; },
      cell: function (r) { return catBadge(r[3]); } },
    { label: "Effort", key: "effort", width: "11%", value: function (r) { return D.effortLabels[r[4]]; },
      cell: function (r) { return effortBadge(r[4]); } },
    { label: "MindSpore target", key: "target", width: "18%", value: function (r) { return str(r[5]) || ""; },
      cell: function (r) { return code(str(r[5])); } },
    { label: "Parameter differences", key: "params", width: "14%", sort: false,
      value: function (r) { return r[6].map(str).join("; "); },
      cell: function (r) { if (!r[6].length) return el("span", "muted", "\u2014"); var ul = el("ul", "params"); r[6].forEach(function (p) { ul.appendChild(el("li", null, str(p))); }); return ul; } },
    { label: "Verification", key: "verification", width: "10%", value: function (r) { return str(r[8]); },
      cell: function (r) { var s = el("span", "verify v-" + str(r[9]), str(r[8])); s.title = str(r[8]); return s; } },
  ];
  var choicesApi = [["", "All categories and efforts"]].concat(
    CATS.slice(0, 6).map(function (c, i) { return ["c" + i, D.catLabels[i]]; }),
    EFF.slice(0, 5).map(function (e, i) { return ["e" + i, "Effort: " + D.effortLabels[i]]; }));
  function chooseApi(r, c) { var n = +c.slice(1); return c[0] === "c" ? r[10][n] > 0 : r[4] === n; }
  function apiText(r) { return str(r[0]) + " " + (str(r[5]) || ""); }

  // Only APIs that are used (a call that runs): a type named in an annotation or a base class is no use.
  var apiAt = [], apiRowOf = {};
  D.apis.forEach(function (r, i) { if (r[1] > 0) { apiRowOf[i] = apiAt.length; apiAt.push(i); } });
  var apiTable = makeTable("apis", { id: "api-table", rows: apiAt.map(function (i) { return D.apis[i]; }), columns: apiCols,
                                     text: apiText, choices: choicesApi,
                                     choose: chooseApi, placeholder: "Filter APIs (name or MindSpore target)",
                                     rowId: function (k) { return "api-" + apiAt[k]; } });
  var blockerRows = [];
  apiAt.forEach(function (i) { if (EFF[D.apis[i][4]] === "blocker") blockerRows.push(i); });
  var blockerTable = makeTable("blockers", { id: "blocker-table", rows: blockerRows, text: function (i) { return str(D.apis[i][0]); },
    placeholder: "Filter blockers by name",
    columns: [
      { label: "Torch API", key: "api", width: "32%", value: function (i) { return str(D.apis[i][0]); }, cell: function (i) { return el("code", null, str(D.apis[i][0])); } },
      { label: "Uses", key: "uses", num: true, width: "9%", value: function (i) { return D.apis[i][1]; },
        cell: function (i) { var b = el("button", "uses", fmt(D.apis[i][1])); b.type = "button"; b.setAttribute("data-api", i); b.setAttribute("aria-expanded", "false"); return b; } },
      { label: "Files", key: "files", num: true, width: "8%", value: function (i) { return D.apis[i][2]; } },
      { label: "What to do", key: "note", width: "51%", value: function (i) { return str(D.apis[i][7]) || ""; } },
    ] });
  var effortCols = EFF.map(function (e, k) {
    return { label: D.effortShort[k], key: e, num: true,
             value: function (r) { return r.counts[k]; } };
  });
  var dirRows = D.dirs.map(function (d) { return { path: str(d[0]), depth: d[1], files: d[2], lines: d[3], findings: d[4], counts: d[5], ready: d[6], uses: d[7] }; });
  makeTable("dirs", { id: "dir-table", rows: dirRows, text: function (r) { return r.path; }, placeholder: "Filter folders by path",
    hidden: function (r) { return !r.findings; },
    hiddenLabel: function (n) { return n === 1 ? "Show the folder without findings" : "Show the " + fmt(n) + " folders without findings"; },
    choices: [["", "All depths"], ["1", "Top-level folders"], ["2", "Two levels"], ["3", "Three levels"]],
    choose: function (r, c) { return r.depth <= +c; },
    columns: [
      { label: "Folder", key: "path", width: "27%", value: function (r) { return r.path; }, cell: function (r) { return el("span", "path", r.path); } },
      { label: "Files", key: "files", num: true, value: function (r) { return r.files; } },
      { label: "Lines", key: "lines", num: true, value: function (r) { return r.lines; } },
      { label: "Findings", key: "findings", num: true, value: function (r) { return r.findings; } },
    ].concat(effortCols, [
      { label: "Ready %", key: "readiness", num: true, value: function (r) { return r.ready; },
        cell: function (r) { return r.uses ? r.ready.toFixed(1) : "\u2014"; } },
    ]) });
  var fileRows = D.files.map(function (f, i) { return { i: i, path: str(f[0]), lines: f[1], findings: f[2], error: str(f[3]), cats: f[4], counts: f[5], ready: f[8], left: f[9] }; });
  makeTable("files", { id: "file-table", rows: fileRows, text: function (r) { return r.path; }, placeholder: "Filter files by path",
    hidden: function (r) { return !r.findings; }, sortFirst: 1,
    hiddenLabel: function (n) { return n === 1 ? "Show the file without findings" : "Show the " + fmt(n) + " files without findings"; },
    choices: [["", "All files"]].concat(CATS.map(function (c, i) { return ["c" + i, "With " + D.catLabels[i].toLowerCase()]; }),
                                         EFF.slice(0, 5).map(function (e, i) { return ["e" + i, "With effort: " + D.effortLabels[i].toLowerCase()]; })),
    choose: function (r, c) { var n = +c.slice(1); return c[0] === "c" ? r.cats[n] > 0 : r.counts[n] > 0; },
    rowId: function (i) { return "row-f" + i; },
    columns: [
      { label: "File", key: "path", width: "34%", value: function (r) { return r.path; },
        cell: function (r) { var box = el("div"); box.appendChild(fileLink(r.i)); if (r.error) box.appendChild(el("div", "err", r.error)); return box; } },
      { label: "Work left", key: "left", num: true, value: function (r) { return r.left; },
        sortValue: function (r) { return r.left * 1e9 + r.findings; } },
      { label: "Lines", key: "lines", num: true, value: function (r) { return r.lines; } },
      { label: "Findings", key: "findings", num: true, value: function (r) { return r.findings; } },
    ].concat(effortCols, [
      { label: "Ready %", key: "readiness", num: true, value: function (r) { return r.ready; },
        cell: function (r) { return r.findings ? r.ready.toFixed(1) : "\u2014"; } },
    ]) });

  // ------------------------------------------------------------------ uses of an API (built once, a frame at a time)
  var usesIndex = null, usesWaiting = [];
  function withUses(callback) {
    if (usesIndex) { callback(usesIndex); return; }
    usesWaiting.push(callback);
    if (usesWaiting.length > 1) return;
    var index = D.apis.map(function () { return []; });
    var i = 0;
    (function step() {
      var read = 0;
      for (; i < D.files.length && read < PARSE_BATCH; i++) {
        if (!D.files[i][2]) continue;
        var text = document.getElementById("d" + i).textContent;
        read += text.length;
        var f = parseFindings(text).f;
        for (var at = 0; at < f.length; at += FIELDS) {
          var api = f[at + 6];
          if (api >= 0 && index[api].length < 2 * MAX_USES) index[api].push(i, f[at]);
        }
      }
      if (i < D.files.length) { later(step); return; }
      usesIndex = index;
      usesWaiting.splice(0).forEach(function (cb) { cb(index); });
    })();
  }
  function toggleUses(button, api) {
    var row = button.closest("tr");
    var next = row.nextElementSibling;
    if (next && next.classList.contains("uses-row")) {
      next.parentNode.removeChild(next);
      button.setAttribute("aria-expanded", "false");
      return;
    }
    var tr = el("tr", "uses-row"), td = el("td");
    td.colSpan = row.cells.length;
    var list = el("div", "uselist", "collecting the uses\u2026");
    td.appendChild(list);
    tr.appendChild(td);
    row.parentNode.insertBefore(tr, row.nextSibling);
    button.setAttribute("aria-expanded", "true");
    withUses(function (index) {
      list.textContent = "";
      var locations = index[api];
      for (var k = 0; k < locations.length && k < 2 * MAX_USES; k += 2) {
        var a = el("a", null, str(D.files[locations[k]][0]) + ":" + locations[k + 1]);
        a.href = "#f" + locations[k] + "-L" + locations[k + 1];
        list.appendChild(a);
      }
      if (locations.length >= 2 * MAX_USES) td.appendChild(el("div", "muted", "and more: the first " + MAX_USES + " are listed"));
      list.setAttribute("data-done", "1");
    });
  }
  ["api-table", "blocker-table"].forEach(function (id) {
    document.getElementById(id).addEventListener("click", function (e) {
      var button = e.target.closest ? e.target.closest("button.uses") : null;
      if (!button) return;
      var tr = button.closest("tr");
      var i = +tr.getAttribute("data-i");
      toggleUses(button, id === "api-table" ? apiAt[i] : blockerRows[i]);
    });
  });

  // ------------------------------------------------------------------ sources
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
        if (ranges[i] <= start && start < ranges[i] + ranges[i + 1]) { cls = "k-" + D.classes[ranges[i + 2]]; break; }
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

  // A fix's edits as the lines they change, before and after: one hunk per group of edits on the same
  // or touching lines (a class made a Cell changes its class line and its forward line, not the lines
  // between), each without the lines an edit leaves as they were (an inserted import shows as one + line).
  function preview(fix, lines) {
    var edits = [];
    for (var k = 3; k < fix.length; k += 5) edits.push(fix.slice(k, k + 5));
    edits.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var groups = [];
    edits.forEach(function (e) {
      var last = groups[groups.length - 1];
      if (last && e[0] <= last.end) { last.edits.push(e); last.end = Math.max(last.end, e[2]); }
      else groups.push({ start: e[0], end: e[2], edits: [e] });
    });
    var hunks = [];
    for (var g = 0; g < groups.length; g++) {
      var group = groups[g], before = [];
      for (var n = group.start; n <= group.end; n++) { if (lines[n] === undefined) return null; before.push(lines[n]); }
      var starts = [0];
      before.forEach(function (l) { starts.push(starts[starts.length - 1] + l.length + 1); });
      var joined = before.join("\n"), after = joined;
      group.edits.slice().reverse().forEach(function (e) {
        var s = starts[e[0] - group.start] + e[1], t = starts[e[2] - group.start] + e[3];
        after = after.slice(0, s) + str(e[4]) + after.slice(t);
      });
      var a = joined.split("\n"), b = after.split("\n"), head = 0, tail = 0;
      while (head < Math.min(a.length, b.length) && a[head] === b[head]) head++;
      while (tail < Math.min(a.length, b.length) - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
      if (a.length - tail > head || b.length - tail > head) {
        hunks.push({ line: group.start + head, del: a.slice(head, a.length - tail), add: b.slice(head, b.length - tail) });
      }
    }
    return hunks;
  }

  function findingNode(data, at, lines) {
    var f = data.f, k = kind(f[at + 4]);
    var box = el("div", "finding c-" + k[2]);
    var head = el("div", "head");
    head.appendChild(el("span", "code", k[0]));
    head.appendChild(el("span", "sev s-" + k[1], k[1]));
    if (k[4]) head.appendChild(el("span", "runtime", k[4]));
    head.appendChild(el("span", "msg", message(f, at)));
    var links = el("span", "links");
    if (f[at + 6] >= 0 && D.apis[f[at + 6]][1] > 0) {
      var back = el("a", null, "API table");
      back.href = "#api-" + f[at + 6];
      back.title = str(D.apis[f[at + 6]][0]);
      links.appendChild(back);
    }
    var url = f[at + 7] >= 0 ? str(f[at + 7]) : k[3];
    if (url) {
      var doc = el("a", null, "docs");
      doc.href = url;
      doc.target = "_blank";
      doc.rel = "noreferrer noopener";
      links.appendChild(doc);
    }
    head.appendChild(links);
    box.appendChild(head);
    var fix = data.fixOf[at];
    if (fix) {
      var hunks = preview(fix, lines);
      if (hunks && hunks.length) {
        var wrap = el("div", "rewrite");
        wrap.appendChild(el("div", "title", "Suggested rewrite: " + str(fix[1]) + (fix[2] ? "" : " (review: unsafe fix)")));
        hunks.forEach(function (h) {
          if (hunks.length > 1) wrap.appendChild(el("div", "hunk muted", "line " + h.line));
          if (h.del.length) wrap.appendChild(el("pre", "del", h.del.map(function (l) { return "- " + l; }).join("\n")));
          if (h.add.length) wrap.appendChild(el("pre", "add", h.add.map(function (l) { return "+ " + l; }).join("\n")));
        });
        box.appendChild(wrap);
      } else {
        box.appendChild(el("div", "muted", "Fix: " + str(fix[1]) + (fix[2] ? "" : " (unsafe)")));
      }
    }
    return box;
  }

  // A file's body is a list of segments (up to SEGMENT_LINES lines each), rendered when near the screen
  // and emptied again (keeping their height) when far from it: the page holds a few screens of source.
  var near = new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (!e.isIntersecting) return;
      var node = e.target;
      if (node._expand) { node._expand(); return; }
      if (node._segment) renderSegment(node);
    });
  }, { rootMargin: "1200px 0px" });
  var far = new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (e.isIntersecting || !e.target._segment || !e.target._rendered) return;
      var node = e.target;
      node.style.height = node.offsetHeight + "px";
      node.textContent = "";
      node._rendered = false;
      near.observe(node);
    });
  }, { rootMargin: "6000px 0px" });

  function renderSegment(node) {
    var seg = node._segment;
    if (node._rendered) return;
    node._rendered = true;
    near.unobserve(node);
    var frag = document.createDocumentFragment();
    seg.items.forEach(function (item) {
      if (item.gap) { frag.appendChild(el("div", "gap", item.gap)); return; }
      if (item.orphan !== undefined) {
        frag.appendChild(el("div", "gap", "line " + seg.data.f[item.orphan]));
        frag.appendChild(findingNode(seg.data, item.orphan, seg.lines));
        return;
      }
      var here = seg.byLine[item.n] || [];
      var marks = [];
      here.forEach(function (at) { var f = seg.data.f; if (f[at + 2] === f[at] && f[at + 3] > f[at + 1]) marks.push([f[at + 1], f[at + 3]]); });
      var line = lineNode(seg.file, item.n, item.text, item.ranges, marks);
      if (here.length) {
        var worst = "info";
        here.forEach(function (at) { var s = kind(seg.data.f[at + 4])[1]; if (s === "error" || (s === "warning" && worst === "info")) worst = s; });
        line.className += " hit s-" + worst;
      }
      frag.appendChild(line);
      here.forEach(function (at) { frag.appendChild(findingNode(seg.data, at, seg.lines)); });
    });
    node.style.height = "";
    node.appendChild(frag);
    far.observe(node);
  }

  function segments(i) {
    var data = fileFindings(i), chunks = fileSource(i);
    var byLine = {}, lines = {}, out = [], placed = {};
    for (var at = 0; at < data.f.length; at += FIELDS) (byLine[data.f[at]] = byLine[data.f[at]] || []).push(at);
    chunks.forEach(function (chunk) { chunk[1].forEach(function (text, k) { lines[chunk[0] + k] = text; placed[chunk[0] + k] = true; }); });
    var orphans = [];
    for (at = 0; at < data.f.length; at += FIELDS) if (!placed[data.f[at]]) orphans.push(at);
    function segment(items, findings) {
      return { file: i, data: data, byLine: byLine, lines: lines, items: items,
               height: items.length * LINE_PX + findings * FINDING_PX };
    }
    for (var k = 0; k < orphans.length; k += 40) {
      out.push(segment(orphans.slice(k, k + 40).map(function (o) { return { orphan: o }; }), 40));
    }
    var items = [], findings = 0, lastEnd = 0;
    chunks.forEach(function (chunk) {
      var start = chunk[0];
      if (start > lastEnd + 1) items.push({ gap: "\u22ef lines " + (lastEnd + 1) + "\u2013" + (start - 1) + " not shown" });
      chunk[1].forEach(function (text, k) {
        var n = start + k;
        items.push({ n: n, text: text, ranges: chunk[2][k] || [] });
        findings += (byLine[n] || []).length;
        if (items.length >= SEGMENT_LINES) { out.push(segment(items, findings)); items = []; findings = 0; }
      });
      lastEnd = start + chunk[1].length - 1;
    });
    if (items.length) out.push(segment(items, findings));
    return out;
  }

  function expand(details) {  // the file's segments, as placeholders of about their height
    var body = details._body;
    if (body._segments) return body._segments;
    var i = details._file;
    body.textContent = "";
    body._segments = segments(i).map(function (seg) {
      var node = el("div", "seg");
      node._segment = seg;
      node.style.height = Math.round(seg.height) + "px";
      body.appendChild(node);
      near.observe(node);
      return node;
    });
    return body._segments;
  }

  function opened(details) {
    var body = details._body;
    if (!details.open) {  // closed: let the nodes go
      (body._segments || []).forEach(function (n) { near.unobserve(n); far.unobserve(n); });
      if (body._placeholder) near.unobserve(body._placeholder);
      body.textContent = "";
      body._segments = null;
      body._placeholder = null;
      return;
    }
    if (body._segments || body._placeholder) return;
    var f = D.files[details._file];
    var holder = el("div", "seg");
    holder.style.height = Math.round((f[7] || 0) * LINE_PX + f[2] * FINDING_PX) + "px";
    holder._expand = function () { near.unobserve(holder); body._placeholder = null; expand(details); };
    body._placeholder = holder;
    body.appendChild(holder);
    near.observe(holder);
  }

  var list = document.getElementById("source-list");
  var sectionFiles = [];
  D.files.forEach(function (f, i) { if (f[2]) sectionFiles.push(i); });
  var sections = [], built = 0;
  function buildSections(upto) {
    while (built < upto) {
      var group = el("div", "group");
      buildGroup(group, Math.min(upto, built + SECTION_BATCH));
      list.appendChild(group);
    }
  }
  function buildGroup(frag, upto) {
    for (; built < upto; built++) {
      var i = sectionFiles[built], f = D.files[i];
      var details = el("details", "file");
      details.id = "f" + i;
      details.setAttribute("data-file", i);
      details._file = i;
      var summary = el("summary");
      summary.appendChild(el("span", "path", str(f[0])));
      var badges = el("span", "badges");
      f[4].forEach(function (n, c) { if (n) badges.appendChild(badge("c-" + CATS[c], fmt(n), D.catLabels[c])); });
      summary.appendChild(badges);
      details.appendChild(summary);
      details._body = el("div", "body");
      details._body.setAttribute("data-findings", f[2]);
      details.appendChild(details._body);
      details.addEventListener("toggle", onToggle);
      sections.push(details);
      frag.appendChild(details);
    }
  }
  function onToggle(e) { opened(e.target); }
  (function step() {
    buildSections(Math.min(built + SECTION_BATCH, sectionFiles.length));
    if (built < sectionFiles.length) later(step); else list.setAttribute("data-built", "1");
  })();

  var status = document.getElementById("sources-status");
  var bulk = 0;
  function setAll(open) {
    var mine = ++bulk, k = 0;
    buildSections(sectionFiles.length);
    (function step() {
      if (mine !== bulk) return;
      var end = Math.min(k + SECTION_BATCH, sections.length);
      for (; k < end; k++) sections[k].open = open;
      status.textContent = k < sections.length ? (open ? "opening " : "closing ") + fmt(k) + " of " + fmt(sections.length) + "\u2026" : "";
      if (k < sections.length) later(step); else list.setAttribute("data-state", open ? "open" : "closed");
    })();
  }
  document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });

  // ------------------------------------------------------------------ links
  function flash(node) {
    node.classList.remove("flash");
    void node.offsetWidth;
    node.classList.add("flash");
  }
  function section(i) {
    var at = sectionFiles.indexOf(i);
    if (at < 0) return null;
    if (built <= at) buildSections(at + 1);
    return document.getElementById("f" + i);
  }
  function go(hash) {
    var m = /^#f(\d+)(?:-L(\d+))?$/.exec(hash);
    if (m) {
      var details = section(+m[1]);
      if (!details) return;
      details.open = true;
      opened(details);
      var target = details;
      if (m[2]) {
        var line = +m[2];
        var nodes = expand(details);
        var hit = nodes.filter(function (n) { return n._segment.items.some(function (it) { return it.n === line || (it.orphan !== undefined && n._segment.data.f[it.orphan] === line); }); })[0];
        if (hit) { renderSegment(hit); target = document.getElementById("f" + m[1] + "-L" + line) || hit; }
      }
      target.scrollIntoView({ block: m[2] ? "center" : "start" });
      if (m[2]) flash(target);
      return;
    }
    m = /^#api-(\d+)$/.exec(hash);
    if (m) {
      var row = apiRowOf[+m[1]] === undefined ? null : apiTable.reveal(apiRowOf[+m[1]]);
      if (!row) return;
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

  // For the tests and for scripting the page (nothing else uses it).
  window.torch2msReport = { tables: tables, csv: function (name) { return tables[name].csv(); }, go: go,
                            sectionsBuilt: function () { return built === sectionFiles.length; },
                            startup: performance.now() - started };
})();
