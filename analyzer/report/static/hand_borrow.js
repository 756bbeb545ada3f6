/* Hand view of the 借牌 table game: step k shows the position after k moves (the engine's snapshot
   hand.steps[k]) and the move about to be made (hand.moves[k]); borrows are drawn lender → borrower. */
"use strict";

class BorrowView extends GameStepper {
  build() {
    const h = this.hand;
    this.panels = [0, 1, 2, 3].map((s) => el("div", { class: `seat-panel pos${s}`, dataset: { role: "seat", seat: String(s) } }));
    this.tableDiv = el("div", { class: "table-rows", dataset: { role: "table" } });
    this.moveDiv = el("div", { class: "move-box", dataset: { role: "move" } });
    this.borrowsDiv = el("div", { class: "borrows", dataset: { role: "borrows" } });
    this.finalDiv = el("div", { dataset: { role: "final" } });
    this.movesDiv = el("div", { class: "moves", dataset: { role: "moves" } });
    this.felt = el("div", { class: "felt borrow-felt" }, this.panels, this.tableDiv);
    window.addEventListener("resize", () => { if (ACTIVE === this) this.drawArrow(); });
    const legend = el("div", { class: "game-legend muted", dataset: { role: "legend" } },
      gCard(h.joker, "small joker dead"), " " + t("bw_joker_dead") + " · ",
      el("span", { class: "card small live", text: "" }), " " + t("bw_legend_live") + " · ",
      el("span", { class: "card small illegal-live", text: "" }), " " + t("bw_legend_illegal") + " · ",
      el("span", { class: "legend-arrow", text: "→" }), " " + t("bw_legend_lend"));
    this.root.append(
      legend,
      this.felt,
      this.moveDiv, this.finalDiv,
      el("div", { class: "game-cols" },
        el("div", {}, el("h3", { text: t("bw_borrows") }), this.borrowsDiv),
        el("div", {}, el("h3", { text: t("bw_moves") }), this.movesDiv)));
  }

  /* "move N / M": the move about to be made, numbered as the move list numbers it (M counts the move the replay
     stopped at, if any); "end of the hand" after the last, as the standard game's replayer says. */
  stepText(k) {
    const total = this.hand.moves.length + (this.hand.attempted ? 1 : 0);
    return k < total ? t("move_of", k + 1, total) : t("moves_end", this.hand.moves.length);
  }

  /* The move from step k to k+1 (or the move the replay stopped at). */
  nextMove(k) {
    if (k < this.n) return this.hand.moves[k];
    return this.hand.attempted || null;
  }

