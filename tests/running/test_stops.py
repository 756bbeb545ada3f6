"""Stops: Ctrl-C exits 130 and SIGTERM / SIGHUP 143 / 129, quietly (no "Aborted!", no worker traceback), with no partial
output, no temporary file and no worker left; pools stopped at any point of their life shut down."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _default_stops() -> None:
    """In the command's process before it starts: Ctrl-C, SIGTERM and SIGHUP at their defaults, as a terminal or a job
    scheduler starts a command. A test run under ``nohup`` (SIGHUP ignored) or as a shell's background job (SIGINT
    ignored) passes those on, and the command rightly keeps a stop its caller ignores: the test would read that."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _start(args: list[str], **kw: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # a session of its own: the signal goes to its whole process group, as a terminal sends it
    return subprocess.Popen([sys.executable, "-u", "-m", "analyzer.cli", *args], env=env, start_new_session=True,
                            preexec_fn=_default_stops, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            **kw)  # type: ignore[call-overload]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_during_validate_exits_130_quietly(jobs: str, tmp_path: Path) -> None:
    html = tmp_path / "v.html"
    proc = _start(["validate", "-", "--jobs", jobs, "-o", str(html)], stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"x\n" * 8192)  # more batches than the workers hold in flight: results come back
    proc.stdin.flush()
    first = proc.stdout.readline()  # the run is under way: it streams its first problem
    assert b"[not-json]" in first
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    proc.stdin.close()
    assert proc.returncode == 130
    assert err == b"", err.decode(errors="replace")
    assert not html.exists()


def test_ctrl_c_during_simulate_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "room.jsonl"
    proc = _start(["simulate", "--hands", "300000", "--players", "8", "--out", str(out), "--truth",
                   str(tmp_path / "truth.json")])
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".room.jsonl.") for p in tmp_path.iterdir()):  # it is writing
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert err == b"", err.decode(errors="replace")
    assert list(tmp_path.iterdir()) == []


def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path: Path) -> None:
    """`analyzer validate ... | head -1`: exit 2, no BrokenPipeError traceback."""
    import gzip

    gz = tmp_path / "bad.jsonl.gz"
    gz.write_bytes(gzip.compress(b"x\n" * 200_000))
    proc = _start(["validate", str(gz)])
    assert proc.stdout is not None and proc.stderr is not None
    assert b"[not-json]" in proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 2
    assert err == b"", err.decode(errors="replace")


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: /proc)."""
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(d.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _audit_with_workers(tmp_path: Path) -> tuple[subprocess.Popen[bytes], list[int], Path, Path]:
    """``audit --jobs 2`` of 1,000 hands, once its worker processes run; its TMPDIR and --out."""
    import gzip

    log = tmp_path / "room.jsonl"
    with gzip.open(ROOT / "samples" / "demo-room.jsonl.gz", "rt") as f:
        log.write_text("".join(line for _, line in zip(range(1000), f)))
    tmp, out = tmp_path / "tmp", tmp_path / "out"
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "analyzer.cli", "audit", str(log), "-o", str(out), "--jobs", "2"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_default_stops)
    deadline = time.monotonic() + 120
    while len(kids := [k for k in _children(proc.pid) if b"audit" in Path(f"/proc/{k}/cmdline").read_bytes()]) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, "the audit's workers never started"
        time.sleep(0.05)
    return proc, kids, tmp, out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_unwinds_like_ctrl_c(sig: str, tmp_path: Path) -> None:
    """A job scheduler's stop (SIGTERM to the main process only, not its group): exit 128 + the signal, no output, no
    temporary folder, and the pool's workers end with it (they used to run on, orphaned, holding their memory)."""
    proc, kids, tmp, out = _audit_with_workers(tmp_path)
    os.kill(proc.pid, getattr(signal, sig))
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # the stacks the stop's watchdog wrote after stopping.STOP_GRACE_S say where
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"no exit 120 s after {sig}; its standard error:\n{err.decode(errors='replace')[-20000:]}")
    assert proc.returncode == 128 + getattr(signal, sig), err.decode(errors="replace")
    assert err == b"", err.decode(errors="replace")
    assert list(tmp.iterdir()) == []
    assert not out.exists()
    deadline = time.monotonic() + 30
    while any(_alive(k) for k in kids):
        assert time.monotonic() < deadline, "the workers outlived the audit"
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """SIGKILL leaves no chance to clean up; the workers at least notice their parent is gone and end."""
    proc, kids, _, _ = _audit_with_workers(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=120)
    deadline = time.monotonic() + 30
    while any(_alive(k) for k in kids):
        assert time.monotonic() < deadline, "the workers outlived their parent"
        time.sleep(0.05)


