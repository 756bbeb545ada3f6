/* The report pages' one script: reads the embedded JSON, draws with DOM text nodes only (log data
   is untrusted, so never innerHTML), builds sections lazily when a link (a #hash) asks for them. */
"use strict";

const DATA = JSON.parse(document.getElementById("report-data").textContent);
const I18N = DATA.i18n;
const LANG_KEY = "bieqi-report-lang";
const SUITS = "♠♥♦♣";
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const COVER = 52;
/* The audit's default alarm (analyzer.audit.calibrate.DEFAULT_ALPHA), whose false-alarm rate the tiers' help states. */
const DEFAULT_ALPHA = 1e-5;

/* A dictionary's own entry for a key that comes from the data (an id, a code, a stored language):
   never one of Object.prototype's members ("constructor", "toString", "__proto__" ...). */
function own(obj, key) { return obj != null && Object.prototype.hasOwnProperty.call(obj, key); }
function lookup(obj, key) { return own(obj, key) ? obj[key] : undefined; }

/* The reader's language: the one chosen last in any report page (kept in localStorage), else the
   page's default. file:// pages may refuse storage; the switch then works for this visit only. */
function savedLang() {
  try { const v = localStorage.getItem(LANG_KEY); return own(I18N.labels, v) ? v : null; } catch (e) { return null; }
}
let LANG = savedLang() || DATA.lang;
let L = I18N.labels[LANG];

/* A label with its {0}, {1} ... filled in one pass over the template: a value holding "{1}" (an id) is
   shown as written, never filled in again. */
function t(key, ...args) {
  const s = own(L, key) ? L[key] : key;
  return args.length ? s.replace(/\{(\d+)\}/g, (m, i) => (i < args.length ? String(args[i]) : m)) : s;
}

/* An id inside a sentence: one longer than 80 characters is cut in the middle ("abc…xyz"), so a sentence
   stays a sentence; sentence() keeps the whole text as the element's tooltip. */
const ID_MAX = 80;
function shortId(x) {
  if (typeof x !== "string") return x;
  const cps = Array.from(x);  // whole characters: never half of a surrogate pair
  return cps.length > ID_MAX ? cps.slice(0, 60).join("") + "…" + cps.slice(-16).join("") : x;
}
function sentence(tag, props, key, ...args) {
  const shown = t(key, ...args.map(shortId));
  const full = t(key, ...args);
  return el(tag, { ...props, text: shown, title: shown !== full ? full : null });
}

/* A data key (signal, evidence column, enumerated value) in the reader's language, or null. */
function keyLabel(k) {
  const pair = lookup(I18N.keys, k);
  return pair ? pair[LANG === "zh" ? 1 : 0] : null;
}

/* Problem messages and decision reasons come in English; in Chinese they go through the phrase
   table of i18n.json (the same rules as analyzer/report/i18n.py). Unknown parts are left out,
   a message with nothing known shows its code's meaning; the original stays in the tooltip. */
