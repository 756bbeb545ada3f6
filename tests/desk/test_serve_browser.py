"""`analyzer serve`, the review page, in a real browser (Debian chromium via playwright) over four daily looks: the
queue, a case's page, a dismissal with its reason that survives a reload; and the page's guards (the form's token, the
Host header, escaping, a decision made on a stale page)."""

from __future__ import annotations

import contextlib
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CHROMIUM, clean_exit, run_cli, watched_page
from desk_fixtures import COLLUDERS, daily_audits, pair, result

from analyzer.desk import cases
from analyzer.desk.db import open_cases

pytest.importorskip("flask", reason="the serve extra is not installed (pip install -e '.[serve]')")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

from analyzer.desk.serve import make_server, url_of  # noqa: E402  (needs flask)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]

HOSTILE = '<img src=x onerror=alert(1)>"&'


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return daily_audits(tmp_path_factory.mktemp("daily"))


@pytest.fixture
def db(tmp_path: Path, audits: list[Path]) -> Path:
    """A fresh cases database holding the four daily looks, recorded as a nightly job records them."""
    path = tmp_path / "cases.sqlite"
    for k, folder in enumerate(audits, 1):
        r = run_cli("cases", "record", str(folder), "--db", str(path), "--at", f"2026-12-0{k}T06:00:00Z",
                    "--label", f"day-{k}")
        clean_exit(r, 0)
    return path


@pytest.fixture
def served(db: Path) -> Iterator[str]:
    server = make_server(db, "127.0.0.1", 0, reviewer="ana")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url_of(server)
    server.shutdown()
    server.server_close()
    thread.join(10)


@pytest.fixture
def page_errors() -> list[str]:
    """What the page reported going wrong (a test that expects one removes it)."""
    return []


@pytest.fixture
def page(browser: object, page_errors: list[str]) -> Iterator[object]:
    """A page that fails the test on any console error, uncaught exception or dialog (an alert = XSS)."""
    with watched_page(browser, {"width": 1300, "height": 900}, page_errors) as pg:
        yield pg