  render() {
    const h = this.hand;
    const k = this.step;
    const st = h.steps[k];
    const live = new Set(st.live);
    const last = k > 0 ? h.moves[k - 1] : null;
    const next = this.nextMove(k);
    const illegalLive = new Set(next && next.live_held ? next.live_held : []);
    const done = k === this.n && h.outcome;
    for (let s = 0; s < 4; s++) {
      const p = this.panels[s];
      p.replaceChildren();
      p.classList.toggle("to-act", !done && st.turn === s);
      p.classList.toggle("lend-from", !!last && last.kind === "borrow" && last.lender === s);
      p.classList.toggle("lend-to", !!last && last.kind === "borrow" && last.seat === s);
      const tags = [];
      if (s === h.dealer) tags.push(t("bw_dealer14"));
      const place = st.finished.indexOf(s);
      if (place >= 0) tags.push(t("bw_finished", place + 1));
      if (done && h.outcome.loser === s) tags.push(t("bw_loser"));
      p.append(el("div", { class: "seat-head" }, gName(h.players[s], "player"),
        el("span", { class: "meta", text: ` · ${t("seat")} ${s} · ${st.hands[s].length} ${t("gv_cards")}` }),
        tags.map((x) => el("span", { class: "tag", dataset: { role: "tag" }, text: x }))));
      const cards = [...st.hands[s]].sort((a, b) => a - b);
      p.append(el("div", { class: "row", dataset: { role: "hand" } }, cards.map((c) => {
        const cls = ["small"];
        if (c >= 52) cls.push("joker", "dead");
        else if (live.has(c)) cls.push("live");
        if (illegalLive.has(c) && next.seat === s) cls.push("illegal-live");
        if (last && last.kind === "borrow" && last.seat === s && last.card === c) cls.push("last");
        const chip = gCard(c, cls.join(" "));
        if (c >= 52) chip.title = t("bw_joker_dead");
        return chip;
      })));
    }
    this.tableDiv.replaceChildren(...[0, 1, 2, 3].map((suit) => {
      const row = el("div", { class: "suit-row", dataset: { suit: String(suit) } }, el("span", { class: `label s${suit}`, text: SUITS[suit] }));
      const onTable = new Set(st.table);
      for (let r = 0; r < 13; r++) {
        const c = suit * 13 + r;
        const item = onTable.has(c) ? gCard(c, "up" + (last && last.kind === "play" && last.card === c ? " last" : ""))
          : el("span", { class: "slot" + (live.has(c) ? " live" : "") });
        row.append(r === 6 ? el("span", { class: "col7" }, item) : item);
      }
      return row;
    }));
    this.moveDiv.replaceChildren(...[
      last ? el("div", { dataset: { role: "last-move" } }, el("span", { class: "muted", text: t("bw_last_move") + ": " }), this.moveEl(last)) : null,
      next ? el("div", { dataset: { role: "next-move" } }, el("span", { class: "muted", text: t("bw_next_move") + ": " }), this.moveEl(next),
        next === h.attempted ? el("span", { class: "bad-note", text: " ✖ " + t("gv_attempted") }) : null) : null,
      !next && done ? el("div", { class: "muted", text: t("bw_hand_over") }) : null].filter((x) => x));
    this.drawArrow();
    this.renderBorrows(k);
    this.renderFinal(done ? h.outcome : null);
    this.movesDiv.replaceChildren(...this.strip(h.moves.length, 0, (i) => this.moveLabel(h.moves[i]),
      (i) => (h.moves[i].kind === "borrow" ? "borrow-chip" : "") + (h.moves[i].live_held ? " illegal" : ""),
      (i) => `${i + 1}. ${h.players[h.moves[i].seat]}`));
  }

