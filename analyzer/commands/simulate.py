"""``analyzer simulate``: write a simulated room (log v1) and its truth file; exit 2 on bad options."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click
import orjson

from analyzer.commands.common import (
    FiniteFloatRange,
    counted,
    help_epilog,
    out_option,
    one_out,
    plain_file_out,
    refuse_inputs,
)
from analyzer.problems import printable
from analyzer.simulate import simulator, simulators

#: The standard room's defaults (analyzer.simulate.room.Options), repeated so --help imports no
#: simulator; a test checks they agree. Other variants' simulators keep their own defaults.
ROOM_DEFAULTS = {"colluders": 1, "style": "share", "share": 0.7, "strength": 1.0, "slow": "auto", "friends": 1,
                 "friend_skill": "novice", "colluder_skill": "regular", "run_length": 30.0}


#: Simulator arguments the command passes from options of its own (not through --option).
OWN_OPTIONS = ("hands", "players", "seed")
#: The largest room: a million people (the simulator holds each one's state; 100,000 take ~4 s to seat).
MAX_PLAYERS = 1_000_000


def _default(name: str) -> str:
    return f"[default for bieqi: {ROOM_DEFAULTS[name]}]"


@click.command("simulate", short_help="Simulate a room with colluders; write its log and truth.",
               epilog=help_epilog("analyzer simulate --hands 2000 --players 20 --colluders 2 -o room.jsonl.gz "
                                  "--truth room.truth.json", "0: room written", "2: usage error (bad option)"))
@click.option("--variant", type=click.Choice(sorted(simulators())), default="bieqi", show_default=True,
              help="Which game the room plays.")
@click.option("--hands", type=click.IntRange(min=0), default=1000, show_default=True, help="Hands in the room.")
@click.option("--players", type=click.IntRange(min=4, max=MAX_PLAYERS), default=16, show_default=True,
              help="People in the room (stable ids p01..).")
@click.option("--colluders", type=click.IntRange(min=0), default=None, help="Colluding pairs. " + _default("colluders"))
@click.option("--style", default=None,
              help="Collusion style: share, feed, block, harm or mixed (bieqi); lend, borrow or both "
                   "(bieqi-borrow). " + _default("style"))
@click.option("--share", type=FiniteFloatRange(0, 1), default=None,
              help="Share of the hands sat together in which a pair colludes. " + _default("share"))
@click.option("--strength", type=FiniteFloatRange(min=0), default=None,
              help="Lambda: a colluder maximises own value + lambda x the partner's. " + _default("strength"))
@click.option("--slow", type=click.Choice(["auto", "yes", "no"]), default=None,
              help="Colluders think longer when they collude (auto: a coin per pair). " + _default("slow"))
@click.option("--friends", type=click.IntRange(min=0), default=None,
              help="Honest friend pairs who sit together. " + _default("friends"))
@click.option("--skill-mix", default=None,
              help="Levels and shares, e.g. novice:0.2,regular:0.6,expert:0.2 [default: the simulator's mix].")
@click.option("--friend-skill", default=None, help="Level of the friends (weak friends). " + _default("friend_skill"))
@click.option("--colluder-skill", default=None, help="Level of the colluders. " + _default("colluder_skill"))
@click.option("--run-length", type=FiniteFloatRange(min=1), default=None,
              help="Mean hands a table sits before it re-forms. " + _default("run_length"))
@click.option("--option", "extra", multiple=True, metavar="NAME=VALUE",
              help="Any other simulator option (numbers read as numbers), e.g. --option seek=0.9.")
@out_option("The room's log (.jsonl or .jsonl.gz).", compressed=True)
@click.option("--truth", type=click.Path(dir_okay=False, allow_dash=True), default=None, multiple=True,
              callback=one_out(plain_file_out),
              help="Where to write the truth (JSON; - for standard output).")
@click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), default=0, show_default=True,
              help="Seed of every random choice: the same seed gives the same output (the simulators take one >= 0).")
def command(variant: str, hands: int, players: int, out: str, truth: str | None, seed: int,
            extra: tuple[str, ...], **options: Any) -> None:
    """Simulate a room of honest players, friends and colluders; write its hands to OUT."""
    from analyzer.logs import atomic_write_bytes, descriptor_of, is_special, open_output, write_records
    from analyzer.progress import Progress

    options = {k: v for k, v in options.items() if v is not None}  # unset: the simulator's own default
    for item in extra:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.UsageError(f"--option {item!r}: expected NAME=VALUE")
        name = name.replace("-", "_")
        if name in OWN_OPTIONS:
            raise click.UsageError(f"--option {item!r}: use the command's own --{name} option")
        options[name] = _number(value)
    if truth is not None:
        fd = descriptor_of(truth)
        if fd is not None and fd == descriptor_of(out):  # `-o - --truth -`
            raise click.UsageError(f"--truth {truth}: the same descriptor as --out; the log and its truth would be mixed "
                                   f"in one stream")
        refuse_inputs([truth], [out])  # the truth must not replace the log (the same path, or a link to it)
        if Path(truth).absolute() == Path(out).absolute() and not is_special(out):
            raise click.UsageError(f"--truth {truth}: the same file as --out")
    _refuse_unknown(variant, options)
    try:
        sim = simulator(variant).simulate(hands=hands, players=players, seed=seed, **options)
    except (ValueError, TypeError, OverflowError) as e:
        raise click.UsageError(str(e)) from e

    with ExitStack() as first:
        # a log written to a stream (-o -, a pipe, a device) cannot be held back until its truth is written: the
        # truth's file is opened before the log's first record, so a truth that cannot be written (a read-only
        # folder, a file in the way) stops the run with nothing sent; it is put in place once the log is written
        held = (first.enter_context(open_output(truth)) if truth and (descriptor_of(out) is not None or is_special(out))
                else None)

        def write_truth() -> None:  # before the log is put in place: a truth that cannot be written leaves no log
            if truth:
                data = orjson.dumps(sim.truth, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
                if held is not None:
                    held.write(data)
                else:
                    atomic_write_bytes(truth, data)

        with Progress("simulate") as bar:  # simulating and writing go together, record by record
            n = write_records(out, counted(sim.records, bar.phase("writing", hands)), then=write_truth)
    click.echo(printable(f"{n} hands written to {out}" + (f", truth to {truth}" if truth else "")), err=True)
    sys.exit(0)


def _refuse_unknown(variant: str, options: dict[str, Any]) -> None:
    """A usage error naming the options ``variant``'s simulator does not take (a simulator with a fixed list of
    arguments would otherwise say "unexpected keyword argument"; those taking any option check them themselves)."""
    import inspect

    params = inspect.signature(simulator(variant).simulate).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = sorted(set(options) - set(params))
    if unknown:
        takes = ", ".join(n for n in params if n not in OWN_OPTIONS)
        raise click.UsageError(f"the {variant} simulator has no option {', '.join(unknown)} (it takes: {takes}; "
                               f"those without a --flag of their own as --option NAME=VALUE)")


def _number(value: str) -> Any:
    import math

    for kind in (int, float):
        try:
            x = kind(value)
        except ValueError:
            continue
        if isinstance(x, float) and not math.isfinite(x):
            raise click.UsageError(f"--option value {value!r} is not a finite number")
        return x
    return value
