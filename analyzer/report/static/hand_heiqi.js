/* Hand view of 信阳黑七: step 0 is the auction, the bottom and trump; step k is trick k with the hands as
   they were before it (hand.steps[k], the engine's snapshot). Cards are grouped by the effective suit and
   sorted by the rank level the engine gave them (hand.suit, hand.level): the page knows no rules. */
"use strict";

const HQ_GROUPS = [4, 0, 1, 2, 3];  // trumps first, then the plain suits

class HeiqiView extends GameStepper {
  build() {
    const h = this.hand;
    this.infoDiv = el("div", { class: "hq-info", dataset: { role: "auction" } });
    this.summaryDiv = el("div", { class: "hq-summary", dataset: { role: "trick-summary" } });
    this.seatsDiv = el("div", { class: "hq-seats", dataset: { role: "seats" } });
    this.finalDiv = el("div", { class: "hq-final", dataset: { role: "final" } });
    this.tricksDiv = el("div", { class: "moves", dataset: { role: "tricks" } });
    this.root.append(this.infoDiv, this.summaryDiv, this.seatsDiv, this.finalDiv,
      el("div", { class: "hq-strip" }, el("span", { class: "muted", text: t("hq_tricks") + ": " }), this.tricksDiv));
    this.renderInfo();
  }

  isDealer(s) { return s === this.hand.dealer; }

  /* Step 0 is the auction; step k trick k of the tricks played, as the strip below numbers them. */
  stepText(k) { return k === 0 ? t("hq_auction") : t("hq_trick_of", k, this.n); }

  sortCards(cards) {
    const h = this.hand;
    return [...cards].sort((a, b) => HQ_GROUPS.indexOf(h.suit[a]) - HQ_GROUPS.indexOf(h.suit[b]) || h.level[b] - h.level[a] || a - b);
  }

  /* Chips in groups by effective suit; ``mark`` gives extra classes per card (a multiset: one class per copy). */
  groups(cards, mark) {
    const h = this.hand;
    const out = [];
    for (const g of HQ_GROUPS) {
      const mine = this.sortCards(cards.filter((c) => h.suit[c] === g));
      if (!mine.length) continue;
      out.push(el("span", { class: "hq-group", dataset: { group: String(g) } },
        el("span", { class: `hq-glabel s${g}`, text: g === 4 ? (h.trump == null ? t("hq_jokers") : t("hq_trumps")) : SUITS[g] }),
        mine.map((c) => gCard(c, "chip " + (mark ? mark(c) : "")))));
    }
    return out;
  }

  /* At the start of play the dealer's row shows the 33 cards held after taking the bottom, the 8 buried dashed. */
  buriedMark() {
    const buried = [...this.hand.buried];
    return (c) => { const i = buried.indexOf(c); if (i < 0) return ""; buried.splice(i, 1); return "buried"; };
  }

  renderInfo() {
    const h = this.hand;
    const bids = h.bids.map((b) => el("span", { class: "hq-bid" + (b.ok ? "" : " illegal"), dataset: { role: "bid", seat: String(b.seat) } },
      gName(h.players[b.seat]), " ", el("b", { text: b.bid == null ? t("hq_pass") : String(b.bid) }),
      b.ok ? null : el("span", { class: "bad-note", text: " ✖ " + t("hq_bid_bad") })));
    const lines = [
      el("div", {}, el("span", { class: "muted", text: `${t("hq_auction")} (${t("hq_first_bidder")}: ` }),
        gName(h.players[h.first_bidder]), el("span", { class: "muted", text: "): " }), bids),
      el("div", {},
        h.dealer == null ? el("b", { dataset: { role: "dealer" }, text: h.outcome ? t("hq_passed_out") : t("hq_no_dealer") })
          : el("span", { dataset: { role: "dealer", seat: String(h.dealer) } }, `${t("gv_dealer")}: `, gName(h.players[h.dealer]),
            ` · ${t("hq_contract")} `, el("b", { dataset: { role: "contract" }, text: String(h.contract) })),
        h.trump == null ? null : el("span", { dataset: { role: "trump" } }, ` · ${t("hq_trump")} `,
          el("b", { class: `s${h.trump}`, text: SUITS[h.trump] }))),
      el("div", { class: "hq-bottom" },
        el("span", { dataset: { role: "bottom" } }, el("span", { class: "muted", text: t("hq_bottom") + ": " }),
          this.sortCards(h.bottom).map((c) => gCard(c, "chip"))),
        h.buried ? el("span", { dataset: { role: "buried" } }, el("span", { class: "muted", text: " → " + t("hq_buried") + ": " }),
          this.sortCards(h.buried).map((c) => gCard(c, "chip" + (h.points[c] ? " pts" : "")))) : null),
    ];
    this.infoDiv.replaceChildren(...lines);
  }