@pytest.fixture
def ctrl_c_raises():  # type: ignore[no-untyped-def]
    """Ctrl-C's Python default in this process (a KeyboardInterrupt in the main thread), whatever the runner set."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _new_children(before: set[int | None]) -> list:  # type: ignore[type-arg]
    import multiprocessing

    return [p for p in multiprocessing.active_children() if p.pid not in before]


def _pool_children() -> set[int | None]:
    import multiprocessing

    return {p.pid for p in multiprocessing.active_children()}


def _kill(workers: list) -> None:  # type: ignore[type-arg]
    for p in workers:
        if p.is_alive():
            p.kill()
            p.join(5)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="forks its workers")
def test_a_pool_stopped_while_it_started_shuts_down(ctrl_c_raises: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C landing in a pool's first ``submit`` as it starts the pool's manager thread (its workers forked): by
    ``pool.submit`` itself it leaves a thread never started, which the pool's shutdown cannot join (RuntimeError over
    the signal's clean exit); through ``pools.submit`` it acts once the submit is whole, and ``shut_down`` ends the
    pool's workers."""
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    from analyzer.running import pools

    real_start = threading.Thread.start

    def interrupted(thread: threading.Thread) -> None:
        # only the pool's own start, in this thread: a thread the test runner starts meanwhile (xdist's channel) must
        # not carry a Ctrl-C to a random place of the main thread
        if threading.current_thread() is threading.main_thread():
            signal.raise_signal(signal.SIGINT)
        real_start(thread)

    fork = multiprocessing.get_context("fork")
    before = _pool_children()
    control = ProcessPoolExecutor(max_workers=1, mp_context=fork)
    monkeypatch.setattr(threading.Thread, "start", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            control.submit(abs, -1)
        monkeypatch.undo()
        with pytest.raises(RuntimeError, match="before it is started"):
            control.shutdown(wait=True, cancel_futures=True)
    finally:
        monkeypatch.undo()
        _kill(_new_children(before))
    pool = pools.new_pool(1, fork)
    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pools.submit(pool, abs, -1)
    monkeypatch.undo()
    workers = _new_children(before)
    try:
        assert workers and all(p.is_alive() for p in workers)
        pools.shut_down(pool)
        assert not any(p.is_alive() for p in workers)
    finally:
        _kill(workers)


#: A script that has a SIGTERM land inside the parent's after-fork callback (where ``logging``'s lock release runs: a
#: stop raised there is one CPython swallows, "Exception ignored in ..."), then runs the command line given.
_SWALLOWED = """
import os, signal, sys, time
sent = []
def hook():
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # the handler runs here, inside the callback
os.register_at_fork(after_in_parent=hook)
from analyzer.cli import main
sys.argv[0] = "analyzer"
main()
"""


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="needs os.register_at_fork")
def test_a_stop_swallowed_in_an_after_fork_callback_still_stops_the_command(tmp_path: Path) -> None:
    """A SIGTERM whose exception CPython swallowed (it landed in an after-fork callback as the pool forked its workers:
    once in a full-suite run the audit then went on, wrote its outputs and exited 1) is noted by the handler: the
    command publishes nothing, exits 128 + 15, and says nothing of the swallowed exception."""
    import gzip

    log = tmp_path / "room.jsonl"
    with gzip.open(ROOT / "samples" / "demo-room.jsonl.gz", "rt") as f:
        log.write_text("".join(line for _, line in zip(range(300), f)))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", _SWALLOWED, "audit", str(log), "-o", str(out), "--jobs", "2",
                        "--samples", "1", "--dd-samples", "0"], env=env, capture_output=True, timeout=300)
    assert r.returncode == 128 + signal.SIGTERM, r.stderr.decode(errors="replace")
    assert b"Exception ignored" not in r.stderr and b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
    assert not out.exists()


