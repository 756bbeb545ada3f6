"""``analyzer audit`` end to end on a small simulated room: files, schema, exit codes, invalid hands."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import jsonschema
import pytest
from conftest import SAMPLES, clean_exit, run_cli

from analyzer.audit.schema import audit_schema
from analyzer.logs import write_records
from analyzer.schema import dumps


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from analyzer.simulate.room import simulate

    path = tmp_path_factory.mktemp("room") / "room.jsonl"
    sim = simulate(hands=60, players=6, seed=4, colluders=1, style="share")
    write_records(path, sim.records)
    (path.parent / "truth.json").write_text(json.dumps(sim.truth))
    return path


@pytest.fixture(scope="module")
def audited(room: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    out = tmp_path_factory.mktemp("out")
    bad = room.parent / "bad.jsonl"
    lines = room.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["hand_id"] = "broken"
    rec["actions"] = rec["actions"][:10]  # a hand that stops early: invalid
    bad.write_text("\n".join(lines + [json.dumps(rec)]) + "\n")
    code = run_cli("audit", str(bad), "--out", str(out), "--samples", "4", "--dd-samples", "2").exit_code
    return code, out


def test_writes_every_file_and_exit_code_matches_flags(audited: tuple[int, Path]) -> None:
    code, out = audited
    assert {p.name for p in out.iterdir()} >= {"audit.json", "pairs.csv", "players.csv", "report.html"}
    audit = json.loads((out / "audit.json").read_text())
    assert code == (1 if any(p["flagged"] for p in audit["pairs"]) else 0)
    assert audit["hands"] == 60 and audit["valid_hands"] == 60


def test_the_planted_pair_is_flagged_and_no_honest_pair_is(room: Path, audited: tuple[int, Path]) -> None:
    truth = json.loads((room.parent / "truth.json").read_text())
    planted = {tuple(sorted(p["players"])) for p in truth["colluding_pairs"]}
    audit = json.loads((audited[1] / "audit.json").read_text())
    flagged = {tuple(p["players"]) for p in audit["pairs"] if p["flagged"]}
    assert len(planted) == 1 and flagged == planted
    assert audited[0] == 1


def test_the_audit_analyses_on_the_learned_model_by_default(audited: tuple[int, Path]) -> None:
    from analyzer.analysis.decisions import AUDIT_POLICY, DEFAULT_POLICY
    from analyzer.commands.audit import command

    assert AUDIT_POLICY == DEFAULT_POLICY == "model"  # one evaluator for every command
    assert next(p for p in command.params if p.name == "policy").default == "model"
    assert json.loads((audited[1] / "audit.json").read_text())["options"]["policy"] == "model"


def test_the_audit_on_rollouts_still_finds_the_planted_pair(room: Path, tmp_path: Path) -> None:
    """`--policy strategy` (rollouts everywhere, the audit's former default) is still there and still works."""
    r = run_cli("audit", str(room), "--out", str(tmp_path), "--samples", "4", "--dd-samples", "2", "--policy", "strategy")
    code, out = r.exit_code, r.output
    audit = json.loads((tmp_path / "audit.json").read_text())
    assert audit["options"]["policy"] == "strategy"
    truth = json.loads((room.parent / "truth.json").read_text())
    planted = {tuple(sorted(p["players"])) for p in truth["colluding_pairs"]}
    assert {tuple(p["players"]) for p in audit["pairs"] if p["flagged"]} == planted and code == 1, out


def test_audit_json_follows_its_schema(audited: tuple[int, Path]) -> None:
    audit = json.loads((audited[1] / "audit.json").read_text())
    jsonschema.Draft202012Validator(audit_schema()).validate(audit)
    pairs = audit["pairs"]
    assert pairs and all(p["players"] == sorted(p["players"]) for p in pairs)
    assert [p["score"] for p in pairs] == sorted((p["score"] for p in pairs), reverse=True)
    assert pairs[0]["evidence"] and {"hand_id", "action", "effect"} <= set(pairs[0]["evidence"][0])


def test_invalid_hands_are_reported_and_left_out(audited: tuple[int, Path]) -> None:
    audit = json.loads((audited[1] / "audit.json").read_text())
    assert audit["invalid_hands"] == 1
    assert any(p["hand_id"] == "broken" and p["code"] == "missing-actions" for p in audit["problems"])


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run_cli("audit", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")).exit_code == 2
    empty = tmp_path / "empty.jsonl.gz"
    with gzip.open(empty, "wb") as f:
        f.write(b"not json\n")
    code = run_cli("audit", str(empty), "--out", str(tmp_path / "o")).exit_code
    assert code == 2 and not (tmp_path / "o" / "audit.json").exists()


def test_published_schema_is_current() -> None:
    path = Path(__file__).resolve().parents[2] / "schemas" / "audit-v1.schema.json"
    assert path.read_text(encoding="utf-8") == dumps(audit_schema())


def test_audit_of_stdin_equals_audit_of_the_path(tmp_path: Path) -> None:
    """``analyzer audit -`` reads the input once, and every section sees it: a borrow room with cheats gives
    the same borrow section and exit code from stdin as from its path (it once counted 0 from stdin)."""
    from analyzer.simulate import borrow
    from analyzer.simulate import room as standard

    room = tmp_path / "mixed.jsonl"
    write_records(room, [*standard.simulate(hands=12, players=6, seed=3).records,
                         *borrow.simulate(hands=40, players=6, seed=11, colluders=1, style="both").records])
    by_path, by_stdin = tmp_path / "a", tmp_path / "b"
    code_path = run_cli("audit", str(room), "--out", str(by_path), "--samples", "2", "--dd-samples", "1").exit_code
    res = run_cli("audit", "-", "--out", str(by_stdin), "--samples", "2", "--dd-samples", "1", input=room.read_bytes())
    a = json.loads((by_path / "audit.json").read_text())
    b = json.loads((by_stdin / "audit.json").read_text())
    assert a["bieqi-borrow"]["illegal_borrows"] > 0, "the simulated cheats borrow while holding a live card"
    for section in (a, b):  # the first illegal borrow's place names the file: <stdin> or the path
        for row in section["bieqi-borrow"]["players"]:
            row["first_illegal"] = row["first_illegal"].split(":", 1)[-1]
    assert b["bieqi-borrow"] == a["bieqi-borrow"]
    assert res.exit_code == code_path == 1


def test_players_csv_agrees_with_the_players_command(room: Path, audited: tuple[int, Path]) -> None:
    """One definition everywhere: the audit's players.csv and `analyzer players` read the same figures (the
    audit's policy is `players`' default, the learned model; given explicitly all the same)."""
    import io

    import pandas as pd

    audit_players = pd.read_csv(audited[1] / "players.csv").set_index("player")
    res = run_cli("players", str(room), "--samples", "4", "--dd-samples", "2", "--policy", "model",
                                     "--format", "csv")
    assert res.exit_code == 0, res.output
    cli_players = pd.read_csv(io.StringIO(res.stdout)).set_index("player")
    cols = ["skill", "skill_lo", "skill_hi", "match_rate", "mean_regret", "decisions", "signal_p"]
    # (dtypes aside: the audit writes %.6g, so a column of 1s reads back as integers)
    pd.testing.assert_frame_equal(audit_players.loc[cli_players.index, cols], cli_players[cols], rtol=1e-5,
                                  check_dtype=False)
    entries = {e["player"]: e for e in json.loads((audited[1] / "audit.json").read_text())["players"]}
    assert all(entries[p]["skill"] == pytest.approx(cli_players.loc[p, "skill"], rel=1e-3) for p in cli_players.index)


def test_hands_of_a_game_without_a_pair_audit_are_said(tmp_path: Path) -> None:
    """A 信阳黑七 log: every hand valid, none in the pair audit; the summary says so (it read as "0 hands" and
    nothing more), and audit.json counts them in skipped_hands."""
    sample = Path(__file__).resolve().parents[2] / "samples" / "heiqi-sample.jsonl"
    r = run_cli("audit", str(sample), "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    n = sum(1 for line in sample.read_text().splitlines() if line.strip())
    assert (f"xinyang-heiqi: {n} valid hand(s) checked by validation (the deal, bids, plays and settlement replayed by "
            "the rules), no problem found; the pair audit does not cover this game") in r.output
    assert json.loads((tmp_path / "audit.json").read_text())["skipped_hands"] == {"xinyang-heiqi": n}


FAST = ["--samples", "1", "--dd-samples", "0"]


def test_audit_summary_does_not_claim_the_default_false_alarm_rate_for_another_alpha(tmp_path: Path) -> None:
    """`--alpha 1` flags every pair, and the summary still said "a false alarm well under once in 10,000 honest
    pairs"; it now says the chance the threshold allows."""
    r = run_cli("audit", str(SAMPLES / "legal.jsonl"), "-o", str(tmp_path / "a"), "--alpha", "1", "--fdr", "1",
                "--min-hands", "1", *FAST)
    clean_exit(r, 1)
    assert "FLAGGED" in r.output and "well under once in 10,000" not in r.output
    assert "flagged: p <= 1, each honest pair flagged with a chance of up to ~1, above the default's 1e-05" in r.output
    # the flagged pairs' case lines in audit.json say the run's alarm, not the default's rate
    audit = json.loads((tmp_path / "a" / "audit.json").read_text())
    lines = [p["case"]["verdict"] for p in audit["pairs"] if p["verdict"] == "flagged" and p.get("case")]
    assert lines and all(v["key"] == "verdict_flagged_alpha" and v["args"][3] == "1" for v in lines)


def test_the_flagged_case_line_names_a_laxer_alarm_and_the_default_keeps_its_rate() -> None:
    """The pair's verdict line: the default alarm keeps its measured rate; a laxer one is said as the chance it allows,
    in both languages (the page draws both from the same labels)."""
    import pandas as pd

    from analyzer.audit.calibrate import DEFAULT_ALPHA
    from analyzer.audit.case import verdict_line
    from analyzer.commands.audit import DEFAULT_ALPHA as COMMAND_DEFAULT
    from analyzer.report.case_labels import CASE_LABELS as LABELS

    assert COMMAND_DEFAULT == DEFAULT_ALPHA
    row = pd.Series({"verdict": "flagged", "score": 9.0, "q_value": 1e-6, "hands_to_alarm": None})
    assert verdict_line(row)["key"] == verdict_line(row, DEFAULT_ALPHA)["key"] == "verdict_flagged"
    lax = verdict_line(row, 0.01)
    assert lax["key"] == "verdict_flagged_alpha" and lax["args"][3] == "0.01"
    for lang in ("en", "zh"):
        assert "{3}" in LABELS[lang]["verdict_flagged_alpha"] and "{0}" in LABELS[lang]["tiers_help_alpha"]
    review = pd.Series({"verdict": "review", "score": 3.0, "q_value": 0.01, "hands_to_alarm": 40})
    assert verdict_line(review, 0.01)["key"] == "verdict_review"