const PHRASES = I18N.phrases.map(([pattern, zh]) => {
  for (const [name, value] of Object.entries(I18N.macros)) pattern = pattern.split(name).join(value);
  return [new RegExp(pattern, "u"), zh];
});
/* Card codes as logs write them (TH, AC) as the pages show cards (10♥, A♣). */
function prettyCards(text) {
  return text.replace(/\b(10|[2-9AJQKT])([SHDC])\b/g, (m, r, s) => (r === "T" ? "10" : r) + SUITS["SHDC".indexOf(s)]);
}
function translatePart(part) {
  for (const [rx, zh] of PHRASES) {
    const m = part.match(rx);
    if (!m) continue;
    // one pass over the pattern's text: a group (an id) holding "{2}" or "none" is shown as it is
    return zh.replace(/\{(\d+)\}|none/g, (x, n) => {
      if (n == null) return I18N.words.none;
      const g = m[Number(n)];
      return g == null ? "" : prettyCards(lookup(I18N.words, g) ?? g);
    });
  }
  return null;
}
const ALLOWED_ASCII = new Set(I18N.allowed_ascii);
function englishWords(text) {
  const stripped = String(text).replace(/\$[\w.\[\]-]*|'[^']*'|"[^"]*"|`[^`]*`|\b[\w.]+\.\w+\b/g, " ");
  return (stripped.match(/[A-Za-z][A-Za-z_'-]*[A-Za-z]/g) || []).filter((w) => !ALLOWED_ASCII.has(w));
}
function translate(text, code) {
  if (LANG !== "zh" || text == null || text === "") return text;
  const whole = translatePart(String(text).trim());
  const parts = whole != null ? [whole] : String(text).split(";").map((p) => p.trim()).filter((p) => p).map(translatePart);
  const known = parts.filter((p) => p != null);
  const out = known.join("；");
  if (code != null && (!known.length || englishWords(out).length)) return codeMeaning(code);
  // say that something was left out: the original is the tooltip
  return known.length < parts.length ? out + t(known.length ? "untranslated_rest" : "untranslated_all") : out;
}
function codeMeaning(code) {
  return lookup(LANG === "zh" ? I18N.codes_zh : I18N.codes_en, code) ?? "";
}
/* A translated text with its original as the tooltip. */
function trEl(text, code, props = {}) {
  const shown = translate(text, code);
  return el("span", { ...props, text: shown, title: shown !== text ? text : null });
}
/* A decision's reasons: translated in Chinese; in English the card codes the rows carry (8C) as cards (8♣), as the
   rest of the reasons and the pages write them. */
function reasonEl(text, props = {}) {
  if (LANG === "zh") return trEl(text, null, props);
  const shown = prettyCards(String(text ?? ""));
  return el("span", { ...props, text: shown, title: shown !== text ? text : null });
}
/* Data shown as it is (ids, codes, unknown keys): marked so tests and readers know it is not prose. */
function raw(text, cls = "") { return el("span", { class: ("raw " + cls).trim(), dataset: { raw: "1" }, text: String(text), title: idTip(text) }); }
/* An id long enough to be cut on screen (CSS clamps ids to a few lines) has itself as its tooltip. */
function idTip(text) { return String(text).length > 16 ? String(text) : null; }

/* A chip that opens a step (a move, a trick): clicked, or reached with Tab and opened with Enter or Space.
   The step redraws the chips; the keyboard's focus goes on to the new chip of the same step. */
function stepChip(props, open, ...kids) {
  const node = el("span", { ...props, tabindex: "0", role: "button" }, ...kids);
  const run = () => {
    const root = node.closest("[data-role=replayer]") || document;
    const focused = document.activeElement === node;
    open();
    if (focused && !node.isConnected && node.dataset.step != null) {
      const again = root.querySelector(`[role=button][data-step="${node.dataset.step}"]`);
      if (again) again.focus();
    }
  };
  node.addEventListener("click", run);
  node.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    ev.preventDefault();
    run();
  });
  return node;
}
/* A step button: its glyph on screen, its name (and key) for screen readers and as the tooltip. */
function stepButton(role, name, fn) {
  return el("button", { type: "button", title: name, "aria-label": name, dataset: { role }, onclick: fn }, t(role));
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

/* A link to an embedded hand at a move; ``extra`` carries who to mark: {suspect: [a, b]} (the pair
   under audit, ringed in the seat boxes) or {focus: id} (deviation jumps go to this player's). */
function handHash(i, action, extra = {}) {
  const q = new URLSearchParams();
  q.set("hand", String(i));
  if (action != null) q.set("step", String(action));
  for (const s of extra.suspect || []) q.append("suspect", String(s));
  if (extra.focus != null) q.set("focus", String(extra.focus));
  if (extra.partner != null) q.set("partner", String(extra.partner));  // an evidence row's: whose cards to mark
  return "#" + q.toString();
}
function handAnchor(i, action, text, extra) {
  if (i == null) return el("span", { class: "mono raw", dataset: { raw: "1" }, text, title: t("hand_not_embedded") });
  return el("a", { href: handHash(i, action, extra), class: "mono raw", dataset: { raw: "1" }, text, title: idTip(text) });
}
function handLink(handId, action, extra) { return handAnchor(HAND_INDEX.get(handId), action, String(handId), extra); }
function playerLink(id) {
  const i = PLAYER_INDEX.get(id);
  if (i === undefined || !document.getElementById(`s-player-${i}`)) return raw(id);
  return el("a", { href: `#player=${i}`, class: "raw", dataset: { raw: "1" }, text: String(id), title: idTip(id) });
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

/* The suspicion score on a log(1 + score) axis labelled in scores, when the scores span more than a decade: one pair at
   450 would otherwise flatten the room, the alarm (5) and the review tier onto the axis' floor. Linear otherwise. */
function scoreAxis(scores) {
  const top = Math.max(1, ...scores.filter((v) => Number.isFinite(v)));
  if (top <= 20) return { y: (v) => v, layout: { rangemode: "tozero" } };
  const ticks = [];
  for (let d = 1; d <= top * 10; d *= 10) for (const m of [1, 2, 5]) if (m * d <= top * 1.05) ticks.push(m * d);
  return { y: (v) => Math.log10(1 + Math.max(0, v)),
           layout: { tickvals: [0, ...ticks].map((v) => Math.log10(1 + v)), ticktext: ["0", ...ticks.map(String)],
                     range: [-0.05, Math.log10(1 + top) * 1.05] } };
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
  return Object.entries(v).map(([k, x]) => `${keyLabel(k) ?? k}: ${describe(x)}`).join("; ");
}

const CARD_CODE = /^(10|[2-9AJQKT])([SHDC])$/;
/* The same as nodes: known keys and values in the reader's language, card codes as cards, reasons
   translated, anything else (ids, unknown keys) shown as it is, marked as data. */
function describeNode(v, key) {
  if (v == null) return "–";
  if (typeof v === "number" || typeof v === "boolean") return describe(v);
  if (typeof v === "string") {
    if (CARD_CODE.test(v)) return prettyCards(v);
    if (key === "reasons") return reasonEl(v);
    const known = keyLabel(v);
    return known != null && key !== "player" && key !== "actor" && key !== "partner" ? known : raw(v);
  }
  if (Array.isArray(v)) return el("span", {}, v.flatMap((x, i) => (i ? [", ", describeNode(x, key)] : [describeNode(x, key)])));
  return el("span", {}, Object.entries(v).flatMap(([k, x], i) => [i ? "; " : "", keyLabel(k) ?? raw(k), ": ", describeNode(x, k)]));
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
  if (own(moves, ev.key)) ACTIVE.go(ACTIVE.step + moves[ev.key]);
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
  /* marks: {suspect: [ids], focus: id} from the link that opened the hand (or the page's data). */
  constructor(root, hand, step, onStep, marks = {}) {
    this.hand = hand;
    this.n = hand.actions.length;
    this.threshold = DATA.threshold;
    this.onStep = onStep;
    this.decisions = hand.decisions || {};
    this.suspects = new Set((marks.suspect || []).map(String));
    this.focus = marks.focus != null && hand.players.includes(marks.focus) ? marks.focus : null;
    // an evidence row's partner: the cards each move of the other suspect freed or blocked for them are marked
    this.partner = marks.partner != null && hand.players.map(String).includes(String(marks.partner)) ? String(marks.partner) : null;
    this.seatOf = (i) => (hand.first + i) % 4;  // strict rotation: move i+1 is made by this seat
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
    const title = el("h2", {}, t("hand") + " ", el("span", { class: "mono raw", dataset: { role: "hand-id", raw: "1" }, text: h.id, title: idTip(h.id) }));
    const meta = el("div", { class: "muted" });
    if (h.table != null) meta.append(t("table") + " ", el("span", { class: "mono raw", dataset: { role: "table-id", raw: "1" }, text: h.table, title: idTip(h.table) }));
    this.stepLabel = el("span", { dataset: { role: "step" } });
    this.reveal = el("input", { type: "checkbox", dataset: { role: "reveal" }, onchange: () => this.render() });
    this.onlyBig = el("input", { type: "checkbox", dataset: { role: "only-big" }, onchange: () => this.render() });
    this.thresholdInput = el("input", { type: "number", min: "0", step: "0.5", value: String(this.threshold), style: "width:5em",
      dataset: { role: "threshold" }, onchange: () => { this.threshold = Number(this.thresholdInput.value) || 0; this.render(); } });
    const controls = el("div", { class: "controls" },
      stepButton("first", t("aria_first"), () => this.go(0)), stepButton("back", t("aria_back"), () => this.go(this.step - 1)),
      stepButton("forward", t("aria_forward"), () => this.go(this.step + 1)), stepButton("last", t("aria_last"), () => this.go(this.n)),
      this.stepLabel,
      el("label", {}, this.reveal, t("reveal_covered")),
      el("label", {}, this.onlyBig, t("only_big")), this.thresholdInput, t("points"),
      stepButton("prev_dev", t("aria_prev_dev"), () => this.jumpDeviation(-1)),
      stepButton("next_dev", t("aria_next_dev"), () => this.jumpDeviation(1)),
      this.focus == null ? null : el("span", { class: "muted", dataset: { role: "focus" } },
        ...t("only_player", "\u0000").split("\u0000").flatMap((x, i) => (i ? [raw(this.focus), x] : [x]))));
    this.panels = [0, 1, 2, 3].map((s) => el("div", { class: `seat-panel pos${s}`, dataset: { role: "seat", seat: String(s) } }));
    this.tableDiv = el("div", { class: "table-rows", dataset: { role: "table" } });
    this.problemsDiv = el("div", { dataset: { role: "problems" } });
    this.decisionDiv = el("div", { class: "decision", dataset: { role: "decision" } });
    this.movesDiv = el("div", { dataset: { role: "moves" } });
    this.finalDiv = el("div", { dataset: { role: "final" } });
    const general = (h.problems || []).filter((p) => p.action == null);
    if (this.suspects.size) {
      const shown = t("suspected_pair", [...this.suspects].map(shortId).join(" & "));
      const full = t("suspected_pair", [...this.suspects].join(" & "));
      meta.append(" · ", el("span", { class: "suspect-note", dataset: { role: "suspect-pair" }, text: shown, title: shown !== full ? full : null }));
    }
    this.root.append(title, meta, el("div", {}, general.map((p) => this.problemBanner(p))), controls,
      el("div", { class: "felt" }, this.panels, this.tableDiv), this.legend(), this.problemsDiv, this.decisionDiv,
      this.finalDiv, el("h3", { text: t("moves") }), this.movesDiv);
  }

  legend() {
    const item = (sample, key) => el("span", { class: "legend-item" }, sample, t(key));
    const chip = (cls, key) => item(el("span", { class: "move " + cls, text: "7♠" }), key);
    return el("div", { class: "legend", dataset: { role: "legend" } }, el("b", { text: t("legend") + ": " }),
      item(el("span", { class: "card small live s0", text: "8♠" }), "lg_live"),
      item(el("span", { class: "slot live mini" }), "lg_live_slot"),
      item(el("span", { class: "card small last s1", text: "6♥" }), "lg_last"),
      item(el("span", { class: "card small back" }), "lg_back"),
      item(el("span", { class: "swatch to-act" }), "lg_to_act"),
      this.suspects.size ? item(el("span", { class: "swatch suspect" }), "lg_suspect") : null,
      this.partner != null ? item(el("span", { class: "card small freed s0", text: "9♠" }), "lg_freed") : null,
      this.partner != null ? item(el("span", { class: "card small blocked s0", text: "5♠" }), "lg_blocked") : null,
      el("span", { class: "legend-item" }, t("lg_chip")),
      chip("best", "lg_best"), chip("dev-small", "lg_small"), chip("dev-mid", "lg_mid"), chip("dev-big", "lg_big"),
      chip("problem", "lg_problem"));
  }

  go(k) {
    this.step = Math.max(0, Math.min(this.n, k | 0));
    this.render();
    if (this.onStep) this.onStep(this.step);
  }

  isBig(i) {
    const d = this.decisions[i];
    if (this.focus != null && this.hand.players[this.seatOf(i)] !== this.focus) return false;
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
    this.stepLabel.textContent = k < this.n ? t("move_of", k + 1, this.n) : t("moves_end", this.n);
    const marks = this.cardMarks(k);
    const reveal = this.reveal.checked;
    const out = k === this.n && h.outcome ? h.outcome : null;
    for (let s = 0; s < 4; s++) {
      const p = this.panels[s];
      p.replaceChildren();
      p.classList.toggle("to-act", (k < this.n || !h.outcome) && st.turn === s);
      const suspect = this.suspects.has(String(h.players[s]));
      p.classList.toggle("suspect", suspect);
      const cards = [...st.hands[s]].sort((a, b) => a - b);
      const pts = st.covered[s].reduce((acc, c) => acc + (c % 13) + 1, 0);
      const tags = [];
      if (out && out.tong.includes(s)) tags.push(out.dutou.includes(s) ? t("dutou") : t("tong"));
      p.append(el("div", { class: "seat-head" },
        el("span", { class: "name raw", dataset: { role: "player", raw: "1" }, text: h.players[s], title: String(h.players[s]) }),
        suspect ? el("span", { class: "badge flag", dataset: { role: "suspect" }, text: t("suspect") }) : null,
        el("span", { class: "meta", text: ` · ${t("seat")} ${s}` + (tags.length ? " · " + tags.join(" ") : "") })));
      p.append(el("div", { class: "row", dataset: { role: "hand" } },
        cards.map((c) => cardEl(c, "small" + (st.live.has(c) ? " live" : "") + (marks.seat === s && marks.freed.has(c) ? " freed"
          : marks.seat === s && marks.blocked.has(c) ? " blocked" : "")))));
      const cov = st.covered[s].map((c) => reveal
        ? cardEl(c, "small revealed" + (last === c + COVER ? " last" : ""))
        : el("span", { class: "card small back" + (last === c + COVER ? " last" : ""), title: t("covered") }));
      p.append(el("div", { class: "row", dataset: { role: "covered" } },
        el("span", { class: "meta" }, `${t("covered")}: ${st.covered[s].length} · ${t("cover_points")} `,
          el("b", { dataset: { role: "cover-points" }, text: String(pts) }), " "), cov));
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
      el("span", { class: "mono raw", dataset: { raw: "1" }, text: `[${p.code}]` }), " ", trEl(p.message, p.code));
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
    div.append(el("h3", {}, t("to_act") + ": ", raw(this.hand.players[seat]), ` (${t("seat")} ${seat}) → `,
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
        [0, 1, 2, 3].filter((s) => s !== seat).map((s) => el("span", {}, raw(this.hand.players[s]), ` ${signed(d.delta[s], 2)}  `))));
    }
    const partnerSeat = this.partnerSeat(seat);
    if (d.imm && partnerSeat != null) {  // the evidence row's figure: partner's cards minus each opponent's, exact
      const others = [0, 1, 2, 3].filter((s) => s !== seat && s !== partnerSeat);
      const e = d.imm[partnerSeat] - others.reduce((acc, s) => acc + (d.imm[s] || 0), 0) / others.length;
      div.append(el("div", { dataset: { role: "move-edge" } }, sentence("span", {}, "ev_move_edge", this.hand.players[seat],
        this.hand.players[partnerSeat], signed(e, 2))));
    }
    if (d.reasons) div.append(reasonEl(d.reasons, { class: "muted block", dataset: { role: "reasons" } }));
  }

  /* The partner's seat when the seat to act is the other suspect of an evidence link, else null. */
  partnerSeat(seat) {
    if (this.partner == null) return null;
    const p = this.hand.players.map(String).indexOf(this.partner);
    return p < 0 || p === seat || !this.suspects.has(String(this.hand.players[seat])) ? null : p;
  }

  /* The partner's cards the move at step k made live (a play: "freed") or unplayable for the rest of the hand (a
     cover: "blocked"), exactly as the card edge counts them, when the mover is the other suspect of an evidence link. */
  cardMarks(k) {
    const none = { seat: null, freed: new Set(), blocked: new Set() };
    const d = this.decisions[k];
    if (k >= this.n || !d || !d.touched) return none;
    const seat = this.seatOf(k);
    const p = this.partnerSeat(seat);
    if (p == null) return none;
    const held = new Set(stateAt(this.hand, k).hands[p]);
    const mine = d.touched.filter((c) => held.has(c));
    const cover = this.hand.actions[k] >= COVER;
    return { seat: p, freed: new Set(cover ? [] : mine), blocked: new Set(cover ? mine : []) };
  }

  renderFinal(out) {
    this.finalDiv.replaceChildren();
    if (!out) return;
    const h = this.hand;
    const rows = [0, 1, 2, 3].map((s) => el("tr", {}, td(String(s)), td(raw(h.players[s])),
      td(String(out.points[s]), true),
      td(el("span", { dataset: { role: "multiplier" }, text: multiplierText(out, s) }), true),
      td(String(out.final_points[s]), true), td(signed(out.scores[s], 0), true), td(String(out.ranking.indexOf(s) + 1), true)));
    this.finalDiv.append(el("h3", { text: t("final_scores") }),
      el("div", { dataset: { role: "explain" }, text: explainOutcome(out) }),
      table([[t("seat")], [t("player")], [t("raw_points"), 1], [t("multiplier"), 1], [t("final_points"), 1], [t("score"), 1], [t("place"), 1]], rows));
  }

  /* The move list as a grid: one column per seat in turn order, one row per round, so the player
     who made each move is its column's head. */
  renderMoves() {
    const onlyBig = this.onlyBig.checked;
    const problemAt = new Set((this.hand.problems || []).map((p) => p.action));
    const order = [0, 1, 2, 3].map((j) => this.seatOf(j));
    const rows = [];
    for (let r = 0; r * 4 < this.n; r++) {
      rows.push(el("tr", {}, el("th", { class: "num muted", text: String(r + 1) }), [0, 1, 2, 3].map((j) => {
        const i = r * 4 + j;
        if (i >= this.n) return el("td");
        const a = this.hand.actions[i];
        const d = this.decisions[i];
        const cls = deviationClass(d, this.threshold);
        const s = this.seatOf(i);
        if (onlyBig && !this.isBig(i) && !problemAt.has(i)) return el("td");
        const focusOff = this.focus != null && this.hand.players[s] !== this.focus;
        const tip = `${t("move_n", i + 1)} · ${this.hand.players[s]}: ${actionText(a)}` + (d && d.regret != null ? ` · ${t("regret")} ${fmt(d.regret, 2)}` : "");
        return el("td", {}, stepChip({ class: `move ${cls} ${i === this.step ? "current" : ""} ${problemAt.has(i) ? "problem" : ""} ${focusOff ? "faint" : ""}`,
          title: tip, "aria-current": i === this.step ? "step" : null, dataset: { step: String(i), seat: String(s) } }, () => this.go(i), `${i + 1}. ${actionText(a)}`));
      })));
    }
    if (problemAt.has(this.n)) rows.push(el("tr", {}, el("th"), el("td", {}, stepChip({ class: "move problem", dataset: { step: String(this.n) } }, () => this.go(this.n), "✖"))));
    const head = el("tr", {}, el("th", { text: "#" }), order.map((s) => el("th", { dataset: { seat: String(s) } },
      raw(this.hand.players[s]), el("span", { class: "muted", text: ` (${t("seat")} ${s})` }))));
    this.movesDiv.replaceChildren(el("table", { class: "grid moves-grid" }, el("thead", {}, head), el("tbody", {}, rows)));
  }
}

/* "×16 = tong ×2 × lone seven ×8": a seat's multiplier and the factors it is made of. */
function multiplierText(out, s) {
  const m = "×" + out.multipliers[s];
  const f = out.factors && out.factors[s];
  if (!f || !f.length) return m;
  const words = f.map(([kind, factor, detail]) => (kind === "tong" ? `${t("tong_" + detail)} ×${factor}`
    : kind === "dutou" ? (detail > 1 ? `${detail} × ` : "") + t("factor_dutou", factor) : t("factor_doubling", detail)));
  return f.length === 1 && f[0][0] !== "doubling" ? `${m} = ${words[0]}` : `${m} = ${words.join(" × ")}`;
}

function explainOutcome(out) {
  const parts = [];
  const n = out.tong.length;
  if (n) parts.push(`${t("tong_" + n)} (${t("seat")} ${out.tong.join(", ")})`);
  if (out.dutou.length) parts.push(`${out.dutou.length} × ${t("dutou")} (${t("seat")} ${out.dutou.join(", ")})`);
  const others = [0, 1, 2, 3].filter((s) => !out.tong.includes(s));
  const texts = [...new Set(others.map((s) => multiplierText(out, s)))];
  const head = parts.length ? parts.join("; ") : t("no_tong");
  return texts.length && others.some((s) => out.multipliers[s] !== 1) ? `${head}: ${t("factor_others", texts.join(" / "))}` : head;
}

// --------------------------------------------------------------------------- player section

function renderPlayer(root, p) {
  root.append(el("h2", {}, t("player") + " ", el("span", { class: "raw", dataset: { role: "player-id", raw: "1" }, text: p.player, title: idTip(p.player) })));
  root.append(box(t("summary"),
    stat(t("skill"), p.skill == null ? "–" : `${fmt(p.skill, 2)} (${fmt(p.skill_lo, 2)}–${fmt(p.skill_hi, 2)})`, "skill"),
    stat(t("decisions"), String(p.decisions)), stat(t("hands"), String(p.hands)),
    stat(t("match_rate"), pct(p.match_rate), "match-rate"),
    stat(t("signal_p"), p.signal_p == null ? "–" : `${fmt(p.signal_p, 4)}${p.signal_flag ? " ⚑" : ""}`, "signal"),
    stat(t("mean_regret"), `${fmt(p.mean_regret, 2)} ± ${fmt(p.regret_se, 2)}`),
    stat(t("dd_regret"), fmt(p.mean_dd_regret, 2)),
    stat(t("room_mean_regret"), fmt(p.room.mean_regret, 2)),
    stat(t("room_percentile"), pct(p.room.percentile)),
    p.signal_p == null ? el("p", { class: "muted", dataset: { role: "signal-unread" }, text: t("signal_unread") })
      : p.signal_flag ? null : el("p", { class: "muted", dataset: { role: "signal-note" }, text: t("signal_note") })));
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
    p.worst.map((w) => el("tr", {}, td(handLink(w.hand_id, w.action, { focus: p.player })), td(String(w.action + 1), true),
      td(actionText(w.chosen)), td(actionText(w.best)), td(fmt(w.regret, 2), true), td(reasonEl(w.reasons || "", { dataset: { role: "reasons" } })))))));
}