  render() {
    const h = this.hand;
    const k = this.step;
    const st = h.steps[k];
    const trick = k > 0 ? st : null;
    const done = k === this.n && h.outcome;
    const playOf = new Map();  // seat -> its play in this trick
    if (trick) trick.seats.forEach((s, i) => playOf.set(s, trick.plays[i]));
    const attempted = trick && trick.attempted;
    const rows = [0, 1, 2, 3].map((s) => {
      const played = [...(playOf.get(s) || [])];
      const mark = (c) => { const i = played.indexOf(c); if (i < 0) return ""; played.splice(i, 1); return "played"; };
      const role = this.isDealer(s) ? t("gv_dealer") : h.dealer == null ? "" : t("hq_defender");
      const isLeader = trick && trick.leader === s;
      const isWinner = trick && trick.winner === s;
      const play = playOf.get(s);
      const att = attempted && attempted.seat === s ? attempted : null;
      return el("div", { class: "hq-seat" + (this.isDealer(s) ? " dealer" : "") + (trick && trick.leader === s ? " leader" : ""), dataset: { role: "seat", seat: String(s) } },
        el("div", { class: "hq-who" }, gName(h.players[s], "player"),
          el("div", { class: "meta" }, `${t("seat")} ${s}` + (role ? ` · ${role}` : "") + ` · ${st.hands[s].length} ${t("gv_cards")}` +
            (k === 0 && this.isDealer(s) && h.buried ? ` (+${h.buried.length} ${t("hq_buried")})` : ""))),
        el("div", { class: "hq-hand", dataset: { role: "hand" } }, k === 0 && this.isDealer(s) && h.taken && h.buried
          ? this.groups(h.taken, this.buriedMark()) : this.groups(st.hands[s], mark)),
        el("div", { class: "hq-play" + (isWinner ? " winner" : ""), dataset: { role: "play", seat: String(s) } },
          isLeader ? el("span", { class: "tag", text: t("hq_leader") }) : null,
          play ? this.sortCards(play).map((c) => gCard(c, "chip up" + (h.points[c] ? " pts" : ""))) : null,
          att ? el("span", { class: "bad-note", dataset: { role: "attempted" } }, att.cards ? this.sortCards(att.cards).map((c) => gCard(c, "chip bad"))
            : att.codes.map((x) => el("span", { class: "mono bad-code", dataset: { raw: "1" }, text: String(x) + " " })), " ✖") : null,
          isWinner ? el("span", { class: "tag win", dataset: { role: "trick-winner" }, text: "★ " + t("hq_winner") }) : null));
    });
    this.seatsDiv.replaceChildren(...rows);
    this.renderSummary(k, trick);
    this.renderFinal(done ? h.outcome : null);
    const tricks = h.steps.slice(1);
    this.tricksDiv.replaceChildren(...this.strip(tricks.length, 1, (i) => {
      const tr = tricks[i];
      return `${i + 1}` + (tr.captured ? ` +${tr.captured}` : "");
    }, (i) => (tricks[i].winner == null ? "" : this.isDealer(tricks[i].winner) ? "hq-dealer-won" : "hq-def-won"),
    (i) => (tricks[i].winner == null ? "" : `${t("hq_winner")}: ${h.players[tricks[i].winner]}`)));
    this.tricksDiv.prepend(...this.strip(1, 0, () => t("hq_auction"), () => "", null));
  }

  renderSummary(k, trick) {
    const h = this.hand;
    const parts = [];
    if (!trick) {
      parts.push(el("b", { text: t("gv_start") + " · " + t("hq_auction") }));
      if (h.buried) parts.push(el("span", { class: "muted", text: " · " + t("hq_after_bury") }));
    } else {
      parts.push(el("b", { dataset: { role: "trick-no" }, text: t("hq_trick_of", trick.trick + 1, this.n) }), " · ",
        gName(h.players[trick.leader]), ` ${t("hq_leader")}`);
      if (trick.winner != null) {
        parts.push(" · ", el("span", { dataset: { role: "winner", seat: String(trick.winner) } }, gName(h.players[trick.winner]), ` ${t("hq_winner")}`),
          ` · ${t("hq_trick_points")} `, el("b", { dataset: { role: "trick-points" }, text: String(trick.points) }),
          " ", el("span", { class: trick.captured ? "good" : "muted", text: trick.points ? (trick.captured ? t("hq_captured") : t("hq_kept")) : "" }));
      }
    }
    const pts = [...h.steps.slice(0, k + 1)].reverse().find((s) => s.defender_points != null);
    parts.push(el("span", { class: "hq-running" }, `${t("hq_defender_points")}: `,
      el("b", { dataset: { role: "defender-points" }, text: String(pts ? pts.defender_points : 0) }),
      h.contract == null ? "" : ` / ${h.contract}`));
    this.summaryDiv.replaceChildren(...parts);
  }

  renderFinal(out) {
    this.finalDiv.replaceChildren();
    if (!out) return;
    const h = this.hand;
    if (out.outcome == null) {
      this.finalDiv.append(el("b", { dataset: { role: "outcome" }, text: t("hq_passed_out") }));
      return;
    }
    const kou = out.bottom_factor > 0
      ? el("div", { dataset: { role: "kou", factor: String(out.bottom_factor) } }, `${t("hq_kou")}: ${t("hq_last_lead")} ${t("hq_lead_" + out.last_lead_kind)} → ${t("hq_factor")} `,
        el("b", { text: "×" + out.bottom_factor }), ` · ${t("hq_bottom_points")} ${out.bottom_points} × ${out.bottom_factor} = ${out.bottom_points * out.bottom_factor}`)
      : el("div", { dataset: { role: "kou", factor: "0" } }, t("hq_no_kou"), ` (${t("hq_bottom_points")} ${out.bottom_points})`);
    const rows = [0, 1, 2, 3].map((s) => el("tr", { dataset: { role: "settle", seat: String(s) } },
      td(String(s), true), td(gName(h.players[s])), td(this.isDealer(s) ? t("gv_dealer") : t("hq_defender")),
      td(signed(out.settlement[s], 0), true)));
    this.finalDiv.append(el("h3", { text: t("hq_outcome") }), kou,
      el("div", {}, `${t("hq_total")}: ${out.trick_points} + ${out.bottom_points * out.bottom_factor} = `,
        el("b", { dataset: { role: "total" }, text: String(out.defender_points) }), ` · ${t("hq_contract")} ${out.contract} → `,
        el("b", { dataset: { role: "outcome", outcome: out.outcome }, text: t("hq_out_" + out.outcome) })),
      table([[t("seat"), 1], [t("player")], [""], [t("hq_settlement"), 1]], rows));
  }
}

HAND_VIEWS.heiqi = HeiqiView;
