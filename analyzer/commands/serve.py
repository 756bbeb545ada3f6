"""``analyzer serve``: the review page over a cases database, on this machine (the optional extra ``serve``)."""

from __future__ import annotations

import logging

import click

from analyzer.commands.cases import db_option, opened
from analyzer.commands.common import fail, help_epilog

DEFAULT_PORT = 8765


@click.command(name="serve", short_help="The review page over the cases, on this machine.", epilog=help_epilog(
    "analyzer serve --db STORE --by ana   # then open http://127.0.0.1:8765/",
    "0: not used: it serves until stopped (Ctrl-C)",
    "2: usage error (another host without --allow-remote, a port in use), no cases database, or the extra is "
    "not installed (pip install -e '.[serve]')"))
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to serve on; another than this machine's needs --allow-remote.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=DEFAULT_PORT, show_default=True,
              help="The port (0: a free one, printed).")
@click.option("--allow-remote", is_flag=True,
              help="Serve on a --host other machines can reach: anyone who reaches it can read and decide cases (there "
                   "is no login).")
@click.option("--by", "who", default=None, help="Your name, filled in the decision forms.")
@click.option("--log-requests", is_flag=True, help="Print a line per request on standard error.")
def command(db_path: str, host: str, port: int, allow_remote: bool, who: str | None, log_requests: bool) -> None:
    """Serve the cases queue and each case's page, and write the decisions made there (dismiss with a reason,
    confirm, reopen, note) to the cases database. Each case links to the case file its looks' audits wrote."""
    try:
        import flask  # noqa: F401
    except ImportError:
        fail("serve", "`analyzer serve` needs the optional extra: pip install -e '.[serve]' (Flask)")
    from analyzer.desk.serve import is_loopback, make_server, url_of
    from analyzer.problems import printable

    if not is_loopback(host) and not allow_remote:
        fail("serve", printable(f"--host {host} is reachable from other machines, and the review page has no login: "
                                f"add --allow-remote to serve there anyway, or leave --host at 127.0.0.1"))
    with opened(db_path) as db:  # there, ours, and at this analyzer's version before anyone opens a page
        path = db.path
    if not log_requests:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    try:
        server = make_server(path, host, port, reviewer=who)
    except OSError as e:
        fail("serve", printable(f"cannot serve on {host}:{port}: {e.strerror or e}"))
    click.echo(printable(f"serving the cases of {path} at {url_of(server)} (Ctrl-C stops)"), err=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