def test_an_output_set_publishes_nothing_once_a_stop_was_noted(tmp_path: Path) -> None:
    """:class:`analyzer.logs.OutputSet` with a stop noted (its exception swallowed): nothing moved into place, the folder
    it made removed, and the stop raised from there (exit 128 + the signal)."""
    from analyzer.running import stops as stopping
    from analyzer.logs import OutputSet

    out = tmp_path / "out"
    stopping.note(signal.SIGTERM)
    try:
        with pytest.raises(stopping.Terminated) as got:
            with OutputSet(out, ["a.txt"]) as tmp:
                (tmp / "a.txt").write_text("x")
    finally:
        stopping.forget()
    assert got.value.exit_code == 128 + signal.SIGTERM
    assert not out.exists()
    with OutputSet(out, ["a.txt"]) as tmp:  # none noted: published
        (tmp / "a.txt").write_text("x")
    assert (out / "a.txt").read_text() == "x"


@pytest.mark.parametrize("cancelled", [False, True])
def test_a_stop_whose_clean_up_hangs_says_where(cancelled: bool) -> None:
    """A stop noted arms faulthandler's watchdog: a process still running ``STOP_GRACE_S`` later writes every thread's
    stack to standard error (the clean-up that hung is then found in the log, not guessed); a stop forgotten (the
    command line's handlers put back, a caller going on) disarms it."""
    code = ("import time\n"
            "from analyzer.running import stops as stopping\n"
            "stopping.STOP_GRACE_S = 0.3\n"
            "def cleaning_up():\n"
            "    time.sleep(1.5)\n"
            "stopping.note(15)\n"
            + ("stopping.forget()\n" if cancelled else "")
            + "cleaning_up()\n")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, timeout=60)
    assert proc.returncode == 0
    err = proc.stderr.decode(errors="replace")
    if cancelled:
        assert err == ""
    else:
        assert "most recent call first" in err and "cleaning_up" in err


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="forks its workers")
@pytest.mark.parametrize("recorded", [True, False])
def test_a_pool_stopped_before_its_manager_thread_leaves_no_worker(recorded: bool, ctrl_c_raises: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop landing in ``pool.submit`` after the workers were forked, before the pool's manager thread was made
    (``recorded``), or as the second worker was forked, before the pool recorded it: acting there it would leave
    workers that nobody tells to stop (the command then waits for them at its exit). ``pools.submit`` lets it act once
    the submit is whole: every worker is the pool's, and ``shut_down`` ends them all."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import process as cfp

    from analyzer.running import pools

    before = _pool_children()
    pool = pools.new_pool(2, multiprocessing.get_context("fork"))
    if recorded:
        class Stopped(cfp._ExecutorManagerThread):  # type: ignore[misc,name-defined]
            def __init__(self, *a: object) -> None:
                signal.raise_signal(signal.SIGINT)
                super().__init__(*a)

        monkeypatch.setattr(cfp, "_ExecutorManagerThread", Stopped)
    else:
        spawn = ProcessPoolExecutor._spawn_process  # type: ignore[attr-defined]
        calls = []

        def spawning(self: ProcessPoolExecutor) -> None:
            calls.append(1)
            if len(calls) == 2:  # the first forked, the stop before the second is
                signal.raise_signal(signal.SIGINT)
            spawn(self)

        monkeypatch.setattr(ProcessPoolExecutor, "_spawn_process", spawning)
    workers: list = []  # type: ignore[type-arg]
    try:
        with pytest.raises(KeyboardInterrupt):
            pools.submit(pool, abs, -1)
        monkeypatch.undo()
        workers = _new_children(before)
        assert len(workers) == 2 and all(p.is_alive() for p in workers)
        pools.shut_down(pool)
        assert not [p for p in workers if p.is_alive()]
    finally:
        _kill(workers)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="forks")
def test_shutting_down_a_pool_never_used_leaves_other_children_alone() -> None:
    """A pool closed before any ``submit`` (no manager thread, nothing forked) is not the interrupted one: a child
    this process started meanwhile for another purpose is not the pool's to kill."""
    import multiprocessing
    import time as _time
    from concurrent.futures import ProcessPoolExecutor

    from analyzer.running.pools import shut_down

    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
    other = multiprocessing.get_context("fork").Process(target=_time.sleep, args=(30,))
    other.start()
    try:
        shut_down(pool)
        assert other.is_alive()
    finally:
        other.kill()
        other.join(5)
