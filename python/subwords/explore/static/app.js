// subwords explore: written for this project. It draws what the library computed (JSON from
// the server, or precomputed into the static page) and sends control changes and the typed
// text. No algorithm here: every piece, id, byte and count comes from the library.
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("explore-data").textContent);
  const STATIC = DATA.mode === "static";
  const SVGNS = "http://www.w3.org/2000/svg";
  const COLORS = ["#1f5fbf", "#c2410c", "#0d7a5f", "#6a3fb5", "#b3261e", "#5b6270"];
  const TYPING_MS = 120;   // the pause after a key before the widgets are asked again
  let catalogue = null;
  let sentence = "";       // the text box's opening text (the pages' running sentence)
  let typed = null;        // what the text box holds when it differs from the sentence
  const states = {};       // widget id -> current state
  const requestIds = {};   // widget id -> last request number (late answers are dropped)
  let pinned = null;       // the widget an address named, kept in view while the page fills
  for (const ev of ["wheel", "keydown", "mousedown", "touchstart"]) window.addEventListener(ev, () => { pinned = null; }, true);

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
  function spec(id) { return catalogue.widgets.find((w) => w.id === id); }

  // ---- state in the address ------------------------------------------------------------------
  // "#bpe-walk.merges=3&uni-em.rounds=4" holds states; "#w-uni-lattice" names a widget to show.
  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const out = {}, named = [];
    for (const [k, v] of params) {
      const dot = k.indexOf(".");
      if (dot < 1) {
        const id = k.replace(/^w-/, "");
        if (catalogue.widgets.some((w) => w.id === id)) named.push(id);
        continue;
      }
      const id = k.slice(0, dot), name = k.slice(dot + 1);
      (out[id] = out[id] || {})[name] = v;
      if (!named.includes(id)) named.push(id);
    }
    return { states: out, named };
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
  function stateFrom(w, given) {
    const st = {};
    for (const c of w.controls) st[c.name] = c.name in given ? parseValue(c, given[c.name]) : c.default;
    for (const name of Object.keys(given)) if (!w.controls.some((c) => c.name === name)) st[name] = given[name];
    return st;
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
    const sent = Object.assign({}, state);
    if (typed !== null && spec(id).text) sent.text = typed;
    return api("/api/compute", JSON.stringify({ widget: id, state: sent }), { "Content-Type": "application/json" });
  }

  async function refresh(id) {
    const box = document.getElementById("w-" + id);
    const out = box.querySelector(".output"), err = box.querySelector(".error"), busy = box.querySelector(".busy");
    const n = (requestIds[id] = (requestIds[id] || 0) + 1);
    const started = performance.now();
    box.dataset.ready = "0";
    out.classList.add("stale");  // greyed (after a short delay, in the style) until the answer is drawn
    out.setAttribute("aria-busy", "true");
    const timer = setInterval(async () => {
      let text = `computing… ${((performance.now() - started) / 1000).toFixed(0)} s (the greyed output is the previous answer)`;
      if (!STATIC) {
        try {  // the library's own progress line for a fit on a user's corpus
          const p = await (await fetch("/api/progress")).json();
          if (p.running && p.line) text += " — " + p.line;
        } catch (e) { /* the answer itself will say what went wrong */ }
      }
      if (requestIds[id] === n && box.dataset.ready !== "1") busy.textContent = text;  // not after the answer
    }, 700);
    try {
      const result = await compute(id, states[id]);
      if (requestIds[id] !== n) return;
      err.hidden = true; err.textContent = "";
      out.replaceChildren(...render(result, out));
      box.dataset.state = stateKey(states[id]);
      box.dataset.error = "";
    } catch (e) {
      if (requestIds[id] !== n) return;
      err.hidden = false;
      err.textContent = "Could not show this: " + e.message;
      box.dataset.error = e.message;
    } finally {
      clearInterval(timer);
      if (requestIds[id] === n) {
        busy.textContent = "";
        out.classList.remove("stale");
        out.removeAttribute("aria-busy");
        box.dataset.ready = "1";
        if (pinned) show(pinned, false);
      }
    }
  }

  // ---- rendering ------------------------------------------------------------------------------
  function render(result, out) {
    const parts = [];
    if (result.numbers) {
      const dl = el("dl", { class: "numbers" });
      for (const [label, value] of result.numbers) dl.append(el("div", {}, el("dt", {}, marked(label)), el("dd", {}, marked(String(value)))));
      parts.push(dl);
    }
    if (result.conclusion) {  // the page's conclusion, checked by the library on the corpus shown
      const c = result.conclusion, holds = !c.differs.length;
      const p = el("p", { class: "conclusion " + (holds ? "holds" : "differs") },
                   el("b", { text: "The page's conclusion: " }), marked(c.text + ". "),
                   el("span", { class: "verdict", text: holds ? "It holds here." : "Here it differs: " + c.differs.join("; ") + "." }));
      parts.push(p);
    }
    for (const s of result.pieces || []) parts.push(strip(s));
    if (result.charts) {
      const wrap = el("div", { class: "charts" });
      // charts use the width they are given: one a row, or two side by side on a wide widget
      const avail = Math.max(360, (out.clientWidth || 900) - 4);
      const perRow = result.charts.length > 1 && avail >= 960 ? 2 : 1;
      const width = Math.floor((avail - (perRow - 1) * 12) / perRow);
      for (const c of result.charts) wrap.append(chart(c, width));
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

  // Whitespace made visible: the characters stand in for the space, the tab and the line end.
  function visible(text) {
    return text.replace(/ /g, "␣").replace(/\t/g, "⇥").replace(/\r?\n/g, "↵");
  }

  // Text with every ▁ (U+2581) drawn in the marker colour, so it cannot pass for an underscore.
  function marked(text) {
    if (!text.includes("\u2581")) return document.createTextNode(text);
    const frag = document.createDocumentFragment();
    text.split("\u2581").forEach((part, i) => {
      if (i) frag.append(el("span", { class: "mk", title: "▁ U+2581, the space mark", text: "\u2581" }));
      if (part) frag.append(part);
    });
    return frag;
  }

  function strip(s) {
    const head = el("div", { class: "label" }, el("span", { class: "name" }, marked(s.label)));
    if (s.counts) head.append(el("span", { class: "counts", text: s.counts }));
    const row = el("div", { class: "row" });
    s.pieces.forEach((p, i) => {
      const [text, kind, id, hex, source] = p;
      const piece = el("span", { class: `piece c${i % 6}` + (kind ? " " + kind : "") });
      if (hex !== undefined) piece.append(el("span", { class: "hex", text: hex || "(none)" }));
      piece.append(el("span", { class: "t" + (hex !== undefined ? " has-hex" : "") }, marked(visible(text))));
      if (id !== undefined) piece.append(el("span", { class: "id", text: String(id) }));
      const tip = [kind || "piece", JSON.stringify(text)];
      if (id !== undefined) tip.push(`id ${id}`);
      if (hex !== undefined) tip.push(`bytes ${hex || "none"}`);
      if (source !== undefined) tip.push(`from the text: ${JSON.stringify(source)}`);
      piece.title = tip.join(" · ");
      piece.dataset.piece = text;
      row.append(piece);
    });
    return el("div", { class: "strip" + (s.text ? " yours" : "") }, head, row);
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
      for (const cell of row) tr.append(el("td", {}, marked(String(cell))));
      body.append(tr);
    });
    tb.append(body);
    return el("div", { class: "tablebox" }, tb);
  }

  // ---- charts: ticks at round values (1, 2 or 5 times a power of ten) ---------------------------
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function linearTicks(lo, hi, count, whole) {
    if (hi === lo) hi = lo + 1;
    let step = niceStep(hi - lo, count);
    if (whole && step < 1) step = 1;
    const a = Math.floor(lo / step + 1e-9), b = Math.ceil(hi / step - 1e-9);
    const ticks = [];
    for (let k = a; k <= b; k++) ticks.push(Number((k * step).toPrecision(12)));
    return { ticks, lo: ticks[0], hi: ticks[ticks.length - 1], step };
  }
  function logTicks(lo, hi) {
    const a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
    const ms = b - a > 3 ? [1] : b - a > 1 ? [1, 2, 5] : [1, 2, 3, 5];
    const ticks = [];
    for (let e = a; e <= b; e++) for (const m of ms) {
      const v = Number((m * Math.pow(10, e)).toPrecision(12));
      if (v >= Math.pow(10, a) && v <= Math.pow(10, b)) ticks.push(v);
    }
    return { ticks, lo: Math.pow(10, a), hi: Math.pow(10, b) };
  }
  function fmtTick(v, step) {
    const decimals = step ? Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) : Math.max(0, -Math.floor(Math.log10(Math.abs(v) || 1)));
    return v.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  }
  function fmt(v) {
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2);
  }

  function chart(c, width) {
    const W = Math.max(360, width), bars = c.kind === "bar";
    const pts = c.kind === "lattice" ? [] : c.series.flatMap((s) => s.points);
    const labelled = bars && pts.some((p) => p[2] !== undefined);
    const longest = labelled ? Math.max(...pts.map((p) => String(p[2]).length)) : 0;
    const slanted = labelled && pts.length * 7 * Math.min(longest, 14) > W - 80;
    const B = 44 + (labelled ? (slanted ? Math.min(longest, 14) * 5.5 : 12) : 0);
    const legend = c.kind !== "lattice" && c.series.length > 1;
    const L = 64, R = 18, T = legend || (c.selected || []).length ? 50 : 34, H = 300 + (B - 44);
    const root = svg("svg", { class: "chart", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": c.title });
    root.append(svg("text", { x: 12, y: 18, class: "title" }, c.title));
    if (c.kind === "lattice") { lattice(root, c, W, H); return root; }
    if (!pts.length) { root.append(svg("text", { x: L, y: H / 2 }, "nothing to draw")); return root; }
    const xs = pts.map((p) => p[0]).concat((c.vlines || []).map((v) => v[0]));
    const ys = pts.map((p) => p[1]);
    const logx = c.logx && xs.every((x) => x > 0), logy = c.logy && ys.every((y) => y > 0);
    const yt = logy ? logTicks(Math.min(...ys), Math.max(...ys))
                    : linearTicks(Math.min(0, ...ys), Math.max(0, ...ys), 5, ys.every(Number.isInteger));
    let xt;
    if (bars) xt = { lo: Math.min(...xs) - 0.5, hi: Math.max(...xs) + 0.5, ticks: [] };
    else if (logx) {  // across: the data's own range, with the round ticks inside it
      const x0 = Math.min(...xs), x1 = Math.max(...xs) > x0 ? Math.max(...xs) : x0 * 10;
      xt = { lo: x0, hi: x1, ticks: logTicks(x0, x1).ticks.filter((v) => v >= x0 * (1 - 1e-9) && v <= x1 * (1 + 1e-9)) };
    }
    else {  // across: the data's own range fills the width; the round ticks are those inside it
      const x0 = Math.min(...xs), x1 = Math.max(...xs) > x0 ? Math.max(...xs) : x0 + 1;
      const t = linearTicks(x0, x1, Math.max(3, Math.floor((W - L - R) / 90)), xs.every(Number.isInteger));
      xt = { lo: x0, hi: x1, step: t.step, ticks: t.ticks.filter((v) => v >= x0 - 1e-9 && v <= x1 + 1e-9) };
    }
    const tx = (x) => logx ? Math.log10(x) : x, ty = (y) => logy ? Math.log10(y) : y;
    const X = (x) => L + (tx(x) - tx(xt.lo)) / ((tx(xt.hi) - tx(xt.lo)) || 1) * (W - L - R);
    const Y = (y) => H - B - (ty(y) - ty(yt.lo)) / ((ty(yt.hi) - ty(yt.lo)) || 1) * (H - T - B);
    for (const v of yt.ticks) {
      root.append(svg("line", { x1: L, y1: Y(v), x2: W - R, y2: Y(v), stroke: "#eef0f3" }));
      root.append(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end", class: "tick", "data-axis": "y",
                                "data-scale": logy ? "log" : "linear", "data-value": String(v) }, fmtTick(v, logy ? 0 : yt.step)));
    }
    for (const v of xt.ticks) {
      root.append(svg("line", { x1: X(v), y1: H - B, x2: X(v), y2: H - B + 4, stroke: "#888" }));
      root.append(svg("text", { x: X(v), y: H - B + 16, "text-anchor": "middle", class: "tick", "data-axis": "x",
                                "data-scale": logx ? "log" : "linear", "data-value": String(v) }, fmtTick(v, logx ? 0 : xt.step)));
    }
    root.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#888" }));
    root.append(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#888" }));
    root.append(svg("text", { x: (W + L) / 2, y: H - 6, "text-anchor": "middle", class: "axis" },
                    c.x + (logx ? " (log scale)" : "")));
    const yl = svg("text", { x: 14, y: (T + H - B) / 2, "text-anchor": "middle", class: "axis",
                             transform: `rotate(-90 14 ${(T + H - B) / 2})` }, c.y + (logy ? " (log scale)" : ""));
    root.append(yl);
    for (const [x, label, selected] of c.vlines || []) {
      const attrs = selected ? { stroke: "#b3261e", "stroke-width": 2 } : { stroke: "#aaa", "stroke-dasharray": "4 3" };
      root.append(svg("line", Object.assign({ x1: X(x), y1: T, x2: X(x), y2: H - B, class: selected ? "selected" : "" }, attrs)));
      const right = X(x) > W - 110;  // keep the label inside the frame
      const text = selected ? `${label || "shown"}: ${fmt(x)}` : label;
      if (text) root.append(svg("text", { x: X(x) + (right ? -4 : 4), y: selected ? T + 10 : H - B - 4,
                                          "text-anchor": right ? "end" : "start", class: selected ? "sel" : "" }, text));
    }
    const slot = (W - L - R) / Math.max(1, (xt.hi - xt.lo));
    const chosen = new Map((c.selected || []).map(([x, label]) => [x, label]));  // a bar the readouts name
    c.series.forEach((s, i) => {
      const color = COLORS[i % COLORS.length];
      if (c.kind === "line") {
        root.append(svg("polyline", { points: s.points.map((p) => `${X(p[0])},${Y(p[1])}`).join(" "), fill: "none",
                                      stroke: color, "stroke-width": 2 }));
      }
      const barW = Math.max(2, slot * 0.8);
      const every = labelled ? Math.max(1, Math.ceil(s.points.length * 12 / (W - L - R))) : 1;
      s.points.forEach((p, k) => {
        let mark;
        if (bars) {
          const picked = chosen.has(p[0]);
          mark = svg("rect", { x: X(p[0]) - barW / 2, y: Y(Math.max(p[1], 0)), width: barW,
                               height: Math.abs(Y(0) - Y(p[1])) || 1, fill: picked ? "#b3261e" : color,
                               class: picked ? "selected" : "" });
          if (picked) {  // named above the plot, clear of the other bars, with a line down to the bar
            const right = X(p[0]) > (L + W - R) / 2;
            root.append(svg("line", { x1: X(p[0]), y1: T - 2, x2: X(p[0]), y2: Y(Math.max(p[1], 0)) - 2, stroke: "#b3261e",
                                      "stroke-dasharray": "3 3", class: "selected-lead" }));
            root.append(svg("text", { x: X(p[0]) + (right ? 4 : -4), y: T - 6, "text-anchor": right ? "end" : "start",
                                      class: "sel" }, chosen.get(p[0])));
          }
        }
        else mark = svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: c.kind === "scatter" ? 4 : 3, fill: color, "fill-opacity": 0.75 });
        mark.append(svg("title", {}, `${p[2] !== undefined ? p[2] + ": " : ""}${c.x} ${fmt(p[0])}, ${c.y} ${fmt(p[1])}`));
        root.append(mark);
        if (labelled && k % every === 0) {  // each bar named under the axis
          const lx = X(p[0]), ly = H - B + 12;
          const label = String(p[2]).length > 14 ? String(p[2]).slice(0, 13) + "…" : String(p[2]);
          root.append(svg("text", slanted ? { x: lx, y: ly, "text-anchor": "end", transform: `rotate(-50 ${lx} ${ly})`, class: "barlabel" }
                                          : { x: lx, y: ly + 2, "text-anchor": "middle", class: "barlabel" }, label));
        }
        if (c.kind === "scatter" && s.points.length <= 20 && p[2] !== undefined) {  // few points: name them
          const same = s.points.filter((q) => q[0] === p[0] && q[1] === p[1]);
          if (same[0] === p) {  // one label for points that coincide
            const right = X(p[0]) > W - 110;
            root.append(svg("text", { x: X(p[0]) + (right ? -6 : 6), y: Y(p[1]) - 5, "text-anchor": right ? "end" : "start" },
                            same.map((q) => q[2]).join(", ")));
          }
        }
      });
      if (legend) {  // in the top margin, clear of the data
        const lx = L + i * Math.min(170, (W - L - R) / c.series.length);
        root.append(svg("rect", { x: lx, y: 28, width: 12, height: 10, fill: color }));
        root.append(svg("text", { x: lx + 16, y: 37, class: "legend" }, s.name));
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
    root.append(svg("text", { x: W - R, y: 18, "text-anchor": "end", fill: "#c2410c" }, "thick: the best walk"));
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

  function lesson(w) {
    if (!w.lesson) return null;
    const box = el("div", { class: "lesson" });
    for (const [label, key] of [["The page asks", "asks"], ["Try", "try"], ["Notice", "notice"]]) {
      if (w.lesson[key]) box.append(el("p", {}, el("b", { text: label + ": " }), marked(w.lesson[key])));
    }
    return box;
  }

  function widgetBox(w) {
    const box = el("section", { class: "widget", id: "w-" + w.id, "data-widget": w.id, "aria-labelledby": "t-" + w.id });
    box.append(el("h3", { id: "t-" + w.id, tabindex: "-1" }, marked(`${w.number}. ${w.title}`)));
    if (w.where) box.append(el("p", { class: "where" }, marked(w.where)));
    const les = lesson(w);
    if (les) box.append(les);
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
      fresh.querySelector(".controls button").focus();
    });
    controls.append(reset);
    box.append(controls, el("p", { class: "error", role: "alert", hidden: "" }), el("p", { class: "busy", "aria-live": "polite" }),
               el("div", { class: "output" }));
    return box;
  }

  function buildIndex() {
    const nav = document.getElementById("index");
    nav.replaceChildren();
    if (!STATIC && (catalogue.models || []).length) {
      const a = el("a", { href: "#compare", text: "Your models on your text" });
      a.addEventListener("click", (ev) => { ev.preventDefault(); document.getElementById("compare").scrollIntoView(); });
      nav.append(el("h2", {}, a));
    }
    for (const [page, title] of Object.entries(catalogue.pages)) {
      const head = el("a", { href: "#page-" + page, text: title });
      head.addEventListener("click", (ev) => { ev.preventDefault(); document.getElementById("page-" + page).scrollIntoView(); });
      nav.append(el("h2", {}, head));
      const list = el("ol", {});
      for (const w of catalogue.widgets.filter((x) => x.page === page)) {
        const a = el("a", { href: "#w-" + w.id, "data-index": w.id }, marked(w.title));
        a.addEventListener("click", (ev) => { ev.preventDefault(); show(w.id, true); });
        list.append(el("li", {}, a));
      }
      nav.append(list);
    }
  }

  // Scroll to a widget (below the sticky bar) and mark it in the index.
  function show(id, focus) {
    const box = document.getElementById("w-" + id);
    if (!box) return;
    box.scrollIntoView({ block: "start" });
    for (const a of document.querySelectorAll("#index a.current")) a.classList.remove("current");
    const link = document.querySelector(`#index a[data-index="${id}"]`);
    if (link) link.classList.add("current");
    for (const b of document.querySelectorAll(".widget.targeted")) b.classList.remove("targeted");
    box.classList.add("targeted");
    document.body.dataset.shown = id;
    if (focus) box.querySelector("h3").focus({ preventScroll: true });
  }

  // The models named on the command line, side by side on the text box's text (server only).
  function compareBox() {
    const box = el("section", { id: "compare", class: "panel", "aria-labelledby": "h-compare" },
                   el("h2", { id: "h-compare", text: "Your models on your text" }),
                   el("p", { class: "where", text: "Each model given on the command line cuts the text box's text with its own " +
                             "loader (the ids are the ones its library gives), after our BPE fitted to the opening corpus." }),
                   el("p", { class: "error", role: "alert", hidden: "" }), el("div", { class: "output" }));
    return box;
  }
  async function refreshCompare() {
    const box = document.getElementById("compare");
    if (!box) return;
    const out = box.querySelector(".output"), err = box.querySelector(".error");
    const n = (requestIds.compare = (requestIds.compare || 0) + 1);
    box.dataset.ready = "0";
    out.classList.add("stale");
    try {
      const result = await api("/api/compare", JSON.stringify({ text: typed === null ? sentence : typed }),
                               { "Content-Type": "application/json" });
      if (requestIds.compare !== n) return;
      err.hidden = true;
      out.replaceChildren(...render(result, out));
    } catch (e) {
      if (requestIds.compare !== n) return;
      err.hidden = false;
      err.textContent = "Could not show this: " + e.message;
    } finally {
      if (requestIds.compare === n) { out.classList.remove("stale"); box.dataset.ready = "1"; }
    }
  }

  function build(fromHash) {
    const main = document.getElementById("main");
    main.replaceChildren();
    buildIndex();
    if (!STATIC && (catalogue.models || []).length) {
      main.append(compareBox());
      refreshCompare();
    }
    for (const [page, title] of Object.entries(catalogue.pages)) {
      const section = el("section", { id: "page-" + page, "aria-labelledby": "h-" + page },
                         el("h2", { id: "h-" + page, text: title }));
      for (const w of catalogue.widgets.filter((x) => x.page === page)) {
        states[w.id] = stateFrom(w, fromHash.states[w.id] || {});
        section.append(widgetBox(w));
      }
      main.append(section);
    }
    const all = catalogue.widgets.map((w) => refresh(w.id));
    if (fromHash.named.length) {
      // the answers above the widget change the page's height as they arrive: it is kept in view
      // until they are all drawn, or until the reader scrolls, types or clicks
      pinned = fromHash.named[0];
      show(pinned, false);
      Promise.all(all).then(() => { if (pinned) show(pinned, false); pinned = null; });
    }
    return Promise.all(all);
  }

  // Editing the address applies the new states (no reload) and scrolls to the widget named first.
  function hashChanged() {
    const h = readHash();
    for (const w of catalogue.widgets) {
      const next = stateFrom(w, h.states[w.id] || {});
      if (stateKey(next) === stateKey(states[w.id])) continue;
      states[w.id] = next;
      document.getElementById("w-" + w.id).replaceWith(widgetBox(w));
      refresh(w.id);
    }
    if (h.named.length) show(h.named[0], false);
  }

  function showGlobalError(message) {
    const p = document.getElementById("global-error");
    p.hidden = false;
    p.textContent = message;
  }

  // ---- the text box, the display toggles, the page's corpus -----------------------------------
  function setUpBar() {
    const box = document.getElementById("text"), note = document.getElementById("text-note");
    box.value = sentence;
    if (STATIC) {
      box.readOnly = true;
      note.textContent = "This page holds the running sentence only; typing needs the server: run subwords explore.";
    } else {
      box.maxLength = catalogue.max_text;
      note.textContent = `Cut by every widget marked “your text” as you type (up to ${catalogue.max_text.toLocaleString("en-US")} characters).`;
      let timer = null;
      box.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          typed = box.value === sentence ? null : box.value;
          document.body.dataset.typed = typed === null ? "" : "1";
          for (const w of catalogue.widgets) if (w.text) refresh(w.id);
          refreshCompare();
        }, TYPING_MS);
      });
    }
    for (const [id, cls] of [["show-ids", "show-ids"], ["show-hex", "show-hex"]]) {
      const c = document.getElementById(id);
      c.addEventListener("change", () => document.body.classList.toggle(cls, c.checked));
    }
    const bar = document.getElementById("bar");
    const measure = () => document.documentElement.style.setProperty("--bar", bar.offsetHeight + "px");
    measure();
    if (window.ResizeObserver) new ResizeObserver(measure).observe(bar);
    setUpCorpus();
  }

  // One choice for every widget that reads a large corpus: each one whose list holds it takes it
  // (a model goes into the widgets that show a fitted vocabulary, the others keep their corpus).
  function setUpCorpus() {
    const pick = document.getElementById("page-corpus"), wrap = document.getElementById("corpus-pick");
    const large = catalogue.widgets.filter((w) => w.large);
    const options = (w) => w.controls.find((c) => c.name === "corpus").options;
    const models = new Set(catalogue.models || []);
    const choices = new Map();
    for (const w of large) for (const [v, label] of options(w)) {
      if (models.has(v)) choices.set(v, `${label} (the ${large.filter((x) => x.fitted).length} widgets with a fitted vocabulary)`);
      else if (large.every((x) => options(x).some((o) => o[0] === v))) choices.set(v, label);
    }
    wrap.hidden = false;
    pick.replaceChildren(el("option", { value: "", text: "each widget's own" }));
    for (const [v, label] of choices) pick.append(el("option", { value: String(v), text: label }));
    if (!STATIC) pick.append(el("option", { value: "(upload)", text: "upload a corpus or a model…" }));
    pick.onchange = () => {
      if (pick.value === "(upload)") {  // the upload form, at the top of the page
        pick.value = "";
        document.getElementById("top").scrollIntoView();
        document.getElementById("upload-file").focus();
        return;
      }
      if (!pick.value) return;
      for (const w of large) {
        if (!options(w).some((o) => o[0] === pick.value)) continue;
        states[w.id].corpus = pick.value;
        document.getElementById("w-" + w.id).replaceWith(widgetBox(w));
        refresh(w.id);
      }
      writeHash();
    };
  }

  const MODEL_SUFFIXES = [".json", ".model", ".tiktoken"];
  function setUpUpload() {
    document.getElementById("upload").hidden = false;
    const form = document.getElementById("upload-form"), status = document.getElementById("upload-status");
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const file = document.getElementById("upload-file").files[0];
      let name = document.getElementById("upload-name").value;
      if (!file) { status.textContent = "Choose a file first."; return; }
      if (file.size > 10 * 1024 * 1024) { status.textContent = `That file is ${file.size} bytes; the limit is 10 MB.`; return; }
      // a model keeps its file name's ending (a .tiktoken file's name says its pattern: gpt2.tiktoken)
      const suffix = MODEL_SUFFIXES.find((x) => file.name.endsWith(x));
      if (suffix) name = file.name.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "");
      const started = performance.now();
      const timer = setInterval(() => { status.textContent = `loading ${file.name}… ${((performance.now() - started) / 1000).toFixed(0)} s`; }, 500);
      try {
        const route = suffix ? "/api/model?name=" : "/api/corpus?name=";
        const r = await api(route + encodeURIComponent(name), file,
                            { "Content-Type": suffix ? "application/octet-stream" : "text/plain; charset=utf-8" });
        catalogue = await (await fetch("/api/widgets")).json();
        build(readHash());
        setUpCorpus();
        status.textContent = suffix
          ? `Loaded the model ${r.name} (${r.rows.toLocaleString("en-US")} rows). Choose it in the corpus list of the text bar or of a fitted-vocabulary widget; it is compared on your text at the top of the page.`
          : `Loaded ${r.name}: ${r.lines} lines, ${r.words} words. Choose it in the corpus list of the text bar or in a widget's.`;
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
      sentence = catalogue.sentence;
      setUpBar();
      const ready = build(readHash());
      window.addEventListener("hashchange", hashChanged);
      document.body.dataset.built = "1";
      await ready;
    } catch (e) {
      showGlobalError("The explorer could not start: " + e.message);
    }
  }
  start();
})();