// --------------------------------------------------------------------------- pair section (the case file)

/* Rows for renderSignalRows from an audit entry without a case (a clear pair below the top of the
   ranking): each signal and direction with its z, and the signal's p over both directions. */
function entrySignalRows(signals, a, b) {
  return Object.entries(signals || {}).flatMap(([k, v]) => (v.ab || v.ba
    ? ["ab", "ba"].filter((d) => v[d]).map((d) => ({ signal: k, actor: v[d].actor, partner: v[d].partner, z: v[d].z, p: v.p }))
    : [{ signal: k, actor: a, partner: b, z: v.z, p: v.p }]));
}

function verdictOf(e) { return e.verdict || null; }
function verdictBadge(v) {
  if (!v) return null;
  return el("span", { class: "badge " + (lookup({ flagged: "flag", review: "review", clear: "ok" }, v) || ""), dataset: { role: "verdict" }, text: t("verdict_" + v + "_short") });
}
/* A p- or q-value for people; one that underflowed to 0 reads from its log10 (the audit keeps both in log space):
   1.2e-452, as the command line and the verdict sentence write it. */
function pValue(p, log10p) {
  if (p == null) return "–";
  if (p < 1e-300) {
    if (typeof log10p !== "number" || !isFinite(log10p)) return "< 1e-300";
    let e = Math.floor(log10p), m = Number(Math.pow(10, log10p - e).toPrecision(2));
    if (m >= 10) { m /= 10; e += 1; }
    return m + "e" + e;
  }
  return p < 0.001 ? Number(p).toExponential(1) : fmt(p, 3);
}
function unitText(u) { return u ? t("unit_" + u) : ""; }

