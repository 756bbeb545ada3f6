/* The report pages' one script: reads the embedded JSON, draws with DOM text nodes only (log data
   is untrusted, so never innerHTML), builds sections lazily when a link (a #hash) asks for them. */
"use strict";

const DATA = JSON.parse(document.getElementById("report-data").textContent);
const L = DATA.labels;
const SUITS = "♠♥♦♣";
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const COVER = 52;

function t(key, ...args) {
  let s = key in L ? L[key] : key;
  args.forEach((a, i) => { s = s.split("{" + i + "}").join(String(a)); });
  return s;
}

/* Create an element; strings become text nodes, so data can never become markup. */
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "title") e.title = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of kids.flat()) if (c != null) e.append(c);
  return e;
}

function fmt(x, digits = 1) {
  return x == null || Number.isNaN(x) ? "–" : Number(x).toFixed(digits);
}
function signed(x, digits = 1) {
  return x == null || Number.isNaN(x) ? "–" : (x > 0 ? "+" : "") + Number(x).toFixed(digits);
}
function pct(x) { return x == null || Number.isNaN(x) ? "–" : (100 * x).toFixed(1) + "%"; }

/* Plotly renders a few tags in its text; strings from the data lose <, > and & before going there. */
function plotText(s) {
  return String(s).replace(/[<>&]/g, (ch) => ({ "<": "‹", ">": "›", "&": "＆" })[ch]);
}

function cardText(c) { return RANKS[c % 13] + SUITS[Math.floor(c / 13)]; }
function actionText(a) { return (a >= COVER ? t("cover") + " " : "") + cardText(a % COVER); }
function cardEl(c, cls = "") {
  return el("span", { class: `card s${Math.floor(c / 13)} ${cls}`, dataset: { card: String(c) }, text: cardText(c) });
}

/* Lazily parsed stores: big pages keep each hand / player / pair in its own JSON script element. */
const STORE = new Map();
function stored(kind, i) {
  const key = kind + ":" + i;
  if (!STORE.has(key)) {
    const node = document.getElementById(`s-${kind}-${i}`);
    STORE.set(key, node ? JSON.parse(node.textContent) : null);
  }
  return STORE.get(key);
}
const HAND_INDEX = new Map((DATA.hand_ids || []).map((id, i) => [id, i]));
const PLAYER_INDEX = new Map((DATA.player_ids || []).map((id, i) => [id, i]));

function handAnchor(i, action, text) {
  if (i == null) return el("span", { class: "mono", text, title: t("hand_not_embedded") });
  const step = action == null ? "" : `&step=${action}`;
  return el("a", { href: `#hand=${i}${step}`, class: "mono", text });
}
function handLink(handId, action) { return handAnchor(HAND_INDEX.get(handId), action, String(handId)); }
function playerLink(id) {
  const i = PLAYER_INDEX.get(id);
  if (i === undefined || !document.getElementById(`s-player-${i}`)) return el("span", { text: String(id) });
  return el("a", { href: `#player=${i}`, text: String(id) });
}

/* plotly.js is embedded as text and run only after the page has painted: compiling it takes
   seconds on a slow machine, and the tables should not wait for it. */
let plotlyLoading = null;
function loadPlotly() {
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
      const src = document.getElementById("plotly-js");
      if (src && !window.Plotly) document.head.append(el("script", { text: src.textContent }));
      resolve(window.Plotly);
    }, 0)));
  }
  return plotlyLoading;
}

function plot(div, traces, layout) {
  const base = { margin: { l: 56, r: 56, t: 36, b: 48 }, height: 320, legend: { orientation: "h", y: -0.25 } };
  return loadPlotly().then((Plotly) => Plotly &&
    Plotly.newPlot(div, traces, Object.assign(base, layout), { displaylogo: false, responsive: true }));
}

function box(title, ...kids) { return el("section", { class: "box" }, el("h2", { text: title }), ...kids); }
function stat(label, value, role) { return el("span", { class: "stat", dataset: role ? { role } : {} }, el("b", { text: value }), label); }

/* rows: <tr> elements, or a <tbody> the caller fills later. */
function table(headers, rows) {
  const head = el("tr", {}, headers.map(([h, num]) => el("th", { class: num ? "num" : "", text: h })));
  const body = rows instanceof HTMLTableSectionElement ? rows : el("tbody", {}, rows);
  return el("table", { class: "grid" }, el("thead", {}, head), body);
}
function td(v, num = false) { return el("td", { class: num ? "num" : "" }, v); }

