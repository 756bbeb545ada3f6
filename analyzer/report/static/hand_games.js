/* The hand views of the other games (借牌 table game, 信阳黑七): a shared stepper and card chips.
   Loaded before report.js: it only declares things, and uses report.js's helpers (el, t, td, table,
   ACTIVE, SUITS, RANKS) when a view is drawn. report.js routes a hand whose "view" is a key of
   HAND_VIEWS to that class. Every state shown is a snapshot the engine computed (hand.steps). */
"use strict";

const HAND_VIEWS = {};

function gCardText(c) {
  if (c === 52) return t("gv_joker_s");
  if (c === 53) return t("gv_joker_b");
  return RANKS[c % 13] + SUITS[Math.floor(c / 13)];
}
/* s0..s3 suits, sj0/sj1 small/big joker (colours in CSS). */
function gCard(c, cls = "") {
  const suit = c >= 52 ? "sj" + (c - 52) : "s" + Math.floor(c / 13);
  const ten = c < 52 && c % 13 === 9 ? " ten" : "";  // "10" is the one three-character label
  return el("span", { class: `card ${suit}${ten} ${cls}`, dataset: { card: String(c) }, text: gCardText(c) });
}
/* A log's id in its own bidi isolate: an RTL override in a name cannot reorder the text around it.
   Marked as data (data-raw): it is shown as it is in either language. */
function gName(s, role) { return el("bdi", { class: "name", dataset: role ? { role, raw: "1" } : { raw: "1" }, text: String(s), title: idTip(s) }); }
/* A problem message in the reader's language when report.js can translate it, else as logged. */
function gMessage(p) {
  return typeof trEl === "function" ? trEl(p.message, p.code) : el("span", { text: p.message });
}
/* A card code from the log that may name no card: shown as the text it is. */
function gCode(card, code) {
  return card == null ? el("span", { class: "mono bad-code", dataset: { raw: "1" }, text: String(code) }) : gCard(card, "small");
}

class GameStepper {
  constructor(root, hand, step, onStep) {
    this.hand = hand;
    this.n = hand.steps.length - 1;
    this.onStep = onStep;
    this.root = el("div", { class: `replayer game game-${hand.view}`, dataset: { role: "replayer", view: hand.view } });
    root.append(this.root);
    const title = el("h2", {}, t("hand") + " ", el("bdi", { class: "mono", dataset: { role: "hand-id", raw: "1" }, text: hand.id, title: idTip(hand.id) }));
    if (hand.table != null) {
      title.append(el("span", { class: "muted small-meta" }, " · " + t("table") + " ",
        el("bdi", { class: "mono", dataset: { role: "table-id", raw: "1" }, text: hand.table, title: idTip(hand.table) })));
    }
    this.stepLabel = el("span", { dataset: { role: "step" } });
    this.controls = el("div", { class: "controls" },
      stepButton("first", t("aria_first"), () => this.go(0)), stepButton("back", t("aria_back"), () => this.go(this.step - 1)),
      stepButton("forward", t("aria_forward"), () => this.go(this.step + 1)), stepButton("last", t("aria_last"), () => this.go(this.n)),
      this.stepLabel);
    this.problemsDiv = el("div", { dataset: { role: "problems" } });
    this.root.append(title, this.controls, this.problemsDiv);
    this.build();
    ACTIVE = this;  // report.js's arrow keys, Home and End drive the active view
    this.go(step == null ? this.firstProblemStep() : step);
  }

  firstProblemStep() {
    const steps = (this.hand.problems || []).map((p) => p.step).filter((s) => s != null);
    return steps.length ? Math.min(...steps) : 0;
  }

  go(k) {
    this.step = Math.max(0, Math.min(this.n, k | 0));
    this.stepLabel.textContent = this.stepText(this.step);
    this.problemsDiv.replaceChildren(...(this.hand.problems || []).filter((p) => p.step === this.step)
      .map((p) => this.problemBanner(p)));
    this.render();
    if (this.onStep) this.onStep(this.step);
  }

  /* The counter above the table: each game names its own steps (a move, a trick), as its lists number them. */
  stepText(k) { return t("step_of", k, this.n); }

  problemBanner(p) {
    return el("div", { class: "problem-banner", dataset: { role: "problem", code: p.code } },
      p.seat == null ? "" : el("span", {}, gName(this.hand.players[p.seat] ?? String(p.seat)), ` (${t("seat")} ${p.seat}): `),
      el("span", { class: "mono", dataset: { raw: "1" }, text: `[${p.code}]` }), " ", gMessage(p), this.problemExtra(p));
  }

  problemExtra() { return null; }

  /* Step chips (clicked, or Tab then Enter / Space); ``label(i)`` their text, ``cls(i)`` extra classes. */
  strip(count, offset, label, cls, title) {
    const problemSteps = new Set((this.hand.problems || []).map((p) => p.step));
    const chips = [];
    for (let i = 0; i < count; i++) {
      const k = i + offset;
      chips.push(stepChip({ class: `move ${cls(i)} ${k === this.step ? "current" : ""} ${problemSteps.has(k) ? "problem" : ""}`,
        title: title ? title(i) : null, "aria-current": k === this.step ? "step" : null, dataset: { step: String(k) } },
      () => this.go(k), label(i)));
    }
    return chips;
  }
}
