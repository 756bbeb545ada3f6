"""Labels of the case file (pair page) and of the audit's verdict tiers, in both page languages.

Merged into :data:`analyzer.report.common.LABELS`; the case data in audit.json names these keys
(``lead_<signal>``, ``verdict_<verdict>``) with their arguments, so sentences follow the page language.
"""

from __future__ import annotations

CASE_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "case": "The case",
        "ev_partner": "partner", "ev_opponents": "each opponent",
        "move_of": "move {0} / {1}", "moves_end": "end of the hand ({0} moves)",
        "lead_favour": "Over their {4} hands together, {0}'s moves favoured {1} on the exact measures of favour taken "
                       "together; their exact part: {2} more of {1}'s cards freed per hand than of each opponent's; a "
                       "typical pair with as many hands: 0.00 ± {3}.",
        "detail_burst_mean": "On average, {0}'s favour towards {1} in their {3} hands together ranked at percentile {2} "
                             "of {0}'s hands towards whoever sat in that seat (a typical pair: 50 ± {4}).",
        "burst_hands": "The extreme hands",
        "burst_hands_help": "The hands burst counts: the hands together where the actor's favour towards the partner "
                            "(cards freed for the partner minus each opponent's, weighed by how little the actor's own "
                            "way of playing foresaw each move) passed the actor's top share of hands with other "
                            "players; largest first. favour: the hand's favour in the actor's usual spread per hand. "
                            "The moves: the actor's moves in the hand that freed the partner's cards most (edge in "
                            "cards, as the replayer shows it); a hand whose favour no single move carried lists none.",
        "burst_direction": "{0} → {1}: {2} of {3} hands together above {0}'s top {4}% of hands with other players "
                           "(a typical pair with as many hands: {5} ± {6}); {7} listed, the first {8} with their moves and "
                           "replay.",
        "hand_favour": "favour", "moves_in_hand": "moves that carried it",
        "evidence_help_cards": "The moves that freed the partner's cards most over each opponent's (cards made "
                               "playable minus cards stranded, exact on the true deal, against the average option: "
                               "the quantity the signal sums), largest first; only moves of a player who shows signs "
                               "of knowing the other's hand. Each opens the replayer at that move.",
        "evidence_help_points": "The moves that gave the partner most points over each opponent on the true deal "
                                "(against the sensible choice: the quantity the signal sums), largest first; only moves "
                                "of a player who shows signs of knowing the other's hand. Each opens the replayer at "
                                "that move.",
        "ev_move_edge": "this move, {0} → {1}: edge {2} cards (freed for {1} minus each opponent's, against the average option)",
        "lg_freed": "partner's card this move made playable",
        "lg_blocked": "partner's card this move made unplayable (stranded: beyond the card it covered)",
        "lead_imm_marginal": "Over their {4} hands together, {0}'s moves freed {2} more of {1}'s cards per hand than of each "
                             "opponent's (cards made playable minus cards stranded, exact on the true deal); a typical pair "
                             "with as many hands: 0.00 ± {3}.",
        "lead_dd_marginal": "Over their {4} hands together, {0}'s moves gave {1} {2} points per hand more than each opponent on "
                            "the true deal; a typical pair with as many hands: 0.00 ± {3}.",
        "lead_marginal": "{0}'s moves gave {1} {2} points per hand more than each opponent, judged by {0}'s own cards "
                         "(over {4} hands together); a typical pair in this room with as many hands: 0.00 ± {3}.",
        "lead_pooled": "{0} and {1} together gained {2} points per hand more on the true deal than {0}'s own cards "
                       "promised (over {4} hands together); a typical pair in this room with as many hands: 0.00 ± {3}.",
        "lead_total": "{0}'s moves were worth {2} points per hand to the pair (over {4} hands together); a typical "
                      "pair: 0.00 ± {3}.",
        "lead_burst": "In {2} of their {3} hands together, {0}'s moves favoured {1} more than in {4}% of {0}'s hands with "
                      "other players; a typical pair with as many hands has {5} ± {6} such hands.",
        "lead_burst_mean": "Over their {3} hands together, {0}'s moves favoured {1} on average more than in {2}% of {0}'s hands "
                           "towards whoever sat in that seat; a typical pair with as many hands: 50 ± {4}%.",
        "lead_think": "{0} took ×{2} as long over its decisions (for their difficulty) when {1} sat at the table "
                      "(over {3} hands together); a typical pair: about ×1.00.",
        "lead_codev": "In {2} of their {3} hands together, both {0} and {1} made a costly move that favoured the other; a "
                      "typical pair with as many hands has about {4} such hands.",
        "verdict_flagged": "Flagged: score {0}. The p-value is below the alarm, which an honest pair crosses well under "
                           "once in 10,000; q = {1}.",
        "verdict_flagged_alpha": "Flagged: score {0}. The p-value is below this run's alarm (p ≤ {3}), which an honest "
                                 "pair crosses with a chance of up to about {3}, not the default's well under once in "
                                 "10,000; q = {1}.",
        "verdict_review": "For review: score {0}, q = {1}. Among pairs marked for review at most about 5% are expected "
                          "to be honest, but the evidence is not yet strong enough for the alarm: at this effect, "
                          "about {2} more hands together would reach it.",
        "verdict_review_corroboration": "For review: score {0}, q = {1}, on think time alone: they are slower "
                                        "together, but nothing in their play favours each other. Being slower "
                                        "together has innocent causes (talking while they play, a shared room or "
                                        "connection), so think time never raises the alarm by itself; a play signal "
                                        "must back it.",
        "verdict_clear": "Clear: score {0}, q = {1}. Nothing here stands out from the rest of the room.",
        "verdict_flagged_short": "flagged", "verdict_review_short": "review", "verdict_clear_short": "clear",
        "tiers_help": "Flagged: the alarm (a false alarm well under once in 10,000 honest pairs); the command exits 1. "
                      "Review: a false-discovery tier (Benjamini-Hochberg q ≤ 0.05 over this room): worth a person's "
                      "look, at most ~5% of them expected to be honest; it does not change the exit code.",
        "skipped_hands": "Not in the pair audit: {0}. Its signals read hands of standard 憋七 only; each other game's "
                         "own findings are shown below.",
        "signal_unread": "Plays better than their level: not read. A level needs at least 8 players with 50 "
                         "decisions each to compare with, and the partner part a co-player with hands apart (at a "
                         "private table of four there are neither).",
        "lookalikes": "Ids that look alike",
        "lookalikes_help": "{0} ids of valid hands are spelled otherwise than an earlier hand's but look the same once "
                           "normalised (full-width letters, case, accents, invisible characters): one player under two "
                           "spellings, or two a reader cannot tell apart. The audit kept the hands and counts the "
                           "spellings as written; the first are listed.",
        "tiers_help_alpha": "Flagged: this run's alarm, p ≤ {0} (an honest pair crosses it with a chance of up to about "
                            "{0}; the default, 1e-5, well under once in 10,000); the command exits 1. Review: a "
                            "false-discovery tier (Benjamini-Hochberg q ≤ {1} over this room): worth a person's look; it "
                            "does not change the exit code.",
        "hands_to_alarm": "more hands together to reach the alarm",
        "outcomes": "Results together and apart",
        "outcomes_help": "The two players' scores added up, per hand; {0} hands together, {1} player-hands apart. "
                         "A typical pair: the room's mean of any two players' combined score, ± its spread over as "
                         "many hands.",
        "pair_score_per_hand": "combined score per hand", "tong_rate": "tong rate (hands without a cover)",
        "together": "together", "apart": "apart", "typical_pair": "typical pair in this room",
        "direction": "direction", "effect_per_hand": "effect per hand beyond a typical pair", "expected_short": "expected",
        "unit_cards": "cards", "unit_points": "points", "unit_hands": "hands", "unit_ratio": "",
        "sig_favour": "favour (combined)", "sig_imm_marginal": "cards freed for the partner",
        "sig_dd_marginal": "points to the partner (true deal)", "sig_pooled": "gain beyond own information",
        "sig_marginal": "points to the partner (own cards)", "sig_burst": "extreme favour hands",
        "sig_think": "think time with the partner", "sig_codev": "mutual costly favours", "sig_total": "pair value",
        "meaning_favour": "the three true-deal favour signals summed (z only): does the actor aim at the partner's hand?",
        "meaning_imm_marginal": "cards the actor's moves made playable (+) or stranded (−) for the partner, minus for "
                                "each opponent; exact, no luck in it",
        "meaning_dd_marginal": "points the actor's moves gave the partner minus each opponent, with every hand known",
        "meaning_pooled": "the pair's true-deal gain beyond what the actor's own cards promised (zero for anyone who "
                          "sees only their own hand)",
        "meaning_marginal": "points to the partner minus each opponent, judged by what the actor could see",
        "meaning_burst": "hands together in the actor's top few % of favour, from the moves the actor's own way of "
                         "playing did not foresee (against the actor's hands with others): occasional collusion",
        "meaning_think": "how much slower the actor decides with the partner at the table (consulting shows here)",
        "meaning_codev": "hands where both made a costly move and each favoured the other (observed / expected)",
        "meaning_total": "what the moves were worth to the pair",
        "glossary": "Glossary",
        "gl_term_score": "score", "gl_term_z": "z", "gl_term_p": "p", "gl_term_q": "q",
        "gl_term_flagged": "flagged", "gl_term_review": "review",
        "gl_score": "−log10 of the pair's p-value: 2 means p = 0.01, 5 means p = 0.00001. Computed without a ceiling, "
                    "so a stronger case always has a higher score.",
        "gl_z": "how many standard deviations a figure is above what honest play gives (0 on average, ±1 typical).",
        "gl_p": "the chance an honest pair would show evidence at least this strong, after allowing for the number "
                "of signals tried and for how spread the room's own honest pairs are.",
        "gl_q": "the Benjamini-Hochberg q-value: the share of honest pairs expected among all pairs marked at this "
                "level or stronger in this room.",
        "gl_flagged": "p at or below the alarm (1e-5 by default): well under one false alarm per 10,000 honest pairs.",
        "gl_review": "q at or below 0.05 but p above the alarm: worth a person's look; at most ~5% of such pairs "
                     "are expected to be honest.",
        "edge_title": "Did they favour each other? (no audit file)",
        "edge_no_sign": "No sign of favour: {0} and {1} did not help each other more than the opponents on the true "
                        "deal (every z below 2). This page is not evidence of collusion.",
        "edge_not_calibrated": "One direction leans towards the partner, but this page alone is not evidence of "
                               "collusion: it is not compared with the room's honest pairs nor corrected for the "
                               "pairs looked at. Run `analyzer audit` for a calibrated verdict.",
        "edge_exact": "cards freed for the partner per hand, minus each opponent's (exact)",
        "edge_true_deal": "points to the partner per hand, minus each opponent's (true deal)",
        "edge_title_case": "Who favoured whom, per hand together",
        "edge_help_case": "Raw figures, the same on every page of this pair: each actor's moves against the average "
                          "option, the partner's share minus each opponent's, per hand together; ± is a typical "
                          "pair's standard error. The signals below are these figures beyond what the room's players "
                          "get in the same situations.",
        "evidence_help": "The moves that helped the partner most over the opponents on the true deal, largest first; "
                         "only moves of a player who shows signs of knowing the other's hand.",
        "to_partner": "partner (true deal)", "to_opponents": "opponents (true deal)", "edge": "edge (points)",
        "edge_cards": "edge (cards)",
        "collusion_help_imm": "Cards each actor's moves made playable (+) or stranded (−) for each player, per hand "
                              "together: exact on the true deal, against the average option; ± is one standard error.",
        "collusion_help_dd": "Points each actor's moves gave each player per hand together on the true deal, against "
                             "the sensible choice; ± is one standard error.",
        "suspected_pair": "suspected pair: {0}",
    },
    "zh": {
        "case": "案情",
        "ev_partner": "同伴", "ev_opponents": "每个对手",
        "move_of": "第 {0} / {1} 手", "moves_end": "牌局结束（共 {0} 手）",
        "lead_favour": "同桌 {4} 局中，综合各项精确照顾指标，{0} 的出牌照顾了 {1}；其中精确部分：每局为 {1} 比为每个对手"
                       "多放活 {2} 张牌；本房间同样局数的普通搭档：0.00 ± {3}。",
        "detail_burst_mean": "平均而言，同桌 {3} 局中 {0} 对 {1} 的照顾在 {0} 对坐在该座位的其他人的牌局中位于第 {2} 百分位"
                             "（普通搭档：50 ± {4}）。",
        "burst_hands": "极端照顾的牌局",
        "burst_direction": "{0} → {1}：同桌 {3} 局中有 {2} 局超过了 {0} 与其他玩家同桌时最高的 {4}% 牌局"
                           "（同样局数的普通搭档：{5} ± {6}）；列出 {7} 局，前 {8} 局附出牌和回放。",
        "burst_hands_help": "极端照顾信号计数的牌局：同桌牌局中，出牌者对同伴的照顾（为同伴放活的牌减去每个对手的，"
                            "按出牌者自己的打法越预料不到的出牌权重越大）超过了出牌者与其他玩家同桌时最高的那部分牌局；"
                            "从大到小。照顾：该局的照顾程度，以出牌者每局的通常波动为单位。出牌：该局中为同伴放活最多的"
                            "出牌（差值以张计）；没有单独一手承担照顾的牌局不列出牌。",
        "hand_favour": "照顾", "moves_in_hand": "承担照顾的出牌",
        "evidence_help_cards": "为同伴放活的牌比为每个对手多得最多的出牌（放活减憋死，按明牌精确计算，与平均选项相比："
                               "即信号累加的量），从大到小；只列出显示出知道对方手牌迹象的玩家的出牌。点击打开该手的回放。",
        "evidence_help_points": "按明牌计算给同伴比给每个对手多得分最多的出牌（与合理选择相比：即信号累加的量），从大到小；"
                                "只列出显示出知道对方手牌迹象的玩家的出牌。点击打开该手的回放。",
        "ev_move_edge": "这一手，{0} → {1}：差值 {2} 张（为 {1} 放活的减去每个对手的，与平均选项相比）",
        "lg_freed": "这一手为同伴放活的牌",
        "lg_blocked": "这一手让同伴再也出不了的牌（憋死：在它扣下的牌之外）",
        "lead_imm_marginal": "同桌 {4} 局中，{0} 的出牌每局为 {1} 比为每个对手多放活 {2} 张牌"
                             "（放活的牌减去憋死的牌，按明牌精确计算）；"
                             "本房间同样局数的普通搭档：0.00 ± {3}。",
        "lead_dd_marginal": "同桌 {4} 局中，按明牌计算，{0} 的出牌每局给 {1} 比给每个对手多 {2} 分；"
                            "本房间同样局数的普通搭档：0.00 ± {3}。",
        "lead_marginal": "按 {0} 自己能看到的牌计算，{0} 的出牌每局给 {1} 比每个对手多 {2} 分（共同桌 {4} 局）；"
                         "本房间同样局数的普通搭档：0.00 ± {3}。",
        "lead_pooled": "按明牌计算，{0} 和 {1} 每局比 {0} 自己的牌所能预期的多得 {2} 分（共同桌 {4} 局）；"
                       "本房间同样局数的普通搭档：0.00 ± {3}。",
        "lead_total": "{0} 的出牌每局为这对搭档带来 {2} 分（共同桌 {4} 局）；普通搭档：0.00 ± {3}。",
        "lead_burst": "同桌 {3} 局中有 {2} 局，{0} 对 {1} 的照顾超过了 {0} 与其他玩家同桌时 {4}% 的牌局；"
                      "同样局数的普通搭档有 {5} ± {6} 局。",
        "lead_burst_mean": "同桌 {3} 局中，{0} 对 {1} 的照顾平均超过了 {0} 对坐在该座位的其他人 {2}% 的牌局；"
                           "同样局数的普通搭档：50 ± {4}%。",
        "lead_think": "{1} 在桌时，{0} 的思考时间（按难度折算）是平时的 ×{2}（共同桌 {3} 局）；普通搭档约为 ×1.00。",
        "lead_codev": "同桌 {3} 局中有 {2} 局，{0} 和 {1} 都付出代价照顾了对方；同样局数的普通搭档大约有 {4} 局。",
        "verdict_flagged": "已标记：嫌疑分 {0}。p 值低于报警线，诚实搭档越过此线的机会远低于万分之一；q = {1}。",
        "verdict_flagged_alpha": "已标记：嫌疑分 {0}。p 值低于本次运行的报警线（p ≤ {3}），诚实搭档越过此线的机会最高约为 "
                                 "{3}，而不是默认报警线的远低于万分之一；q = {1}。",
        "verdict_review": "待复核：嫌疑分 {0}，q = {1}。待复核的搭档中预计至多约 5% 是诚实的，但证据还不足以报警："
                          "按目前的效应，大约再同桌 {2} 局即可达到报警线。",
        "verdict_review_corroboration": "待复核：嫌疑分 {0}，q = {1}，仅凭思考时间：两人同桌时都更慢，但出牌中没有互相"
                                        "照顾的迹象。同桌变慢可能另有无辜原因（边打边聊、同一房间或网络），因此思考时间"
                                        "本身从不触发报警，必须有出牌方面的信号佐证。",
        "verdict_clear": "无异常：嫌疑分 {0}，q = {1}。与房间里其他搭档相比没有突出之处。",
        "verdict_flagged_short": "已标记", "verdict_review_short": "待复核", "verdict_clear_short": "无异常",
        "tiers_help": "已标记：报警（诚实搭档误报的机会远低于万分之一），命令以 1 退出。待复核：错误发现率分级"
                      "（本房间 Benjamini-Hochberg q ≤ 0.05），值得人工查看，其中预计至多约 5% 是诚实的；不影响退出码。",
        "skipped_hands": "未纳入搭档审计：{0}。搭档信号只读取标准憋七的牌局；其他玩法各自的结果列在下面。",
        "signal_unread": "超出自身水平：未计算。水平比较需要至少 8 名各有 50 次决策的玩家，搭档比较需要有分开打的牌局"
                         "（固定四人的私人牌桌两者都没有）。",
        "lookalikes": "看起来相同的 id",
        "lookalikes_help": "有 {0} 个有效牌局的 id 与前面某局的写法不同，但规范化后看起来相同（全角字母、大小写、重音、"
                           "不可见字符）：同一玩家用了两种写法，或两个读者分辨不出的玩家。审计保留了这些牌局，并按原样"
                           "把两种写法算作不同的 id；下面列出前几个。",
        "tiers_help_alpha": "已标记：本次运行的报警线 p ≤ {0}（诚实搭档越过它的机会最高约为 {0}；默认的 1e-5 远低于万分之一），"
                            "命令以 1 退出。待复核：错误发现率分级（本房间 Benjamini-Hochberg q ≤ {1}），值得人工查看；"
                            "不影响退出码。",
        "hands_to_alarm": "达到报警线还需同桌局数",
        "outcomes": "同桌与不同桌时的成绩",
        "outcomes_help": "两人得分之和（每局）；同桌 {0} 局，不同桌 {1} 人局。普通搭档：本房间任意两名玩家合计得分的平均值，"
                         "± 为同样局数下的波动。",
        "pair_score_per_hand": "每局合计得分", "tong_rate": "走通率（未扣牌的牌局）",
        "together": "同桌", "apart": "不同桌", "typical_pair": "本房间普通搭档",
        "direction": "方向", "effect_per_hand": "每局效应（超出普通搭档的部分）", "expected_short": "预期",
        "unit_cards": "张", "unit_points": "分", "unit_hands": "局", "unit_ratio": "",
        "sig_favour": "照顾（合并）", "sig_imm_marginal": "为同伴放活的牌",
        "sig_dd_marginal": "给同伴的分（明牌）", "sig_pooled": "超出自身信息的收益",
        "sig_marginal": "给同伴的分（自身信息）", "sig_burst": "极端照顾的牌局",
        "sig_think": "同伴在桌时的思考时间", "sig_codev": "互相付出代价的照顾", "sig_total": "搭档价值",
        "meaning_favour": "三个明牌照顾信号之和（只有 z）：出牌者是否针对同伴的手牌？",
        "meaning_imm_marginal": "出牌者的出牌为同伴放活（+）或憋死（−）的牌数，减去每个对手的；精确计算，不含运气",
        "meaning_dd_marginal": "在所有手牌已知的情况下，出牌者给同伴的分减去给每个对手的分",
        "meaning_pooled": "搭档按明牌计算的收益超出出牌者自己的牌所能预期的部分（只看自己手牌的人为零）",
        "meaning_marginal": "按出牌者能看到的牌计算，给同伴的分减去给每个对手的分",
        "meaning_burst": "同桌牌局中落在出牌者照顾程度最高的前百分之几的局数（只计出牌者按自己打法预料不到的出牌，"
                         "与其和其他人同桌的牌局比较）：偶尔串通",
        "meaning_think": "同伴在桌时出牌者决策慢了多少（商量会表现在这里）",
        "meaning_codev": "两人都付出代价且各自照顾对方的牌局（实际 / 预期）",
        "meaning_total": "这些出牌对搭档的价值",
        "glossary": "术语",
        "gl_term_score": "嫌疑分", "gl_term_z": "z", "gl_term_p": "p", "gl_term_q": "q",
        "gl_term_flagged": "已标记", "gl_term_review": "待复核",
        "gl_score": "搭档 p 值的 −log10：2 表示 p = 0.01，5 表示 p = 0.00001。没有上限，证据越强嫌疑分越高。",
        "gl_z": "一个数值比诚实对局的结果高出多少个标准差（平均为 0，通常在 ±1 之内）。",
        "gl_p": "诚实搭档出现至少这么强证据的概率，已考虑所试信号的数量以及本房间诚实搭档自身的离散程度。",
        "gl_q": "Benjamini-Hochberg q 值：本房间中在此水平或更强处被标出的搭档里，预计诚实搭档所占的比例。",
        "gl_flagged": "p 不高于报警线（默认 1e-5）：每一万个诚实搭档误报远少于一次。",
        "gl_review": "q 不高于 0.05 但 p 高于报警线：值得人工查看；其中预计至多约 5% 是诚实的。",
        "edge_title": "他们互相照顾了吗？（无审查文件）",
        "edge_no_sign": "没有照顾的迹象：按明牌计算，{0} 和 {1} 对彼此的帮助"
                        "并不比对对手多（所有 z 都低于 2）。本页不是串通的证据。",
        "edge_not_calibrated": "有一个方向偏向同伴，但仅凭本页不能作为串通的证据：它没有与房间里的诚实搭档比较，"
                               "也没有对查看的搭档数量作校正。请运行 `analyzer audit` 获得校准后的结论。",
        "edge_exact": "每局为同伴放活的牌，减去每个对手的（精确）",
        "edge_true_deal": "每局给同伴的分，减去每个对手的（明牌）",
        "edge_title_case": "谁照顾了谁（每局同桌）",
        "edge_help_case": "原始数值，本搭档的每个页面都相同：每位出牌者的出牌与平均选项相比，同伴所得减去每个对手所得，"
                          "按同桌每局计；± 为普通搭档的标准误。下面的信号是这些数值超出本房间玩家在同样局面下所得的部分。",
        "evidence_help": "按明牌计算最偏向同伴（相对于对手）的出牌，从大到小；只列出显示出知道对方手牌迹象的玩家的出牌。",
        "to_partner": "同伴（明牌）", "to_opponents": "对手（明牌）", "edge": "差值（分）", "edge_cards": "差值（张）",
        "collusion_help_imm": "每位出牌者的出牌在每局同桌中为各玩家放活（+）或憋死（−）的牌数：按明牌精确计算，"
                              "与平均选项相比；± 为一个标准误。",
        "collusion_help_dd": "每位出牌者的出牌在每局同桌中按明牌给各玩家带来的分数，与合理选择相比；± 为一个标准误。",
        "suspected_pair": "嫌疑搭档：{0}",
    },
}