/* The case file's opening: the sentence of the signal that fired, then why the verdict. */
function renderLead(root, c) {
  root.append(box(t("case"),
    sentence("p", { class: "lead", dataset: { role: "lead" } }, c.lead.key, ...c.lead.args),
    c.verdict ? sentence("p", { dataset: { role: "verdict-line" } }, c.verdict.key, ...c.verdict.args) : null,
    c.detail ? sentence("p", { class: "muted", dataset: { role: "lead-detail" } }, c.detail.key, ...c.detail.args) : null));
}

function renderOutcomes(root, o) {
  const sc = (m, se) => m == null ? "–" : signed(m, 1) + (se == null ? "" : ` ± ${fmt(se, 1)}`);
  const rows = [
    el("tr", { dataset: { role: "outcome-score" } }, td(t("pair_score_per_hand")), td(sc(o.score_together, o.score_together_se), true),
      td(sc(o.score_apart, o.score_apart_se), true), td(sc(o.typical, o.typical_sd), true)),
    el("tr", { dataset: { role: "outcome-tong" } }, td(t("tong_rate")), td(pct(o.tong_together), true), td(pct(o.tong_apart), true),
      td(pct(o.tong_room), true)),
  ];
  root.append(box(t("outcomes"), el("p", { class: "muted", text: t("outcomes_help", o.hands_together, o.hands_apart) }),
    el("div", { dataset: { role: "outcomes" } },
      table([[""], [t("together"), 1], [t("apart"), 1], [t("typical_pair"), 1]], rows))));
}

