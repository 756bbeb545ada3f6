"""The review page: the cases queue and each case's page from the cases database, decisions written back to it.

A Flask application (the optional extra ``serve``) for one desk on one machine: :func:`make_server` serves it on
127.0.0.1 unless told otherwise. Every form carries a token made for this run (a page elsewhere cannot post a
decision), every request must name this server as its Host (a rebound DNS name cannot read the pages), and every
value is HTML-escaped (Jinja's autoescaping) under a Content-Security-Policy that runs no script. Each case's history
links to the case file its look's audit wrote (``report.html#pair=N``), served from that audit's folder.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, abort, g, redirect, render_template, request, send_from_directory, url_for

from analyzer.desk import cases as desk
from analyzer.desk.db import CasesError, open_cases
from analyzer.desk.looks import sentence

if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

#: The queue's status filters (the first is the default).
FILTERS = ("open", "dismissed", "confirmed", "all")
#: The page's own headers: no script at all, styles from this server, forms posted only here, never framed.
PAGE_POLICY = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
               "base-uri 'none'")


def is_loopback(host: str) -> bool:
    """``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_names(host: str, port: int) -> set[str]:
    """The Host headers a request to this server may carry (a browser's, for each name of a loopback address)."""
    names = {host} | ({"127.0.0.1", "localhost", "[::1]"} if is_loopback(host) else set())
    names = {f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names}
    return {f"{n}:{port}" for n in names} | (names if port == 80 else set())


#: Readable names of a signal's numbers (audit.json's keys); a key not listed is shown as it is.
NUMBER_NAMES = {"z_mean": "z of the mean", "above": "hands above", "mean_percentile": "mean percentile",
                "n": "decisions"}


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_shown(x) for x in value)
    if isinstance(value, float):
        return f"{value:.3g}" if value != 0 and abs(value) < 1e-3 else f"{value:.4g}"
    return str(value)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A signal's numbers as (name, shown) pairs, nested names joined by dots (``ab.z``)."""
    if isinstance(value, Mapping):
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out += flatten(v, f"{prefix}{k}.")
        return out
    return [(prefix.rstrip("."), _shown(value))]


def signal_lines(signal: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """A signal's numbers as lines to read: the pair's own numbers first, then one line a direction headed
    "actor → partner" (audit.json keeps a direction as ``ab``/``ba`` with its actor and partner)."""
    if not isinstance(signal, Mapping):
        return [("", flatten(signal))] if signal not in (None, {}) else []
    own: list[tuple[str, str]] = []
    lines: list[tuple[str, list[tuple[str, str]]]] = []
    for key, value in signal.items():
        if isinstance(value, Mapping) and "actor" in value and "partner" in value:
            rest = {k: v for k, v in value.items() if k not in ("actor", "partner")}
            lines.append((f"{value['actor']} → {value['partner']}",
                          [(NUMBER_NAMES.get(name, name), shown) for name, shown in flatten(rest)]))
        else:
            own += [(NUMBER_NAMES.get(name, name), shown) for name, shown in flatten(value, f"{key}.")]
    return ([("", own)] if own else []) + lines


def number(x: Any, digits: int = 4) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.2e}" if x != 0 and abs(x) < 1e-3 else f"{x:.{digits}g}"
    return str(x)


