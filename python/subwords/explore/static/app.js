// subwords explore: written for this project. It draws what the library computed (JSON from
// the server, or precomputed into the static page) and sends control changes. No algorithm here.
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("explore-data").textContent);
  const STATIC = DATA.mode === "static";
  const SVGNS = "http://www.w3.org/2000/svg";
  const COLORS = ["#1f5fbf", "#c2410c", "#0d7a5f", "#6a3fb5", "#b3261e", "#5b6270"];
  let catalogue = null;
  const states = {};       // widget id -> current state
  const requestIds = {};   // widget id -> last request number (late answers are dropped)

  // ---- helpers ------------------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // The one spelling of a state the Python side also uses (page.state_key): sorted keys, compact.
  function stateKey(state) {
    const out = {};
    for (const k of Object.keys(state).sort()) out[k] = state[k];
    return JSON.stringify(out);
  }

  // ---- state in the address ------------------------------------------------------------------
  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const out = {};
    for (const [k, v] of params) {
      const dot = k.indexOf(".");
      if (dot < 1) continue;
      const id = k.slice(0, dot), name = k.slice(dot + 1);
      (out[id] = out[id] || {})[name] = v;
    }
    return out;
  }
  function writeHash() {
    const params = new URLSearchParams();
    for (const w of catalogue.widgets) {
      for (const c of w.controls) {
        const v = states[w.id][c.name];
        if (v !== c.default) params.set(w.id + "." + c.name, String(v));
      }
    }
    const text = params.toString();
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }
  function parseValue(control, raw) {
    if (control.kind === "range") return /^-?\d+$/.test(raw) ? Number(raw) : raw;
    if (control.kind === "checkbox") return raw === "true" ? true : raw === "false" ? false : raw;
    for (const [v] of control.options) if (String(v) === raw) return v;
    return raw;  // not an option: the server (or the static lookup) says so
  }

  // ---- computing --------------------------------------------------------------------------------
  async function api(path, body, headers) {
    const r = await fetch(path, { method: "POST", headers: Object.assign({ "X-Subwords": "1" }, headers), body });
    let data;
    try { data = await r.json(); } catch (e) { throw new Error(`the server answered ${r.status} without JSON`); }
    if (!r.ok) throw new Error(data.error || `the server answered ${r.status}`);
    return data;
  }
  async function compute(id, state) {
    if (STATIC) {
      const table = DATA.results[id] || {};
      const found = table[stateKey(state)];
      if (!found) throw new Error(`this page holds no result for ${id} in the state ${stateKey(state)}: ` +
                                  "every control's own values are precomputed, but this one is not among them " +
                                  "(a hand-edited address?). Reset the widget.");
      if (found.error) throw new Error(found.error);
      return found;
    }
    const result = await api("/api/compute", JSON.stringify({ widget: id, state }),
                             { "Content-Type": "application/json" });
    return result;
  }

  async function refresh(id) {
    const box = document.getElementById("w-" + id);
    const out = box.querySelector(".output"), err = box.querySelector(".error"), busy = box.querySelector(".busy");
    const n = (requestIds[id] = (requestIds[id] || 0) + 1);
    const started = performance.now();
    box.dataset.ready = "0";
    const timer = setInterval(async () => {
      let text = `computing… ${((performance.now() - started) / 1000).toFixed(0)} s`;
      if (!STATIC) {
        try {  // the library's own progress line for a fit on a user's corpus
          const p = await (await fetch("/api/progress")).json();
          if (p.running && p.line) text += " — " + p.line;
        } catch (e) { /* the answer itself will say what went wrong */ }
      }
      if (requestIds[id] === n) busy.textContent = text;
    }, 700);
    try {
      const result = await compute(id, states[id]);
      if (requestIds[id] !== n) return;
      err.hidden = true; err.textContent = "";
      out.replaceChildren(...render(result));
      box.dataset.state = stateKey(states[id]);
      box.dataset.error = "";
    } catch (e) {
      if (requestIds[id] !== n) return;
      err.hidden = false;
      err.textContent = "Could not show this: " + e.message;
      box.dataset.error = e.message;
    } finally {
      clearInterval(timer);
      if (requestIds[id] === n) { busy.textContent = ""; box.dataset.ready = "1"; }
    }
  }

  // ---- rendering ------------------------------------------------------------------------------
  function render(result) {
    const parts = [];
    if (result.numbers) {
      const dl = el("dl", { class: "numbers" });
      for (const [label, value] of result.numbers) dl.append(el("div", {}, el("dt", { text: label }), el("dd", { text: String(value) })));
      parts.push(dl);
    }
    for (const s of result.pieces || []) {
      const line = el("div", { class: "strip" }, el("div", { class: "label", text: s.label }));
      for (const [text, kind] of s.pieces) line.append(el("span", { class: "piece" + (kind ? " " + kind : ""), text, title: kind || "piece" }));
      parts.push(line);
    }
    if (result.charts) {
      const wrap = el("div", { class: "charts" });
      for (const c of result.charts) wrap.append(chart(c));
      parts.push(wrap);
    }
    if (result.tables) {
      const wrap = el("div", { class: "tables" });
      for (const t of result.tables) wrap.append(table(t));
      parts.push(wrap);
    }
    if (result.note) parts.push(el("p", { class: "note", text: result.note }));
    return parts;
  }

  function table(t) {
    const hl = new Set(t.highlight || []);
    const tb = el("table", {}, el("caption", { text: t.caption || "" }));
    const head = el("tr", {});
    for (const c of t.columns) head.append(el("th", { scope: "col", text: c }));
    tb.append(el("thead", {}, head));
    const body = el("tbody", {});
    t.rows.forEach((row, i) => {
      const tr = el("tr", hl.has(i) ? { class: "hl" } : {});
      for (const cell of row) tr.append(el("td", { text: String(cell) }));
      body.append(tr);
    });
    tb.append(body);
    return el("div", { class: "tablebox" }, tb);
  }

  function chart(c) {
    const W = 600, H = 290, L = 56, R = 16, T = 40, B = 40;
    const root = svg("svg", { class: "chart", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
                              "aria-label": c.title });
    root.append(svg("text", { x: 12, y: 16, "font-weight": "600" }, c.title));
    if (c.kind === "lattice") { lattice(root, c, W, H); return root; }
    const pts = c.series.flatMap((s) => s.points);
    if (!pts.length) { root.append(svg("text", { x: L, y: H / 2 }, "nothing to draw")); return root; }
    const xs = pts.map((p) => p[0]).concat((c.vlines || []).map((v) => v[0]));
    const ys = pts.map((p) => p[1]).concat([0]);
    let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    if (c.kind === "bar") { x0 -= 0.5; x1 += 0.5; }
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) y1 = y0 + 1;
    const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
    const Y = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
    root.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#888" }));
    root.append(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#888" }));
    // an axis whose values are all whole numbers (rounds, merges, sizes) gets whole-number ticks
    const wholeX = xs.every((x) => Number.isInteger(x));
    const xTicks = new Set();
    for (let k = 0; k <= 4; k++) {
      const yv = y0 + (y1 - y0) * k / 4;
      let xv = x0 + (x1 - x0) * k / 4;
      root.append(svg("text", { x: L - 6, y: Y(yv) + 4, "text-anchor": "end" }, fmt(yv)));
      if (wholeX) xv = Math.round(xv);
      if (c.kind !== "bar" && !xTicks.has(xv)) {
        xTicks.add(xv);
        root.append(svg("text", { x: X(xv), y: H - B + 14, "text-anchor": "middle" }, fmt(xv)));
      }
    }
    root.append(svg("text", { x: (W + L) / 2, y: H - 6, "text-anchor": "middle" }, c.x));
    root.append(svg("text", { x: 12, y: T - 12 }, c.y));
    for (const [x, label] of c.vlines || []) {
      root.append(svg("line", { x1: X(x), y1: T, x2: X(x), y2: H - B, stroke: "#aaa", "stroke-dasharray": "4 3" }));
      const right = X(x) > W - 90;  // keep the label inside the frame
      // at the foot of the line, clear of the legend in the top corner
      root.append(svg("text", { x: X(x) + (right ? -3 : 3), y: H - B - 4, "text-anchor": right ? "end" : "start" }, label));
    }
    c.series.forEach((s, i) => {
      const color = COLORS[i % COLORS.length];
      if (c.kind === "line") {
        root.append(svg("polyline", { points: s.points.map((p) => `${X(p[0])},${Y(p[1])}`).join(" "), fill: "none",
                                      stroke: color, "stroke-width": 2 }));
      }
      const barW = Math.max(2, (W - L - R) / Math.max(1, s.points.length) * 0.8);
      for (const p of s.points) {
        let mark;
        if (c.kind === "bar") mark = svg("rect", { x: X(p[0]) - barW / 2, y: Y(Math.max(p[1], 0)), width: barW,
                                                   height: Math.abs(Y(0) - Y(p[1])) || 1, fill: color });
        else mark = svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: c.kind === "scatter" ? 4 : 3, fill: color, "fill-opacity": 0.8 });
        mark.append(svg("title", {}, `${p[2] !== undefined ? p[2] + ": " : ""}${c.x} ${fmt(p[0])}, ${c.y} ${fmt(p[1])}`));
        root.append(mark);
        if (c.kind === "scatter" && s.points.length <= 20 && p[2] !== undefined) {  // few points: name them
          const same = s.points.filter((q) => q[0] === p[0] && q[1] === p[1]);
          if (same[0] === p) {  // one label for points that coincide
            const right = X(p[0]) > W - 90;
            root.append(svg("text", { x: X(p[0]) + (right ? -6 : 6), y: Y(p[1]) - 5, "text-anchor": right ? "end" : "start" },
                            same.map((q) => q[2]).join(", ")));
          }
        }
      }
      if (c.series.length > 1) {
        root.append(svg("rect", { x: W - R - 150, y: T + 4 + i * 16, width: 10, height: 10, fill: color }));
        root.append(svg("text", { x: W - R - 134, y: T + 13 + i * 16 }, s.name));
      }
    });
    return root;
  }

  function lattice(root, c, W, H) {
    const arcs = c.series[0].points, best = new Set(c.series[1].points.map((p) => p[0] + ":" + p[1] + ":" + p[2]));
    const n = Math.max(...arcs.map((a) => a[1]));
    const L = 40, R = 40, base = H - 40;
    const X = (i) => L + i * (W - L - R) / n;
    const maxSpan = Math.max(...arcs.map((a) => a[1] - a[0]));
    for (const [i, j, piece, lp] of arcs) {
      const onBest = best.has(i + ":" + j + ":" + piece);
      const h = 24 + (j - i) / maxSpan * (base - 60) + (i % 2) * 6;
      const mid = (X(i) + X(j)) / 2;
      const path = svg("path", { d: `M ${X(i)} ${base} Q ${mid} ${base - 2 * h} ${X(j)} ${base}`, fill: "none",
                                 stroke: onBest ? "#c2410c" : "#1f5fbf", "stroke-width": onBest ? 3 : 1.2,
                                 "stroke-opacity": onBest ? 1 : 0.6 });
      path.append(svg("title", {}, `${piece}: positions ${i}–${j}, log p ${lp}`));
      root.append(path);
      root.append(svg("text", { x: mid, y: base - h - 2, "text-anchor": "middle", fill: onBest ? "#c2410c" : "#1d1f23" }, piece));
    }
    for (let i = 0; i <= n; i++) {
      root.append(svg("circle", { cx: X(i), cy: base, r: 5, fill: "#1d1f23" }));
      root.append(svg("text", { x: X(i), y: base + 18, "text-anchor": "middle" }, String(i)));
    }
  }

  function fmt(v) {
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return String(v);
    return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2);
  }

  // ---- building the page ----------------------------------------------------------------------
  function controlElement(w, c) {
    const id = `c-${w.id}-${c.name}`;
    const wrap = el("div", { class: "control" });
    wrap.append(el("label", { for: id, text: c.label }));
    let input;
    if (c.kind === "range") {
      input = el("input", { type: "range", id, min: c.min, max: c.max, step: c.step, value: states[w.id][c.name] });
      const out = el("output", { for: id, text: String(states[w.id][c.name]) });
      input.addEventListener("input", () => { out.textContent = input.value; changed(w, c, Number(input.value)); });
      wrap.append(input, out);
    } else if (c.kind === "select") {
      input = el("select", { id });
      for (const [v, label] of c.options) {
        const o = el("option", { value: String(v), text: label });
        if (v === states[w.id][c.name]) o.selected = true;
        input.append(o);
      }
      input.addEventListener("change", () => changed(w, c, parseValue(c, input.value)));
      wrap.append(input);
    } else {
      input = el("input", { type: "checkbox", id });
      input.checked = states[w.id][c.name] === true;
      input.addEventListener("change", () => changed(w, c, input.checked));
      wrap.append(input);
    }
    input.dataset.control = c.name;
    return wrap;
  }

  function changed(w, c, value) {
    states[w.id][c.name] = value;
    writeHash();
    refresh(w.id);
  }

  function widgetBox(w) {
    const box = el("section", { class: "widget", id: "w-" + w.id, "data-widget": w.id, "aria-labelledby": "t-" + w.id });
    box.append(el("h3", { id: "t-" + w.id, text: `${w.number}. ${w.title}` }));
    const controls = el("div", { class: "controls" });
    for (const c of w.controls) controls.append(controlElement(w, c));
    const reset = el("button", { type: "button", text: "reset", "aria-label": `reset ${w.title}` });
    reset.addEventListener("click", () => {
      states[w.id] = {};
      for (const c of w.controls) states[w.id][c.name] = c.default;
      writeHash();
      const fresh = widgetBox(w);
      box.replaceWith(fresh);
      refresh(w.id);
      fresh.querySelector("button").focus();
    });
    controls.append(reset);
    box.append(controls, el("p", { class: "error", role: "alert", hidden: "" }), el("p", { class: "busy", "aria-live": "polite" }),
               el("div", { class: "output" }));
    return box;
  }

  function build(fromHash) {
    const main = document.getElementById("main");
    main.replaceChildren();
    const nav = document.getElementById("pages");
    nav.replaceChildren();
    for (const [page, title] of Object.entries(catalogue.pages)) {
      nav.append(el("a", { href: "#", "data-page": page, text: title }));
      nav.lastChild.addEventListener("click", (ev) => {
        ev.preventDefault();
        document.getElementById("page-" + page).scrollIntoView();
      });
      const section = el("section", { id: "page-" + page, "aria-labelledby": "h-" + page },
                         el("h2", { id: "h-" + page, text: title }));
      for (const w of catalogue.widgets.filter((x) => x.page === page)) {
        const given = fromHash[w.id] || {};
        states[w.id] = {};
        for (const c of w.controls) states[w.id][c.name] = c.name in given ? parseValue(c, given[c.name]) : c.default;
        for (const name of Object.keys(given)) if (!w.controls.some((c) => c.name === name)) states[w.id][name] = given[name];
        section.append(widgetBox(w));
      }
      main.append(section);
    }
    for (const w of catalogue.widgets) refresh(w.id);
  }

  function showGlobalError(message) {
    const p = document.getElementById("global-error");
    p.hidden = false;
    p.textContent = message;
  }

  function setUpUpload() {
    document.getElementById("upload").hidden = false;
    const form = document.getElementById("upload-form"), status = document.getElementById("upload-status");
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const file = document.getElementById("upload-file").files[0];
      const name = document.getElementById("upload-name").value;
      if (!file) { status.textContent = "Choose a file first."; return; }
      if (file.size > 10 * 1024 * 1024) { status.textContent = `That file is ${file.size} bytes; the limit is 10 MB.`; return; }
      const started = performance.now();
      const timer = setInterval(() => { status.textContent = `loading ${file.name}… ${((performance.now() - started) / 1000).toFixed(0)} s`; }, 500);
      try {
        const r = await api("/api/corpus?name=" + encodeURIComponent(name), file, { "Content-Type": "text/plain; charset=utf-8" });
        catalogue = await (await fetch("/api/widgets")).json();
        build(readHash());
        status.textContent = `Loaded ${r.name}: ${r.lines} lines, ${r.words} words. Choose it in a widget's corpus list.`;
      } catch (e) {
        status.textContent = "Could not load it: " + e.message;
      } finally {
        clearInterval(timer);
      }
    });
  }

  async function start() {
    try {
      if (STATIC) {
        catalogue = DATA;
      } else {
        const r = await fetch("/api/widgets");
        if (!r.ok) throw new Error(`the server answered ${r.status}`);
        catalogue = await r.json();
        setUpUpload();
      }
      build(readHash());
      document.body.dataset.built = "1";
    } catch (e) {
      showGlobalError("The explorer could not start: " + e.message);
    }
  }
  start();
})();