function renderSignalRows(root, rows) {
  root.append(box(t("signals"), table(
    [[t("signal")], [t("direction")], [t("effect_per_hand"), 1], ["z", 1], ["p", 1], [t("meaning")]],
    rows.map((r) => el("tr", { dataset: { role: "signal-row", signal: r.signal } },
      td(el("span", { text: t("sig_" + r.signal) })),
      td(direction(r.actor, r.signal === "codev" ? "↔" : "→", r.partner)),
      td(r.per_hand == null ? "–" : (r.unit === "hands" ? `${fmt(r.per_hand, 0)} / ${fmt(r.se, 1)} ${t("expected_short")}`
        : r.unit === "ratio" ? `×${fmt(r.per_hand, 2)}` : `${signed(r.per_hand, 2)} ± ${fmt(r.se, 2)} ${unitText(r.unit)}`), true),
      td(fmt(r.z, 2), true), td(pValue(r.p), true), td(el("span", { class: "muted", text: t("meaning_" + r.signal) })))))));
}

/* "actor → partner" as data: each id cut in the middle when long, the whole text the tooltip. */
function direction(a, arrow, b, role) {
  const full = `${a} ${arrow} ${b}`;
  const span = raw(`${shortId(String(a))} ${arrow} ${shortId(String(b))}`);
  if (idTip(full)) span.title = full;
  if (role) span.dataset.role = role;
  return span;
}

function renderGlossary(root) {
  root.append(box(t("glossary"), el("dl", { dataset: { role: "glossary" } },
    ["score", "z", "p", "q", "flagged", "review"].flatMap((k) => [el("dt", { text: t("gl_term_" + k) }), el("dd", { text: t("gl_" + k) })]))));
}

/* The pair's raw per-hand favour (report.pair.pair_edge: the one source of these figures on every page). Without
   an audit entry it says it is no verdict. */
function renderEdge(root, p) {
  const [a, b] = p.players;
  const shows = (p.edge || []).some((e) => [e.imm, e.dd].some((m) => m && m.z != null && m.z >= 2));
  const note = p.entry ? el("p", { class: "muted", text: t("edge_help_case") })
    : shows ? el("p", { class: "notice", dataset: { role: "not-evidence" }, text: t("edge_not_calibrated") })
      : sentence("p", { class: "notice", dataset: { role: "not-evidence" } }, "edge_no_sign", a, b);
  root.append(box(t(p.entry ? "edge_title_case" : "edge_title"), note,
    table([[t("direction")], [t("edge_exact"), 1], [t("edge_true_deal"), 1]],
      (p.edge || []).map((e) => el("tr", { dataset: { role: "edge-row" } }, td(direction(e.actor, "→", e.partner)),
        td(edgeText(e.imm, !p.entry), true), td(edgeText(e.dd, !p.entry), true))))));
}
/* "+0.63 ± 0.10" (and the pair's own z, on a page without the audit's calibrated signals). */
function edgeText(m, z) {
  return m ? `${signed(m.per_hand, 2)} ± ${fmt(m.se, 2)}` + (z ? ` (z ${fmt(m.z, 1)})` : "") : "–";
}

/* A link that opens the replayer at an evidence row's move, the partner's cards it freed or blocked marked. */
function evidenceLink(x, text, a, b) {
  const i = HAND_INDEX.get(x.hand_id);
  if (i == null) return handAnchor(null, null, text);
  return el("a", { href: handHash(i, x.action, { suspect: [a, b], partner: x.partner }), class: "mono raw",
    dataset: { raw: "1", role: "evidence-link" }, text, title: idTip(text) });
}

/* burst's extreme hands: every hand its count counts, each with the actor's moves in it that carried the favour;
   a table a direction, under the direction's count. */
function renderBurstHands(root, p, c) {
  const [a, b] = p.players;
  const moves = new Map();
  for (const x of p.evidence || []) {
    const k = x.actor + "\u0000" + x.hand_id;
    if (!moves.has(k)) moves.set(k, []);
    moves.get(k).push(x);
  }
  const ways = (c.burst_directions || []).map((w) => el("div", { dataset: { role: "burst-direction", actor: String(w.actor) } },
    sentence("p", {}, "burst_direction", w.actor, w.partner, w.above, w.hands, fmt(100 * w.level, 0), fmt(w.expected, 1),
      fmt(w.expected_sd, 1), w.listed, w.with_moves ?? w.listed),
    table([["#", 1], [t("hand")], [t("hand_favour"), 1], [t("moves_in_hand")]],
      (w.extreme || []).map(([id, favour], i) => ({ actor: w.actor, partner: w.partner, hand_id: id, favour, rank: i + 1 })).map((h) =>
        el("tr", { dataset: { role: "burst-hand", hand: String(h.hand_id) } },
        td(String(h.rank), true),
        td(evidenceLink({ hand_id: h.hand_id, action: ((moves.get(h.actor + "\u0000" + h.hand_id) || [])[0] || {}).action ?? null,
          partner: h.partner }, String(h.hand_id), a, b)),
        td(fmt(h.favour, 2), true),
        td(el("span", {}, ...(moves.get(h.actor + "\u0000" + h.hand_id) || []).flatMap((x, j) => [j ? " · " : "",
          evidenceLink(x, `${t("move_n", x.action + 1)} ${prettyCards(String(x.chosen ?? ""))}`, a, b),
          el("span", { class: "muted", dataset: { role: "edge" }, text: ` ${signed(x.edge_immediate, 2)} ${t("unit_cards")}` })]))))))));
  root.append(box(t("burst_hands"), el("p", { class: "muted", text: t("burst_hands_help") }), ...ways));
}