def make_app(db_path: str | os.PathLike[str], *, token: str | None = None, reviewer: str | None = None,
             hosts: Iterable[str] | None = None) -> Flask:
    """The review application over the database at ``db_path``. ``token``: the forms' token (default: a new random
    one); ``reviewer``: the name the forms start with; ``hosts``: the Host headers accepted (None: any, for a test
    client)."""
    app = Flask(__name__)
    app.config.update(DB=str(db_path), TOKEN=token or secrets.token_urlsafe(32), REVIEWER=reviewer or "",
                      HOSTS=None if hosts is None else set(hosts))
    app.jinja_env.globals.update(number=number, sentence=sentence, signal_lines=signal_lines)

    def db() -> desk.Cases:
        if "db" not in g:
            g.db = open_cases(app.config["DB"], create=False)
        return g.db  # type: ignore[no-any-return]

    @app.teardown_appcontext
    def close(exc: BaseException | None) -> None:
        found = g.pop("db", None)
        if found is not None:
            found.close()

    @app.before_request
    def only_this_host() -> None:
        allowed = app.config["HOSTS"]
        if allowed is not None and request.host not in allowed:
            abort(400, description="this server answers requests for its own address only")

    @app.after_request
    def headers(resp: Response) -> Response:
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "no-referrer"
        if not request.path.startswith("/looks/"):  # an audit's own page keeps its own policy (its scripts by hash)
            resp.headers["Content-Security-Policy"] = PAGE_POLICY
            resp.headers["X-Frame-Options"] = "DENY"
            resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.errorhandler(CasesError)
    def unusable(e: CasesError) -> tuple[str, int]:
        return render_template("error.html", message=str(e)), 500

    @app.get("/")
    def queue() -> str:
        shown = request.args.get("status", FILTERS[0])
        if shown not in FILTERS:
            abort(400, description=f"status is one of {', '.join(FILTERS)}")
        new, changed = request.args.get("new") == "1", request.args.get("changed") == "1"
        every = desk.list_cases(db())
        counts = {s: sum(c.status == s for c in every) for s in desk.STATUSES} | {"all": len(every)}
        rows = [c for c in every if (shown == "all" or c.status == shown) and (not new or c.new)
                and (not changed or c.changed)]
        looks = desk.looks(db())
        return render_template("queue.html", rows=rows, shown=shown, new=new, changed=changed, counts=counts,
                               filters=FILTERS, last_look=looks[-1] if looks else None, db_name=Path(app.config["DB"]))

    def case_page(case_id: int, error: str | None = None, form: Mapping[str, str] | None = None) -> str:
        try:
            found = desk.show_case(db(), case_id)
        except CasesError:
            abort(404, description=f"no case {case_id}")
        return render_template("case.html", case=found, s=found.summary, error=error, form=form or {},
                               token=app.config["TOKEN"], reviewer=app.config["REVIEWER"],
                               actions=[a for a, allowed in desk.ACTIONS.items() if found.summary.status in allowed],
                               lead=next((h for h in reversed(found.history) if sentence(h.lead)), None),
                               db_name=Path(app.config["DB"]))

    @app.get("/favicon.ico")
    def favicon() -> Response:
        return Response(status=204)  # no icon: a browser asks for one on every page

    @app.get("/case/<int:case_id>")
    def case(case_id: int) -> str:
        return case_page(case_id)

    @app.post("/case/<int:case_id>")
    def decide(case_id: int) -> Any:
        form = request.form
        if not hmac.compare_digest(form.get("token", ""), app.config["TOKEN"]):
            abort(403, description="the form's token is not this server's: reload the page and decide again")
        action = form.get("action", "")
        try:
            version = int(form.get("version", ""))
        except ValueError:
            abort(400, description="the form lacks the case's version")
        try:
            desk.decide(db(), case_id, action, form.get("who", ""), form.get("text") or None, expect_version=version)
        except CasesError as e:
            conflict = "changed since the page was opened" in str(e)
            return case_page(case_id, str(e), {"action": action, "who": form.get("who", ""),
                                               "text": form.get("text", "")}), 409 if conflict else 400
        return redirect(url_for("case", case_id=case_id), code=303)

    @app.get("/looks/<int:look_id>/<path:name>")
    def look_file(look_id: int, name: str) -> Response:
        row = db().conn.execute("SELECT audit_dir FROM looks WHERE look_id = ?", (look_id,)).fetchone()
        if row is None or row[0] is None or not Path(row[0]).is_dir():
            abort(404, description=f"look {look_id}'s audit folder is not here (moved or removed)")
        return send_from_directory(row[0], name)  # a name outside the folder is a 404 (werkzeug's safe_join)

    return app


def make_server(db_path: str | os.PathLike[str], host: str = "127.0.0.1", port: int = 0, *,
                reviewer: str | None = None, token: str | None = None) -> BaseWSGIServer:
    """The review application served on ``host``:``port`` (0: a free port; the server's ``port`` says which), each
    request in a thread. Call ``serve_forever()``, and ``shutdown()`` from another thread to stop."""
    from werkzeug.serving import make_server as werkzeug_server

    app = make_app(db_path, token=token, reviewer=reviewer, hosts=())
    server = werkzeug_server(host, port, app, threaded=True)
    app.config["HOSTS"] = host_names(host, server.port)
    return server


def url_of(server: BaseWSGIServer) -> str:
    host = server.host
    return f"http://{f'[{host}]' if ':' in host else host}:{server.port}/"