@contextlib.contextmanager
def serving(path: Path, pg: object) -> Iterator[str]:
    """Serve one database for one test. The page leaves the site before the server stops, so no request of
    its is cut off (Chromium logs a reset connection as a console error)."""
    server = make_server(path, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url_of(server)
    finally:
        pg.goto("about:blank")  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
        thread.join(10)


def colluders_case(db: Path) -> cases.CaseSummary:
    with open_cases(db, create=False) as d:
        (found,) = [c for c in cases.list_cases(d) if c.members == COLLUDERS]
        return found


def test_list_open_dismiss_reload(served: str, db: Path, page: object) -> None:
    """The reviewer's walk: the queue lists the colluders' case open, its page shows its four looks, a dismissal with
    a reason is written to the database, and a reload (and the queue) show it dismissed with that reason."""
    pg: object = page
    case = colluders_case(db)
    pg.goto(served)  # type: ignore[attr-defined]
    row = pg.locator(f"[data-role=case-row][data-case='{case.case_id}']")  # type: ignore[attr-defined]
    expect(row).to_have_count(1)
    expect(row.locator("[data-role=status]")).to_have_text("open")
    expect(row).to_contain_text("p07 + p08")
    expect(pg.locator("[data-role=last-look]")).to_contain_text("#4")  # type: ignore[attr-defined]

    row.locator("[data-role=case-link]").click()
    expect(pg.locator("[data-role=members]")).to_have_text("p07 + p08")  # type: ignore[attr-defined]
    expect(pg.locator("[data-role=history-row]")).to_have_count(4)  # type: ignore[attr-defined]
    expect(pg.locator("[data-role=lead]")).to_contain_text("p08")  # type: ignore[attr-defined]
    numbers = pg.locator("[data-role=history-row] td.numbers").first  # type: ignore[attr-defined]
    expect(numbers).to_contain_text("→")  # a direction's numbers under "actor → partner", not flattened keys
    expect(numbers).not_to_contain_text("ab.")

    reason = "friends from the club <b>not</b> colluding & known"
    form = pg.locator("[data-role=form-dismiss]")  # type: ignore[attr-defined]
    form.locator("textarea[name=text]").fill(reason)
    expect(form.locator("input[name=who]")).to_have_value("ana")  # the --by name fills the forms
    form.locator("input[name=who]").fill("bo")
    form.locator("[data-role=submit-dismiss]").click()
    expect(pg.locator("[data-role=status]")).to_have_text("dismissed")  # type: ignore[attr-defined]

    pg.reload()  # type: ignore[attr-defined]
    expect(pg.locator("[data-role=status]")).to_have_text("dismissed")  # type: ignore[attr-defined]
    event = pg.locator("[data-role=event][data-action=dismiss]")  # type: ignore[attr-defined]
    expect(event).to_have_count(1)
    expect(event.locator(".text")).to_have_text(reason)  # shown as written: escaped, not markup
    expect(event).to_contain_text("bo")
    expect(pg.locator("[data-role=reopen-rule]")).to_contain_text("passes")  # type: ignore[attr-defined]
    assert pg.locator("main b").count() == 0  # type: ignore[attr-defined]

    with open_cases(db, create=False) as d:  # written to the database itself
        f = cases.show_case(d, case.case_id)
    assert f.summary.status == "dismissed"
    last = f.events[-1]
    assert (last.action, last.who, last.text) == ("dismiss", "bo", reason)
    assert f.summary.reopen_kind == "score" and f.summary.reopen_above == pytest.approx(f.history[-1].score + 1.0)

    pg.goto(served)  # type: ignore[attr-defined]
    expect(pg.locator(f"[data-case='{case.case_id}']")).to_have_count(0)  # type: ignore[attr-defined]
    pg.locator("[data-role=filter-dismissed]").click()  # type: ignore[attr-defined]
    expect(pg.locator(f"[data-case='{case.case_id}'] [data-role=status]")).to_have_text(  # type: ignore[attr-defined]
        "dismissed")


def test_case_file_link_opens_the_audits_report(served: str, db: Path, page: object) -> None:
    """Each look's row links to the report its audit wrote, at the pair (report.html#pair=N), served from that audit's
    folder."""
    pg: object = page
    case = colluders_case(db)
    pg.goto(f"{served}case/{case.case_id}")  # type: ignore[attr-defined]
    links = pg.locator("[data-role=case-file]")  # type: ignore[attr-defined]
    expect(links).to_have_count(4)
    href = links.nth(3).get_attribute("href")
    assert href is not None and href.startswith("/looks/4/report.html#pair=")
    links.nth(3).click()
    pg.wait_for_load_state("load")  # type: ignore[attr-defined]
    assert "/looks/4/report.html" in pg.url  # type: ignore[attr-defined]
    assert "p07" in pg.content()  # type: ignore[attr-defined]


def post(url: str, fields: dict[str, str], host: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(), method="POST")
    if host is not None:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_form_without_this_servers_token_changes_nothing(served: str, db: Path) -> None:
    case = colluders_case(db)
    fields = {"action": "dismiss", "version": str(case.version), "who": "mallory", "text": "cross-site"}
    for token in ("", "not-the-token"):
        code, body = post(f"{served}case/{case.case_id}", {**fields, "token": token})
        assert code == 403 and "token" in body
    assert colluders_case(db).status == "open"


def test_other_host_names_are_refused(served: str, db: Path) -> None:
    """A page on a rebound DNS name (evil.example resolving to 127.0.0.1) reads nothing."""
    req = urllib.request.Request(served, headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 400
    with urllib.request.urlopen(served, timeout=30) as ok:  # its own address is served
        assert ok.status == 200


def test_a_decision_on_a_stale_page_is_refused(served: str, db: Path, page: object, page_errors: list[str]) -> None:
    """Two reviewers open the case; the first confirms it; the second's dismissal, from the page opened before, is
    refused (409) with who decided, and the case stays confirmed."""
    pg: object = page
    case = colluders_case(db)
    pg.goto(f"{served}case/{case.case_id}")  # type: ignore[attr-defined]
    with open_cases(db, create=False) as d:
        cases.decide(d, case.case_id, "confirm", "cy", "seen on the hands")
    form = pg.locator("[data-role=form-dismiss]")  # type: ignore[attr-defined]
    form.locator("textarea[name=text]").fill("looks fine to me")
    form.locator("[data-role=submit-dismiss]").click()
    expect(pg.locator("[data-role=error]")).to_contain_text("changed since the page was opened")  # type: ignore
    expect(pg.locator("[data-role=error]")).to_contain_text("cy")  # type: ignore[attr-defined]
    expect(form.locator("textarea[name=text]")).to_have_value("looks fine to me")  # kept for a second try
    assert colluders_case(db).status == "confirmed"
    assert [e for e in page_errors if "409" in e]  # the browser saw the refusal's status
    page_errors[:] = [e for e in page_errors if "409" not in e]


def test_hostile_ids_are_text(tmp_path: Path, page: object) -> None:
    """Player ids and notes holding markup show as text on the queue and the case's page; nothing runs."""
    path = tmp_path / "hostile.sqlite"
    with open_cases(path) as d:
        cases.record_look(d, result(pair(HOSTILE, "p02", score=9.0)))
        (c,) = cases.list_cases(d)
        cases.decide(d, c.case_id, "note", "<i>eve</i>", "<script>alert(2)</script>")
    pg: object = page
    with serving(path, pg) as url:
        pg.goto(url)  # type: ignore[attr-defined]
        expect(pg.locator("[data-role=case-row] .ids")).to_contain_text(HOSTILE)  # type: ignore[attr-defined]
        pg.locator("[data-role=case-link]").click()  # type: ignore[attr-defined]
        expect(pg.locator("[data-role=members]")).to_contain_text(HOSTILE)  # type: ignore[attr-defined]
        expect(pg.locator("[data-role=event][data-action=note]")).to_contain_text(  # type: ignore[attr-defined]
            "<script>alert(2)</script>")
        assert pg.locator("main img, main i, main script").count() == 0  # type: ignore[attr-defined]


def test_serve_refuses_other_hosts_and_missing_databases(tmp_path: Path, db: Path) -> None:
    r = run_cli("serve", "--db", str(db), "--host", "0.0.0.0", "--port", "0")
    clean_exit(r, 2)
    assert "--allow-remote" in r.output
    r = run_cli("serve", "--db", str(tmp_path / "none.sqlite"), "--port", "0")
    clean_exit(r, 2)
    assert "no cases database" in r.output
    assert not (tmp_path / "none.sqlite").exists()


def test_a_lending_case_is_in_the_queue_and_opens(tmp_path: Path, page: object) -> None:
    """A 借牌 lending pair the audit flagged is a case of the queue like a pair's: listed with its kind, opened, its
    lending test's numbers shown."""
    path = tmp_path / "lending.sqlite"
    borrow = {"players": [], "pairs": [{"a": "x", "b": "y", "lends_to_partner": 30, "lends_to_others": 200,
                                        "favour": 0.5, "p_value": 1e-9, "q_value": 1e-8, "score": 9.0,
                                        "verdict": "flagged"}]}
    with open_cases(path) as d:
        cases.record_look(d, result(**{"bieqi-borrow": borrow}))
    pg: object = page
    with serving(path, pg) as url:
        pg.goto(url)  # type: ignore[attr-defined]
        row = pg.locator("[data-role=case-row]")  # type: ignore[attr-defined]
        expect(row).to_have_count(1)
        expect(row).to_contain_text("lending")
        expect(row).to_contain_text("x + y")
        pg.locator("[data-role=case-link]").click()  # type: ignore[attr-defined]
        expect(pg.locator("[data-role=members]")).to_contain_text("x")  # type: ignore[attr-defined]
        expect(pg.locator("main")).to_contain_text("lending_favour")  # type: ignore[attr-defined]