function renderEvidence(root, p) {
  const ev = p.evidence || [];
  const [a, b] = p.players;
  const c = (p.entry || {}).case || {};
  if (c.burst_directions) { renderBurstHands(root, p, c); return; }
  if (ev.length && ev.every((x) => x.edge != null)) {
    const cards = (ev[0].rank_by || "edge_immediate") === "edge_immediate";
    const eff = (x) => (cards ? x.effect_immediate : x.effect_true_deal) || {};
    const unit = cards ? t("unit_cards") : t("unit_points");
    root.append(box(t("evidence"), el("p", { class: "muted", text: t(cards ? "evidence_help_cards" : "evidence_help_points") }), table(
      [[t("hand")], [t("action"), 1], [t("direction")], [t("chosen")], [t("sensible")], [t("regret"), 1],
       [`${t("ev_partner")} (${unit})`, 1], [`${t("ev_opponents")} (${unit})`, 1], [t(cards ? "edge_cards" : "edge"), 1]],
      ev.map((x) => el("tr", { dataset: { role: "evidence" } }, td(evidenceLink(x, String(x.hand_id), a, b)),
        td(String(x.action + 1), true), td(x.direction ? el("span", { dataset: { role: "direction", raw: "1" }, text: x.direction, title: idTip(x.direction) })
          : direction(x.actor, "->", x.partner, "direction")),
        td(el("span", { text: prettyCards(String(x.chosen ?? "")) })), td(el("span", { text: prettyCards(String(x.alternative ?? "")) })), td(fmt(x.regret, 2), true),
        td(signed(eff(x).partner, 2), true), td((eff(x).others || []).map((v) => signed(v, 2)).join(" / "), true),
        td(el("b", { dataset: { role: "edge" }, text: signed(cards ? x.edge_immediate : x.edge, 2) }), true))))));
    return;
  }
  const known = new Set(["hand_id", "action"]);
  const extra = [...new Set(ev.flatMap((x) => Object.keys(x)))].filter((k) => !known.has(k));
  root.append(box(t("evidence"), ev.length ? table([[t("hand")], [t("action"), 1], ...extra.map((k) => [keyLabel(k) ?? k])],
    ev.map((x) => el("tr", { dataset: { role: "evidence" } }, td(handLink(x.hand_id, x.action, { suspect: [a, b] })),
      td(x.action == null ? "–" : String(x.action + 1), true), extra.map((k) => td(describeNode(x[k], k))))))
    : el("p", { class: "muted", text: t("no_evidence") })));
}

function renderPair(root, p) {
  const e = p.entry || {};
  const [a, b] = p.players;
  root.append(el("h2", {}, t("pair") + " ", playerLink(a), " & ", playerLink(b), " ", verdictBadge(verdictOf(e))));
  if (e.case) renderLead(root, e.case);
  root.append(box(t("summary"), stat(t("hands_together"), String(p.hands_together)),
    stat(t("suspicion"), fmt(e.score, 2)), stat("z", fmt(e.z, 2)), stat("p", pValue(e.p_value, e.log10_p)), stat("q", pValue(e.q_value, e.log10_q)),
    e.hands_to_alarm != null && verdictOf(e) !== "flagged" ? stat(t("hands_to_alarm"), String(e.hands_to_alarm), "hands-to-alarm") : null));
  const outcomes = e.case && e.case.outcomes ? e.case.outcomes : p.outcomes;  // the audit's, else these logs' (the same)
  if (outcomes) renderOutcomes(root, outcomes);
  if (p.edge) renderEdge(root, p);
  if (p.table) {
    const roles = [raw(a), raw(b), t("others_each")];
    const cells = p.table.cells;
    const maxAbs = Math.max(1e-9, ...cells.flat().filter((c) => c).map((c) => Math.abs(c.per_hand)));
    const rows = cells.map((row, i) => el("tr", {}, el("th", {}, roles[i]), row.map((c, j) => {
      if (!c) return el("td", { class: "cell muted", text: "–" });
      const x = c.per_hand / maxAbs;
      const color = x >= 0 ? `rgba(46,125,50,${Math.abs(x) * 0.6})` : `rgba(198,40,40,${Math.abs(x) * 0.6})`;
      return el("td", { class: "cell", style: `background:${color}`, dataset: { role: "heat-cell", from: String(i), to: String(j) },
        title: `${t("total")}: ${signed(c.sum, 1)} · ${t("per_decision")}: ${signed(c.mean, 3)} ± ${fmt(c.se, 3)} · n=${c.n}` },
        signed(c.per_hand, 2), el("div", { class: "muted", text: `± ${fmt(c.se_per_hand, 2)}` }));
    })));
    root.append(box(t("collusion_table"), el("p", { class: "muted", text: t(lookup({ imm: "collusion_help_imm", dd_delta: "collusion_help_dd" }, p.table.measure) || "collusion_help") }),
      el("table", { class: "grid heat", dataset: { role: "heatmap" } },
        el("thead", {}, el("tr", {}, el("th", { text: t("actor_recipient") }), roles.map((r) => el("th", {}, typeof r === "string" ? r : r.cloneNode(true))))),
        el("tbody", {}, rows))));
  }
  if (e.case && e.case.signals) renderSignalRows(root, e.case.signals);
  else if (e.signals) renderSignalRows(root, entrySignalRows(e.signals, a, b));
  renderEvidence(root, p);
  if (p.entry) renderGlossary(root);
}

// --------------------------------------------------------------------------- audit overview

/* Ids that look like an earlier hand's once normalised (audit.json's lookalike_ids): warnings, the hands kept. */
/* The valid hands the pair audit did not read (games without decision rows), by game; null when none. */
function skippedLine(skipped) {
  const games = Object.entries(skipped || {}).filter(([, n]) => n > 0);
  if (!games.length) return null;
  return el("p", { class: "muted", dataset: { role: "skipped-hands" },
    text: t("skipped_hands", games.map(([g, n]) => `${g}: ${n} ${t("hands")}`).join(", ")) });
}

function lookalikesBox(looks) {
  const rows = looks.shown.map((p) => el("tr", { dataset: { role: "lookalike-row" } },
    whereCell(p), td(p.hand_id == null ? "–" : raw(p.hand_id)),
    seatCell(p),
    td(trEl(p.message, p.code))));
  return box(t("lookalikes"), el("p", { class: "muted", text: t("lookalikes_help", looks.count) }),
    table([[t("where")], [t("hand")], [t("seat")], [t("message")]], rows));
}

/* Three or more players joined by marked pairs (audit.json's groups): each group's members, how often they sat
   together, and every pair among them (clear ones too), each linked to its pair section. */
function groupsBox(groups) {
  const rows = groups.map((g) => el("tr", { class: g.verdict === "flagged" ? "flagged" : "review", dataset: { role: "group-row" } },
    td(el("span", {}, ...g.players.flatMap((x, k) => (k ? [" + ", playerLink(x)] : [playerLink(x)])))),
    td(verdictBadge(g.verdict) || ""),
    td(`${g.marked_pairs} / ${g.pairs.length}`, true),
    td(g.hands_all == null ? "–" : String(g.hands_all), true), td(String(g.hands_two_or_more), true),
    td(el("span", {}, ...g.pairs.flatMap((p, k) => {
      const name = p.players.join(" & ");
      const link = p.i == null ? raw(name) : el("a", { href: `#pair=${p.i}`, class: "raw", dataset: { raw: "1", role: "group-pair" }, text: name });
      return [...(k ? ["; "] : []), link, " ", verdictBadge(p.verdict) || "", ` ${fmt(p.score, 1)}`];
    })))));
  return box(t("groups"), el("p", { class: "muted", text: t("groups_help") }),
    table([[t("players")], [""], [t("marked_pairs"), 1], [t("hands_all"), 1], [t("hands_two_or_more"), 1], [t("pairs")]], rows));
}

/* The other games' findings (the page data's audit.games, analyzer/report/findings.py): 借牌's illegal borrows by
   player and its lending table; for a game validated only, what was checked and the problems found. */
const GAME_NAMES = { "bieqi-borrow": "借牌", "xinyang-heiqi": "信阳黑七" };
function gameName(g) { return !GAME_NAMES[g] ? g : LANG === "zh" ? GAME_NAMES[g] : `${GAME_NAMES[g]} (${g})`; }