/* Generic rendering of a JSON value from another tool (audit signals, evidence effects). */
function describe(v) {
  if (v == null) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : Math.abs(v) < 0.001 && v !== 0 ? v.toExponential(2) : fmt(v, 3);
  if (typeof v === "string" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.map(describe).join(", ");
  return Object.entries(v).map(([k, x]) => `${k}: ${describe(x)}`).join("; ");
}

// --------------------------------------------------------------------------- the hand replayer

let ACTIVE = null;  // the replayer the arrow keys drive

document.addEventListener("keydown", (ev) => {
  if (!ACTIVE || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const target = ev.target || {};
  const typing = target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
    (target.tagName === "INPUT" && !["checkbox", "radio", "button"].includes(target.type));
  if (typing) return;  // arrows edit the threshold or the filter there
  const moves = { ArrowRight: 1, ArrowLeft: -1 };
  if (ev.key in moves) ACTIVE.go(ACTIVE.step + moves[ev.key]);
  else if (ev.key === "Home") ACTIVE.go(0);
  else if (ev.key === "End") ACTIVE.go(ACTIVE.n);
  else return;
  ev.preventDefault();
});

function stateAt(hand, k) {
  const hands = hand.deal.map((cards) => new Set(cards));
  const table = new Set();
  const covered = [[], [], [], []];
  let seat = hand.first;
  for (let i = 0; i < k; i++) {
    const a = hand.actions[i];
    hands[seat].delete(a % COVER);
    if (a >= COVER) covered[seat].push(a % COVER); else table.add(a);
    seat = (seat + 1) % 4;
  }
  return { hands, table, covered, turn: seat, live: new Set(hand.live[k] || []) };
}

function deviationClass(dec, threshold) {
  if (!dec || dec.regret == null) return "";
  if (dec.regret >= threshold) return "dev-big";
  if (dec.regret >= threshold / 3) return "dev-mid";
  if (dec.rank === 0 || dec.regret < 0.05) return "best";
  return "dev-small";
}

class Replayer {
  constructor(root, hand, step, onStep) {
    this.hand = hand;
    this.n = hand.actions.length;
    this.threshold = DATA.threshold;
    this.onStep = onStep;
    this.decisions = hand.decisions || {};
    this.root = el("div", { class: "replayer", dataset: { role: "replayer" } });
    root.append(this.root);
    this.build();
    ACTIVE = this;
    this.go(step == null ? this.firstProblemStep() : step);
  }

  firstProblemStep() {
    const acts = (this.hand.problems || []).map((p) => p.action).filter((a) => a != null);
    if (acts.length) return Math.min(Math.min(...acts), this.n);
    return (this.hand.problems || []).length ? this.n : 0;  // a problem with the result: show the end
  }

  build() {
    const h = this.hand;
    const title = el("h2", {}, t("hand") + " ", el("span", { class: "mono", dataset: { role: "hand-id" }, text: h.id }));
    const meta = el("div", { class: "muted" });
    if (h.table != null) meta.append(t("table") + " ", el("span", { class: "mono", dataset: { role: "table-id" }, text: h.table }));
    const btn = (label, key, fn) => el("button", { type: "button", title: key, dataset: { role: label }, onclick: fn }, t(label));
    this.stepLabel = el("span", { dataset: { role: "step" } });
    this.reveal = el("input", { type: "checkbox", dataset: { role: "reveal" }, onchange: () => this.render() });
    this.onlyBig = el("input", { type: "checkbox", dataset: { role: "only-big" }, onchange: () => this.render() });
    this.thresholdInput = el("input", { type: "number", min: "0", step: "0.5", value: String(this.threshold), style: "width:5em",
      dataset: { role: "threshold" }, onchange: () => { this.threshold = Number(this.thresholdInput.value) || 0; this.render(); } });
    const controls = el("div", { class: "controls" },
      btn("first", "Home", () => this.go(0)), btn("back", "←", () => this.go(this.step - 1)),
      btn("forward", "→", () => this.go(this.step + 1)), btn("last", "End", () => this.go(this.n)),
      this.stepLabel,
      el("label", {}, this.reveal, t("reveal_covered")),
      el("label", {}, this.onlyBig, t("only_big")), this.thresholdInput, t("points"),
      btn("prev_dev", "", () => this.jumpDeviation(-1)), btn("next_dev", "", () => this.jumpDeviation(1)));
    this.panels = [0, 1, 2, 3].map((s) => el("div", { class: `seat-panel pos${s}`, dataset: { role: "seat", seat: String(s) } }));
    this.tableDiv = el("div", { class: "table-rows", dataset: { role: "table" } });
    this.problemsDiv = el("div", { dataset: { role: "problems" } });
    this.decisionDiv = el("div", { class: "decision", dataset: { role: "decision" } });
    this.movesDiv = el("div", { class: "moves", dataset: { role: "moves" } });
    this.finalDiv = el("div", { dataset: { role: "final" } });
    const general = (h.problems || []).filter((p) => p.action == null);
    this.root.append(title, meta, el("div", {}, general.map((p) => this.problemBanner(p))), controls,
      el("div", { class: "felt" }, this.panels, this.tableDiv), this.problemsDiv, this.decisionDiv, this.finalDiv,
      el("h3", { text: t("moves") }), this.movesDiv);
  }

  go(k) {
    this.step = Math.max(0, Math.min(this.n, k | 0));
    this.render();
    if (this.onStep) this.onStep(this.step);
  }

  isBig(i) {
    const d = this.decisions[i];
    return d != null && d.regret != null && d.regret >= this.threshold;
  }

  jumpDeviation(dir) {
    for (let i = this.step + dir; i >= 0 && i < this.n; i += dir) if (this.isBig(i)) return this.go(i);
  }

  render() {
    const h = this.hand;
    const k = this.step;
    const st = stateAt(h, k);
    const last = k > 0 ? h.actions[k - 1] : null;
    this.stepLabel.textContent = t("step_of", k, this.n);
    const reveal = this.reveal.checked;
    const out = k === this.n && h.outcome ? h.outcome : null;
    for (let s = 0; s < 4; s++) {
      const p = this.panels[s];
      p.replaceChildren();
      p.classList.toggle("to-act", (k < this.n || !h.outcome) && st.turn === s);
      const cards = [...st.hands[s]].sort((a, b) => a - b);
      const pts = st.covered[s].reduce((acc, c) => acc + (c % 13) + 1, 0);
      const tags = [];
      if (out && out.tong.includes(s)) tags.push(out.dutou.includes(s) ? t("dutou") : t("tong"));
      p.append(el("div", {},
        el("span", { class: "name", dataset: { role: "player" }, text: h.players[s] }),
        el("span", { class: "meta", text: ` · ${t("seat")} ${s}` + (tags.length ? " · " + tags.join(" ") : "") })));
      p.append(el("div", { class: "row", dataset: { role: "hand" } },
        cards.map((c) => cardEl(c, "small" + (st.live.has(c) ? " live" : "")))));
      const cov = st.covered[s].map((c) => reveal
        ? cardEl(c, "small revealed" + (last === c + COVER ? " last" : ""))
        : el("span", { class: "card small back" + (last === c + COVER ? " last" : ""), title: t("covered") }));
      p.append(el("div", { class: "row", dataset: { role: "covered" } },
        el("span", { class: "meta", text: `${t("covered")}: ${st.covered[s].length}` + (reveal ? ` (${pts} ${t("points")})` : "") + " " }), cov));
    }
    this.tableDiv.replaceChildren(...[0, 1, 2, 3].map((suit) => {
      const row = el("div", { class: "suit-row", dataset: { suit: String(suit) } }, el("span", { class: `label s${suit}`, text: SUITS[suit] }));
      for (let r = 0; r < 13; r++) {
        const c = suit * 13 + r;
        const item = st.table.has(c) ? cardEl(c, "up" + (last === c ? " last" : ""))
          : el("span", { class: "slot" + (st.live.has(c) ? " live" : "") });
        row.append(r === 6 ? el("span", { class: "col7" }, item) : item);
      }
      return row;
    }));
    this.problemsDiv.replaceChildren(...(h.problems || []).filter((p) => p.action != null &&
      (p.action === k || (k === this.n && p.action > this.n))).map((p) => this.problemBanner(p)));
    this.renderDecision(st);
    this.renderFinal(out);
    this.renderMoves();
  }

  problemBanner(p) {
    const where = p.action == null ? "" : t("at_action", p.action + 1) + (p.seat == null ? "" : ` (${t("seat")} ${p.seat})`) + ": ";
    return el("div", { class: "problem-banner", dataset: { role: "problem" } }, where,
      el("span", { class: "mono", text: `[${p.code}] ` }), el("span", { text: p.message }));
  }

  renderDecision(st) {
    const k = this.step;
    const div = this.decisionDiv;
    div.replaceChildren();
    if (k >= this.n) return;
    const seat = st.turn;
    const chosen = this.hand.actions[k];
    const d = this.decisions[k];
    const ms = this.hand.ms;
    div.append(el("h3", {}, t("to_act") + ": ", el("span", { text: this.hand.players[seat] }), ` (${t("seat")} ${seat}) → `,
      el("span", { dataset: { role: "chosen" }, text: actionText(chosen) }),
      ms && k > 0 ? el("span", { class: "muted", text: ` · ${fmt((ms[k] - ms[k - 1]) / 1000, 1)} s` }) : null));
    if (!d) {
      const live = [...st.hands[seat]].filter((c) => st.live.has(c)).sort((a, b) => a - b);
      const opts = live.length ? live : [...st.hands[seat]].sort((a, b) => a - b).map((c) => c + COVER);
      div.append(el("div", { class: "muted", dataset: { role: "options" } },
        (opts.length === 1 ? t("forced") : t("options_no_analysis")) + ": ",
        opts.map((a) => el("span", { class: a === chosen ? "chosen" : "", text: actionText(a) + " " }))));
      return;
    }
    const evs = d.options.map((o) => (o.ev ? o.ev[seat] : null));
    const known = evs.filter((x) => x != null);
    const lo = Math.min(...known, 0);
    const hi = Math.max(...known, 0);
    const order = d.options.map((o, i) => i).sort((i, j) => (evs[j] ?? -Infinity) - (evs[i] ?? -Infinity));
    const dev = d.best != null && d.best !== chosen;
    div.append(el("div", { class: "option muted" }, el("span"), el("span", { text: t("option") }),
      el("span", { text: t("expected_points", seat) }), el("span", { text: t("ev") }), el("span", { text: t("ev_dd") })));
    div.append(el("div", { dataset: { role: "options" } }, order.map((i) => {
      const o = d.options[i];
      const ev = evs[i];
      const width = ev == null || hi === lo ? 0 : 5 + 95 * (ev - lo) / (hi - lo);
      const cls = ["option", o.a === d.best ? "best" : "", o.a === chosen ? "chosen" : "", o.a === chosen && dev ? "dev" : ""].join(" ");
      const mark = (o.a === d.best ? "★" : "") + (o.a === chosen ? "▶" : "");
      return el("div", { class: cls, dataset: { action: String(o.a) } }, el("span", { text: mark }),
        el("span", { text: actionText(o.a) }),
        el("div", { class: "bar-wrap" }, el("div", { class: "bar", style: `width:${width.toFixed(1)}%` })),
        el("span", { class: "num", text: signed(ev, 2) }), el("span", { class: "num muted", text: signed(o.ev_dd ? o.ev_dd[seat] : null, 2) }));
    })));
    const cls = deviationClass(d, this.threshold);
    const facts = [
      `${t("regret")}: ${fmt(d.regret, 2)}` + (d.regret_se == null ? "" : ` ± ${fmt(d.regret_se, 2)}`),
      `${t("rank")}: ${d.rank == null ? "–" : d.rank + 1} / ${d.options.length}`,
      `${t("dd_regret")}: ${fmt(d.dd_regret, 2)}`,
      `${t("difficulty")}: ${fmt(d.difficulty, 2)}`,
    ];
    div.append(el("div", { class: "move " + cls, dataset: { role: "verdict" },
      text: (d.best == null ? "" : `${t("sensible")}: ${actionText(d.best)} · `) + facts.join(" · ") }));
    if (d.delta) {
      div.append(el("div", { class: "muted" }, t("effect_on") + ": ",
        [0, 1, 2, 3].filter((s) => s !== seat).map((s) => el("span", {}, el("span", { text: this.hand.players[s] }), ` ${signed(d.delta[s], 2)}  `))));
    }
    if (d.reasons) div.append(el("div", { class: "muted", dataset: { role: "reasons" }, text: d.reasons }));
  }

  renderFinal(out) {
    this.finalDiv.replaceChildren();
    if (!out) return;
    const h = this.hand;
    const rows = [0, 1, 2, 3].map((s) => el("tr", {}, td(String(s)), td(el("span", { text: h.players[s] })),
      td(String(out.points[s]), true), td("×" + out.multipliers[s], true), td(String(out.final_points[s]), true),
      td(signed(out.scores[s], 0), true), td(String(out.ranking.indexOf(s) + 1), true)));
    this.finalDiv.append(el("h3", { text: t("final_scores") }),
      el("div", { dataset: { role: "explain" }, text: explainOutcome(out) }),
      table([[t("seat")], [t("player")], [t("raw_points"), 1], [t("multiplier"), 1], [t("final_points"), 1], [t("score"), 1], [t("place"), 1]], rows));
  }

  renderMoves() {
    const onlyBig = this.onlyBig.checked;
    const problemAt = new Set((this.hand.problems || []).map((p) => p.action));
    let seat = this.hand.first;
    const chips = this.hand.actions.map((a, i) => {
      const d = this.decisions[i];
      const cls = deviationClass(d, this.threshold);
      const s = seat;
      seat = (seat + 1) % 4;
      if (onlyBig && cls !== "dev-big" && !problemAt.has(i)) return null;
      const tip = `${i + 1}. ${this.hand.players[s]}: ${actionText(a)}` + (d && d.regret != null ? ` · ${t("regret")} ${fmt(d.regret, 2)}` : "");
      return el("span", { class: `move ${cls} ${i === this.step ? "current" : ""} ${problemAt.has(i) ? "problem" : ""}`,
        title: tip, dataset: { step: String(i) }, onclick: () => this.go(i) }, `${i + 1}. ${actionText(a)}`);
    });
    if (problemAt.has(this.n)) chips.push(el("span", { class: "move problem", dataset: { step: String(this.n) }, onclick: () => this.go(this.n), text: "✖" }));
    this.movesDiv.replaceChildren(...chips.filter((c) => c));
  }
}

function explainOutcome(out) {
  const parts = [];
  const n = out.tong.length;
  if (n) parts.push(`${t("tong_" + n)} (${t("seat")} ${out.tong.join(", ")})`);
  if (out.dutou.length) parts.push(`${out.dutou.length} × ${t("dutou")} (${t("seat")} ${out.dutou.join(", ")})`);
  const factors = [...new Set(out.multipliers.filter((m, s) => !out.tong.includes(s)))];
  const head = parts.length ? parts.join("; ") : t("no_tong");
  return factors.length && factors.some((f) => f !== 1) ? `${head}: ${t("factor_others", factors.map((f) => "×" + f).join("/"))}` : head;
}

// --------------------------------------------------------------------------- player section

function renderPlayer(root, p) {
  root.append(el("h2", {}, t("player") + " ", el("span", { dataset: { role: "player-id" }, text: p.player })));
  root.append(box(t("summary"),
    stat(t("skill"), p.skill == null ? "–" : `${fmt(p.skill, 2)} (${fmt(p.skill_lo, 2)}–${fmt(p.skill_hi, 2)})`, "skill"),
    stat(t("decisions"), String(p.decisions)), stat(t("hands"), String(p.hands)),
    stat(t("match_rate"), pct(p.match_rate), "match-rate"),
    stat(t("signal_p"), p.signal_p == null ? "–" : `${fmt(p.signal_p, 4)}${p.signal_flag ? " ⚑" : ""}`, "signal"),
    stat(t("mean_regret"), `${fmt(p.mean_regret, 2)} ± ${fmt(p.regret_se, 2)}`),
    stat(t("dd_regret"), fmt(p.mean_dd_regret, 2)),
    stat(t("room_mean_regret"), fmt(p.room.mean_regret, 2)),
    stat(t("room_percentile"), pct(p.room.percentile))));
  const over = el("div", { class: "plot", dataset: { role: "plot-time" } });
  const think = el("div", { class: "plot", dataset: { role: "plot-think" } });
  const hist = el("div", { class: "plot", dataset: { role: "plot-hist" } });
  root.append(box(t("over_time"), over), box(t("think_vs_difficulty"), p.think ? think : el("p", { class: "muted", text: t("no_think") })),
    box(t("regret_vs_room"), hist));
  plot(over, [
    { x: p.timeline.x, y: p.timeline.match, name: t("match_rate"), mode: "lines+markers", yaxis: "y" },
    { x: p.timeline.x, y: p.timeline.regret, name: t("mean_regret"), mode: "lines+markers", yaxis: "y2" },
    { x: [p.timeline.x[0], p.timeline.x[p.timeline.x.length - 1]], y: [p.room.mean_regret, p.room.mean_regret],
      name: t("room_mean_regret"), mode: "lines", line: { dash: "dot" }, yaxis: "y2" },
  ], { xaxis: { title: { text: t("hand_number") } }, yaxis: { title: { text: t("match_rate") }, tickformat: ".0%", range: [0, 1] },
       yaxis2: { title: { text: t("mean_regret") }, overlaying: "y", side: "right", rangemode: "tozero" } });
  if (p.think) {
    plot(think, [
      { x: p.think.difficulty, y: p.think.think_s, name: t("this_player"), mode: "markers", type: "scatter", marker: { size: 5, opacity: 0.5 } },
      { x: p.think.room_x, y: p.think.room_median, name: t("room_median"), mode: "lines" },
    ], { xaxis: { title: { text: t("difficulty") } }, yaxis: { title: { text: t("think_s") }, rangemode: "tozero" } });
  }
  const mids = p.hist.edges.slice(0, -1).map((e, i) => (e + p.hist.edges[i + 1]) / 2);
  plot(hist, [
    { x: mids, y: p.hist.player, name: t("this_player"), type: "bar", opacity: 0.7 },
    { x: mids, y: p.hist.room, name: t("room"), type: "bar", opacity: 0.5 },
  ], { barmode: "overlay", xaxis: { title: { text: t("regret") } }, yaxis: { title: { text: t("share") }, tickformat: ".0%" } });
  root.append(box(t("worst_decisions"), table(
    [[t("hand")], [t("action"), 1], [t("chosen")], [t("sensible")], [t("regret"), 1], [t("reasons")]],
    p.worst.map((w) => el("tr", {}, td(handLink(w.hand_id, w.action)), td(String(w.action + 1), true),
      td(actionText(w.chosen)), td(actionText(w.best)), td(fmt(w.regret, 2), true), td(el("span", { text: w.reasons || "" })))))));
}

// --------------------------------------------------------------------------- pair section

const VALUE_KEYS = ["value", "estimate", "mean", "score", "statistic", "z"];
const SE_KEYS = ["se", "stderr", "std_err", "sd"];
const N_KEYS = ["n", "decisions", "count", "hands"];

function signalParts(v) {
  if (typeof v === "number") return { value: v };
  if (v == null || typeof v !== "object" || Array.isArray(v)) return { text: describe(v) };
  const pick = (keys) => keys.find((k) => typeof v[k] === "number");
  const vk = pick(VALUE_KEYS);
  const sk = pick(SE_KEYS);
  const nk = pick(N_KEYS);
  const ci = Array.isArray(v.ci) ? v.ci : (typeof v.ci_low === "number" ? [v.ci_low, v.ci_high] : null);
  const rest = Object.fromEntries(Object.entries(v).filter(([k]) => ![vk, sk, nk, "ci", "ci_low", "ci_high"].includes(k)));
  return { value: vk ? v[vk] : null, se: sk ? v[sk] : null, n: nk ? v[nk] : null, ci,
           text: Object.keys(rest).length ? describe(rest) : "" };
}

function renderPair(root, p) {
  const e = p.entry || {};
  const [a, b] = p.players;
  root.append(el("h2", {}, t("pair") + " ", playerLink(a), " & ", playerLink(b), " ",
    e.flagged == null ? null : el("span", { class: "badge " + (e.flagged ? "flag" : "ok"), text: e.flagged ? t("flagged") : t("not_flagged") })));
  root.append(box(t("summary"), stat(t("hands_together"), String(p.hands_together)),
    stat(t("score"), fmt(e.score, 2)), stat("z", fmt(e.z, 2)), stat("p", describe(e.p_value)), stat("q", describe(e.q_value))));
  if (p.table) {
    const roles = [a, b, t("others_each")];
    const cells = p.table.cells;
    const maxAbs = Math.max(1e-9, ...cells.flat().filter((c) => c).map((c) => Math.abs(c.per_hand)));
    const rows = cells.map((row, i) => el("tr", {}, el("th", { text: roles[i] }), row.map((c, j) => {
      if (!c) return el("td", { class: "cell muted", text: "–" });
      const x = c.per_hand / maxAbs;
      const color = x >= 0 ? `rgba(46,125,50,${Math.abs(x) * 0.6})` : `rgba(198,40,40,${Math.abs(x) * 0.6})`;
      return el("td", { class: "cell", style: `background:${color}`, dataset: { role: "heat-cell", from: String(i), to: String(j) },
        title: `${t("total")}: ${signed(c.sum, 1)} · ${t("per_decision")}: ${signed(c.mean, 3)} ± ${fmt(c.se, 3)} · n=${c.n}` },
        signed(c.per_hand, 2), el("div", { class: "muted", text: `± ${fmt(c.se_per_hand, 2)}` }));
    })));
    root.append(box(t("collusion_table"), el("p", { class: "muted", text: t("collusion_help") }),
      el("table", { class: "grid heat", dataset: { role: "heatmap" } },
        el("thead", {}, el("tr", {}, el("th", { text: t("actor_recipient") }), roles.map((r) => el("th", { text: r })))),
        el("tbody", {}, rows))));
  }
  const sig = Object.entries(e.signals || {});
  if (sig.length) {
    const parts = sig.map(([k, v]) => [k, signalParts(v)]);
    const chart = el("div", { class: "plot", dataset: { role: "plot-signals" } });
    root.append(box(t("signals"), table([[t("signal")], [t("value"), 1], [t("uncertainty"), 1], ["n", 1], [""]],
      parts.map(([k, s]) => el("tr", {}, td(el("span", { text: k })), td(s.value == null ? "–" : describe(s.value), true),
        td(s.se != null ? `± ${fmt(s.se, 3)}` : s.ci ? `[${describe(s.ci[0])}, ${describe(s.ci[1])}]` : "–", true),
        td(s.n == null ? "–" : String(s.n), true), td(el("span", { class: "muted", text: s.text || "" }))))), chart));
    const withErr = parts.filter(([, s]) => s.value != null && (s.se != null || s.ci));
    if (withErr.length) {
      plot(chart, [{ type: "scatter", mode: "markers", x: withErr.map(([k]) => plotText(k)), y: withErr.map(([, s]) => s.value),
        error_y: { type: "data", symmetric: false,
          array: withErr.map(([, s]) => (s.se != null ? 1.96 * s.se : s.ci[1] - s.value)),
          arrayminus: withErr.map(([, s]) => (s.se != null ? 1.96 * s.se : s.value - s.ci[0])) } }],
        { yaxis: { title: { text: t("value_95") }, zeroline: true }, height: 280 });
    } else chart.remove();
  }
  const ev = p.evidence || [];
  const known = new Set(["hand_id", "action"]);
  const extra = [...new Set(ev.flatMap((x) => Object.keys(x)))].filter((k) => !known.has(k));
  root.append(box(t("evidence"), ev.length ? table([[t("hand")], [t("action"), 1], ...extra.map((k) => [k])],
    ev.map((x) => el("tr", { dataset: { role: "evidence" } }, td(handLink(x.hand_id, x.action)),
      td(x.action == null ? "–" : String(x.action + 1), true), extra.map((k) => td(el("span", { text: describe(x[k]) }))))))
    : el("p", { class: "muted", text: t("no_evidence") })));
}

// --------------------------------------------------------------------------- audit overview

function renderAudit(root, audit) {
  const pairs = audit.pairs;
  const flagged = pairs.filter((p) => p.flagged);
  root.append(box(t("summary"), stat(t("hands"), String(audit.hands)), stat(t("players"), String(audit.players.length)),
    stat(t("pairs"), String(pairs.length)), stat(t("flagged"), String(flagged.length), "flagged-count")));
  const chart = el("div", { class: "plot", dataset: { role: "plot-audit" } });
  const hover = el("div", { class: "muted", dataset: { role: "hover" } });
  root.append(box(t("score_vs_hands"), chart, hover, audit.alarm ? null : el("p", { class: "muted", text: t("no_alarm") })));
  const trace = (list, name, color) => ({ type: "scatter", mode: "markers", name, x: list.map((p) => p.hands_together),
    y: list.map((p) => p.score), customdata: list.map((p) => p.i), marker: { color, size: 7, opacity: 0.75 },
    text: list.map((p) => plotText(p.players.join(" & "))), hovertemplate: "%{text}<br>%{x} · %{y:.2f}<extra></extra>" });
  const traces = [trace(pairs.filter((p) => !p.flagged), t("not_flagged"), "#78909c"), trace(flagged, t("flagged"), "#c62828")];
  const xs = pairs.map((p) => p.hands_together);
  if (audit.alarm && audit.alarm.hands) traces.push({ x: audit.alarm.hands, y: audit.alarm.score, mode: "lines", name: t("alarm"), line: { color: "#c62828", dash: "dash" } });
  else if (audit.alarm) traces.push({ x: [0, Math.max(1, ...xs)], y: [audit.alarm.score, audit.alarm.score], mode: "lines", name: t("alarm"), line: { color: "#c62828", dash: "dash" } });
  plot(chart, traces, { xaxis: { title: { text: t("hands_together") } }, yaxis: { title: { text: t("score") } } }).then((gd) => {
    if (!gd) return;
    gd.on("plotly_click", (ev) => { const pt = ev.points[0]; if (pt && pt.customdata != null) location.hash = `pair=${pt.customdata}`; });
    gd.on("plotly_hover", (ev) => { const pt = ev.points[0]; if (pt && pt.customdata != null) hover.textContent = pairs.find((p) => p.i === pt.customdata).players.join(" & "); });
  });
  const filter = el("input", { type: "search", placeholder: t("filter_player"), dataset: { role: "filter" } });
  const body = el("tbody", {});
  const more = el("button", { type: "button", dataset: { role: "more" } });
  let limit = 100;
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = pairs.filter((p) => !q || p.players.some((x) => String(x).toLowerCase().includes(q)));
    body.replaceChildren(...shown.slice(0, limit).map((p, r) => el("tr", { class: p.flagged ? "flagged" : "", dataset: { role: "pair-row" } },
      td(String(r + 1), true), td(el("span", {}, playerLink(p.players[0]), " & ", playerLink(p.players[1]))),
      td(String(p.hands_together), true), td(fmt(p.score, 2), true), td(fmt(p.z, 2), true),
      td(describe(p.p_value), true), td(describe(p.q_value), true),
      td(p.flagged ? el("span", { class: "badge flag", text: t("flagged") }) : ""),
      td(el("a", { href: `#pair=${p.i}`, text: t("details") })))));
    more.textContent = t("show_all", shown.length);
    more.classList.toggle("hidden", shown.length <= limit);
  };
  filter.addEventListener("input", draw);
  more.addEventListener("click", () => { limit = Infinity; draw(); });
  root.append(box(t("ranked_pairs"), el("div", { class: "controls" }, filter),
    table([["#", 1], [t("pair")], [t("hands_together"), 1], [t("score"), 1], ["z", 1], ["p", 1], ["q", 1], [""], [""]], body), more));
  draw();
}

// --------------------------------------------------------------------------- validation overview

function renderValidation(root, v) {
  root.append(box(t("summary"), stat(t("hands"), String(v.hands)), stat(t("valid_hands"), String(v.valid_hands)),
    stat(t("problems"), String(v.n_problems), "problem-count")));
  if (v.by_code.length) {
    root.append(box(t("by_code"), table([[t("code")], [t("count"), 1], [t("meaning")]],
      v.by_code.map(([code, n, meaning]) => el("tr", {}, td(el("span", { class: "mono", text: code })), td(String(n), true), td(meaning))))));
  }
  const rows = v.problems.map((p) => el("tr", { dataset: { role: "problem-row" } },
    td(el("span", { class: "mono", text: `${p.file || "-"}:${p.line || 0}` })),
    td(p.hand_id == null ? "–" : handAnchor(p.h, p.step ?? p.action, p.hand_id)),
    td(p.action != null ? String(p.action + 1) : p.trick != null ? `${t("trick")}\u00a0${p.trick + 1}` : "–", true),
    td(p.seat == null ? "–" : el("span", {}, String(p.seat), p.player == null ? "" : " ", p.player == null ? "" : el("span", { text: p.player }))),
    td(el("span", { class: "mono", text: p.code })), td(el("span", { text: p.message }))));
  root.append(box(t("problems"), v.problems.length ? table(
    [[t("where")], [t("hand")], [t("action"), 1], [t("seat")], [t("code")], [t("message")]], rows)
    : el("p", { dataset: { role: "all-valid" }, text: t("all_valid") }),
    v.truncated ? el("p", { class: "muted", text: t("truncated", v.truncated) }) : null));
}

// --------------------------------------------------------------------------- routing

/* Each view draws into a node already in the document, so plots can measure their width. */
const ROUTES = {
  /* each game's view: HAND_VIEWS (set by the games' scripts, loaded first) by the hand's "view", else 憋七's */
  hand: (node, hand, i, params) => new ((typeof HAND_VIEWS !== "undefined" && HAND_VIEWS[hand.view]) || Replayer)(
    node, hand, params.has("step") ? Number(params.get("step")) : null,
    (k) => history.replaceState(null, "", `#hand=${i}&step=${k}`)),
  player: (node, p) => renderPlayer(node, p),
  pair: (node, p) => renderPair(node, p),
};

function route() {
  const detail = document.getElementById("detail");
  const params = new URLSearchParams(location.hash.slice(1));
  let kind = ["hand", "pair", "player"].find((k) => params.has(k) && stored(k, Number(params.get(k))));
  let i = kind ? Number(params.get(kind)) : null;
  const asked = kind != null;
  if (!asked && DATA.default_view) [kind, i] = DATA.default_view;
  ACTIVE = null;
  detail.replaceChildren();
  if (kind == null) return;
  const section = el("section", { class: "box", dataset: { role: "detail-" + kind } });
  if (asked && DATA.default_view?.[0] !== "hand") {
    section.append(el("a", { href: "#", dataset: { role: "back-overview" }, text: "← " + t("back_overview") }));
  }
  detail.append(section);
  ROUTES[kind](section, stored(kind, i), i, params);
  if (asked && DATA.page !== "hand") section.scrollIntoView();
}

function main() {
  const overview = document.getElementById("overview");
  if (DATA.page === "audit") renderAudit(overview, DATA.audit);
  else if (DATA.page === "validation") renderValidation(overview, DATA.validation);
  window.addEventListener("hashchange", route);
  route();
}

main();