  /* The last borrow drawn on the felt: an arrow from the lender's hand to the borrower's. */
  drawArrow() {
    this.felt.querySelectorAll(".lend-arrow").forEach((x) => x.remove());
    const m = this.step > 0 ? this.hand.moves[this.step - 1] : null;
    if (!m || m.kind !== "borrow") return;
    const box = this.felt.getBoundingClientRect();
    const centre = (s) => { const r = this.panels[s].getBoundingClientRect(); return [r.left + r.width / 2 - box.left, r.top + r.height / 2 - box.top]; };
    const [x1, y1] = centre(m.lender);
    const [x2, y2] = centre(m.seat);
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "lend-arrow" + (m.live_held ? " illegal" : ""));
    svg.setAttribute("width", String(box.width));
    svg.setAttribute("height", String(box.height));
    svg.dataset.role = "lend-arrow";
    svg.dataset.from = String(m.lender);
    svg.dataset.to = String(m.seat);
    const marker = document.createElementNS(ns, "marker");
    for (const [k, v] of Object.entries({ id: "lend-head", viewBox: "0 0 10 10", refX: "8", refY: "5", markerWidth: "5", markerHeight: "5", orient: "auto" })) marker.setAttribute(k, v);
    const head = document.createElementNS(ns, "path");
    head.setAttribute("d", "M0,0 L10,5 L0,10 z");
    marker.append(head);
    const defs = document.createElementNS(ns, "defs");
    defs.append(marker);
    const line = document.createElementNS(ns, "line");
    const shrink = 0.18;  // start and end inside the panels, not at their centres
    for (const [k, v] of Object.entries({ x1: x1 + (x2 - x1) * shrink, y1: y1 + (y2 - y1) * shrink, x2: x2 - (x2 - x1) * shrink, y2: y2 - (y2 - y1) * shrink })) line.setAttribute(k, String(v));
    line.setAttribute("marker-end", "url(#lend-head)");
    svg.append(defs, line);
    this.felt.append(svg);  // the lent card is ringed in the borrower's hand, not drawn over the table
  }

  moveLabel(m) {
    return m.kind === "borrow" ? `${m.lender}→${m.seat} ${gCardText(m.card)}` : `${m.seat}: ${gCardText(m.card)}`;
  }

  /* A move drawn: "lender → borrower [card]" for a borrow, "player plays [card]" otherwise. */
  moveEl(m) {
    const h = this.hand;
    if (m.kind === "borrow") {
      return el("span", { class: "lend" + (m.live_held ? " illegal" : ""), dataset: { role: "lend", from: String(m.lender), to: String(m.seat) } },
        gName(h.players[m.lender] ?? String(m.lender)), el("span", { class: "arrow", text: ` —${t("bw_lends")}→ ` }),
        gName(h.players[m.seat]), " ", gCode(m.card, m.code),
        m.live_held ? el("span", { class: "bad-note" }, " ✖ " + t("bw_illegal") + ": ", m.live_held.map((c) => gCard(c, "small"))) : null);
    }
    return el("span", {}, gName(h.players[m.seat]), ` ${t("bw_play")} `, gCode(m.card, m.code));
  }

  renderBorrows(k) {
    const h = this.hand;
    const rows = [];
    for (let i = 0; i < k; i++) {
      const m = h.moves[i];
      if (m.kind !== "borrow") continue;
      rows.push(el("div", { class: "borrow-row" + (m.live_held ? " illegal" : ""), dataset: { role: "borrow-row", step: String(i) } },
        el("a", { href: `#`, text: `${i + 1}.`, onclick: (ev) => { ev.preventDefault(); this.go(i); } }), " ", this.moveEl(m)));
    }
    this.borrowsDiv.replaceChildren(...(rows.length ? rows : [el("span", { class: "muted", text: t("bw_no_borrows") })]));
  }

  renderFinal(out) {
    this.finalDiv.replaceChildren();
    if (!out) return;
    const h = this.hand;
    const rows = out.ranking.map((s, place) => el("tr", { dataset: { role: "place", seat: String(s) } },
      td(String(place + 1), true), td(gName(h.players[s])), td(String(s), true),
      td(s === out.loser ? `${t("bw_loser")} · ${t("bw_next_dealer")}` : t("bw_finished", place + 1))));
    this.finalDiv.append(el("h3", { text: t("bw_result") }),
      el("div", { dataset: { role: "finish-order" } }, t("bw_finish_order") + ": ",
        out.finish_order.map((s, i) => el("span", { class: "tag", dataset: { seat: String(s) } }, `${i + 1}. `, gName(h.players[s])))),
      el("div", { dataset: { role: "loser", seat: String(out.loser) } }, t("bw_loser") + ": ", gName(h.players[out.loser]),
        " ", gCard(h.joker, "small joker dead"), ` → ${t("bw_next_dealer")}`),
      table([[t("place"), 1], [t("player")], [t("seat"), 1], [""]], rows));
  }

  problemExtra(p) {
    const m = p.step < this.hand.moves.length ? this.hand.moves[p.step] : null;
    if (p.code !== "borrow-with-live" || !m || !m.live_held) return null;
    return el("div", { dataset: { role: "live-held" } }, t("bw_live_held") + ": ", m.live_held.map((c) => gCard(c, "small illegal-live")));
  }
}

HAND_VIEWS.borrow = BorrowView;