function borrowBox(g, alarm) {
  const cheats = g.players.filter((p) => p.illegal_borrows > 0);
  const lead = el("p", { dataset: { role: "borrow-found" }, class: cheats.length ? "flagged" : "muted",
    text: cheats.length ? t("borrow_found", g.illegal_borrows, cheats.length) : t("borrow_none") });
  const players = table([[t("player")], [t("hands"), 1], [t("col_borrows"), 1], [t("col_illegal"), 1],
    [t("col_hands_illegal"), 1], [t("col_first_illegal")]],
    g.players.map((p) => el("tr", { class: p.illegal_borrows > 0 ? "flagged" : "", dataset: { role: "borrow-player-row" } },
      td(raw(p.player)), td(String(p.hands), true), td(String(p.borrows), true), td(String(p.illegal_borrows), true),
      td(String(p.hands_with_illegal), true), td(p.first_illegal ? raw(p.first_illegal, "mono") : "–"))));
  // each lending pair's verdict on the pair audit's terms (audit.json's verdict, p and q), as its case records it
  const lending = g.pairs.length ? table([[t("pair")], [""], [t("col_lends_partner"), 1], [t("col_good_partner"), 1],
    [t("col_lends_others"), 1], [t("col_good_others"), 1], [t("col_favour"), 1], ["p", 1], ["q", 1]],
    g.pairs.map((p) => el("tr", { class: lookup({ flagged: "flagged", review: "review" }, p.verdict) || "",
      dataset: { role: "lending-row", verdict: p.verdict || "" } },
      td(el("span", {}, raw(p.a), " & ", raw(p.b))), td(verdictBadge(p.verdict) || ""),
      td(String(p.lends_to_partner), true), td(fmt(p.goodness_to_partner, 2), true),
      td(String(p.lends_to_others), true), td(fmt(p.goodness_to_others, 2), true), td(signed(p.favour, 2), true),
      td(pValue(p.p_value, p.p_value !== 0 && typeof p.score === "number" ? -p.score : null), true), td(pValue(p.q_value), true))))
    : el("p", { class: "muted", text: t("no_lends") });
  const tiers = g.pairs.length ? el("p", { dataset: { role: "lending-found" }, class: g.lending_flagged ? "flagged" : "",
    text: t("lending_found", g.pairs.length, g.lending_flagged || 0, g.lending_review || 0,
      alarm && typeof alarm.alpha === "number" ? Number(alarm.alpha.toPrecision(2)) : "–", alarm ? alarm.fdr : "–") }) : null;
  return el("div", { dataset: { role: "game-borrow" } }, box(t("game_borrow", g.hands), lead,
    el("h3", { text: t("illegal_by_player") }), players,
    el("h3", { text: t("lending_table") }), tiers, el("p", { class: "muted", text: t("lending_help") }), lending));
}

function validatedBox(g) {
  const problems = g.problems == null ? null : g.problems.length
    ? table([[t("code")], [t("count"), 1], [t("meaning")]], g.problems.map(([code, n]) => el("tr", { dataset: { role: "game-problem-row" } },
      td(raw(code, "mono")), td(String(n), true), td(codeMeaning(code)))))
    : el("p", { class: "muted", text: t("validated_clean") });
  return el("div", { dataset: { role: "game-validated" } }, box(t("game_validated", gameName(g.game), g.hands),
    el("p", { dataset: { role: "validated-help" }, text: t("validated_help") }),
    problems && el("h3", { text: t("validated_problems") }), problems));
}

/* The tiers' help: the measured false-alarm rate is the default alarm's (1e-5); a laxer one is said as the chance it
   allows. */
function tiersHelp(alarm) {
  const alpha = alarm && typeof alarm.alpha === "number" ? alarm.alpha : null;
  if (alpha === null || alpha <= DEFAULT_ALPHA) return t("tiers_help");
  return t("tiers_help_alpha", Number(alpha.toPrecision(2)), alarm.fdr);
}

/* The nightly look's ledger (audit.json's nightly): the days it holds, the window read and how its verdicts read. */
function nightlyBox(nightly) {
  const w = nightly.window || {};
  const rows = nightly.days.map((d) => el("tr", { dataset: { role: "nightly-day" } },
    td(String(d.day), true), td(d.date ? raw(d.date, "mono") : "–"), td(String(d.hands), true),
    td(String((d.parts || []).length), true)));
  return el("div", { dataset: { role: "nightly" } }, box(t("nightly_days"),
    w.first_day != null ? el("p", { dataset: { role: "nightly-window" }, text: t("nightly_window", w.first_day, w.last_day) }) : null,
    el("p", { class: "muted", dataset: { role: "nightly-help" },
      text: t("nightly_help", typeof nightly.e_threshold === "number" ? Number(nightly.e_threshold.toPrecision(3)) : "–",
        typeof nightly.fdr === "number" ? nightly.fdr : "–") }),
    table([[t("col_day"), 1], [t("col_date")], [t("hands"), 1], [t("col_parts"), 1]], rows)));
}

function renderAudit(root, audit) {
  const pairs = audit.pairs;
  const nightly = !!audit.nightly;  // the nightly look's pairs carry their e-values
  const flagged = pairs.filter((p) => p.flagged);
  if (audit.hands === 0 && audit.games && audit.games.length) {  // no standard hand: the other games' findings only
    root.append(el("p", { class: "muted", dataset: { role: "pair-audit-empty" }, text: t("pair_audit_empty") }));
    for (const g of audit.games) root.append(g.kind === "borrow" ? borrowBox(g, audit.alarm) : validatedBox(g));
    if (audit.lookalikes) root.append(lookalikesBox(audit.lookalikes));
    return;
  }
  root.append(box(t("summary"), stat(t("hands"), String(audit.hands)), stat(t("players"), String(audit.players.length)),
    stat(t("pairs"), String(pairs.length)), stat(t("flagged"), String(flagged.length), "flagged-count"),
    stat(t("verdict_review_short"), String(pairs.filter((p) => p.verdict === "review").length), "review-count")),
    el("p", { class: "muted", dataset: { role: "tiers-help" }, text: tiersHelp(audit.alarm) }));
  const skipped = skippedLine(audit.skipped_hands);
  if (skipped) root.append(skipped);
  if (audit.lookalikes) root.append(lookalikesBox(audit.lookalikes));
  if (audit.nightly) root.append(nightlyBox(audit.nightly));
  if (audit.groups && audit.groups.length) root.append(groupsBox(audit.groups));
  for (const g of audit.games || []) root.append(g.kind === "borrow" ? borrowBox(g, audit.alarm) : validatedBox(g));
  const chart = el("div", { class: "plot", dataset: { role: "plot-audit" } });
  const hover = el("div", { class: "muted", dataset: { role: "hover", raw: "1" } });
  // the nightly look plots each pair's largest e-value (log10) with the alarm at 1/alpha; the one-off audit its score
  const value = nightly ? (p) => p.max_log10_e : (p) => p.score;
  const alarmAt = nightly ? (typeof audit.nightly.e_threshold === "number" ? Math.log10(audit.nightly.e_threshold) : null)
    : audit.alarm ? audit.alarm.score : null;
  const yTitle = nightly ? t("col_max_log10_e") : t("suspicion");
  root.append(box(nightly ? t("e_vs_hands") : t("score_vs_hands"), chart, hover,
    alarmAt !== null ? null : el("p", { class: "muted", text: t("no_alarm") })));
  const axis = scoreAxis([...pairs.map(value), alarmAt !== null ? alarmAt : 0]);
  const trace = (list, name, color) => ({ type: "scatter", mode: "markers", name, x: list.map((p) => p.hands_together),
    y: list.map((p) => axis.y(value(p))), customdata: list.map((p) => p.i), marker: { color, size: 7, opacity: 0.75 },
    text: list.map((p) => `${plotText(p.players.join(" & "))}<br>${p.hands_together} · ${fmt(value(p), 2)}`),
    hovertemplate: "%{text}<extra></extra>" });
  const traces = [trace(pairs.filter((p) => !p.flagged), t("not_flagged"), "#78909c"), trace(flagged, t("flagged"), "#c62828")];
  const xs = pairs.map((p) => p.hands_together);
  if (alarmAt !== null) {
    const y = axis.y(alarmAt);
    traces.push({ x: [0, Math.max(1, ...xs)], y: [y, y], mode: "lines", name: t("alarm"), line: { color: "#c62828", dash: "dash" }, hoverinfo: "skip" });
  }
  plot(chart, traces, { xaxis: { title: { text: t("hands_together") } }, yaxis: Object.assign({ title: { text: yTitle } }, axis.layout) }).then((gd) => {
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
    body.replaceChildren(...shown.slice(0, limit).map((p, r) => el("tr", { class: p.flagged ? "flagged" : p.verdict === "review" ? "review" : "", dataset: { role: "pair-row" } },
      td(String(r + 1), true), td(el("span", {}, playerLink(p.players[0]), " & ", playerLink(p.players[1]))),
      td(String(p.hands_together), true), td(fmt(p.score, 2), true), td(fmt(p.z, 2), true),
      td(pValue(p.p_value, p.log10_p), true), td(pValue(p.q_value, p.log10_q), true),
      ...(nightly ? [td(fmt(p.log10_e, 2), true), td(fmt(p.max_log10_e, 2), true),
        td(p.flagged_day ? String(p.flagged_day) : "–", true)] : []),
      td(verdictBadge(verdictOf(p)) || ""),
      td(el("a", { href: `#pair=${p.i}`, text: t("details") })))));
    more.textContent = t("show_all", shown.length);
    more.classList.toggle("hidden", shown.length <= limit);
  };
  filter.addEventListener("input", draw);
  more.addEventListener("click", () => { limit = Infinity; draw(); });
  root.append(box(t("ranked_pairs"), el("div", { class: "controls" }, filter),
    table([["#", 1], [t("pair")], [t("hands_together"), 1], [t("suspicion"), 1], ["z", 1], ["p", 1], ["q", 1],
      ...(nightly ? [[t("col_log10_e"), 1], [t("col_max_log10_e"), 1], [t("col_flagged_day"), 1]] : []), [""], [""]], body), more));
  draw();
}

// --------------------------------------------------------------------------- validation overview

/* A problem's place (file:line) and seat (with its player), as the validation page and the audit's lookalikes show them. */
function whereCell(p) { return td(raw(`${p.file || "-"}:${p.line || 0}`, "mono")); }
function seatCell(p) {
  return td(p.seat == null ? "–" : el("span", {}, String(p.seat), p.player == null ? "" : " ", p.player == null ? "" : raw(p.player)));
}

function renderValidation(root, v) {
  root.append(box(t("summary"), stat(t("hands"), String(v.hands)), stat(t("valid_hands"), String(v.valid_hands)),
    stat(t("problems"), String(v.n_problems), "problem-count")));
  if (v.by_code.length) {
    root.append(box(t("by_code"), table([[t("code")], [t("count"), 1], [t("meaning")]],
      v.by_code.map(([code, n]) => el("tr", {}, td(raw(code, "mono")), td(String(n), true), td(codeMeaning(code)))))));
  }
  const rows = v.problems.map((p) => el("tr", { dataset: { role: "problem-row" } },
    whereCell(p),
    td(p.hand_id == null ? "–" : handAnchor(p.h, p.step ?? p.action, p.hand_id)),
    td(p.action != null ? String(p.action + 1) : p.trick != null ? `${t("trick")}\u00a0${p.trick + 1}` : "–", true),
    seatCell(p),
    td(raw(p.code, "mono")), td(trEl(p.message, p.code))));
  root.append(box(t("problems"), v.problems.length ? table(
    [[t("where")], [t("hand")], [t("action"), 1], [t("seat")], [t("code")], [t("message")]], rows)
    : el("p", { dataset: { role: "all-valid" }, text: t("all_valid") }),
    v.truncated ? el("p", { class: "muted", text: t("truncated", v.truncated) }) : null));
}

// --------------------------------------------------------------------------- routing

/* Each view draws into a node already in the document, so plots can measure their width. */
const ROUTES = {
  /* each game's view: HAND_VIEWS (set by the games' scripts, loaded first) by the hand's "view", else 憋七's */
  hand: (node, hand, i, params) => {
    // the pair or player the link came from (or the page is about) stays in the URL as the reader steps
    const suspect = params.getAll("suspect").length ? params.getAll("suspect") : (DATA.suspects || []);
    const focus = params.get("focus") ?? DATA.focus ?? null;
    const View = (typeof HAND_VIEWS !== "undefined" && lookup(HAND_VIEWS, hand.view)) || Replayer;
    return new View(node, hand, params.has("step") ? Number(params.get("step")) : null,
      (k) => history.replaceState(null, "", handHash(i, k, { suspect: params.getAll("suspect"), focus: params.get("focus"),
        partner: params.get("partner") })),
      { suspect, focus, partner: params.get("partner") });
  },
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

/* The language switch: both label sets are in the page, so switching redraws in place. */
function drawShell() {
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  document.title = t("title_" + DATA.page);
  document.getElementById("page-title").textContent = t("title_" + DATA.page);
  const sw = document.getElementById("lang-switch");
  sw.replaceChildren(el("span", { class: "muted", text: t("language") + ": " }), ...["zh", "en"].map((l) => el("button", {
    type: "button", class: l === LANG ? "on" : "", lang: l === "zh" ? "zh-CN" : "en", dataset: { role: "lang", lang: l },
    "aria-pressed": String(l === LANG), onclick: () => setLang(l) }, I18N.labels[l]["lang_" + l])));
}

function setLang(lang) {
  if (!own(I18N.labels, lang) || lang === LANG) return;
  LANG = lang;
  L = I18N.labels[lang];
  try { localStorage.setItem(LANG_KEY, lang); } catch (e) { /* storage refused: this visit only */ }
  draw();
}

function draw() {
  drawShell();
  const overview = document.getElementById("overview");
  overview.replaceChildren();
  if (DATA.page === "audit") renderAudit(overview, DATA.audit);
  else if (DATA.page === "validation") renderValidation(overview, DATA.validation);
  route();
}

function main() {
  window.addEventListener("hashchange", route);
  // another page switched language: follow it when this one is shown again
  window.addEventListener("storage", (ev) => { if (ev.key === LANG_KEY && ev.newValue) setLang(ev.newValue); });
  draw();
}

main();
