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
    proc = _start(["validate", "-", "--jobs", jobs, "--html", str(html)], stdin=subprocess.PIPE)
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


class _Stop(Exception):
    """What the command's SIGTERM handler raises (``cli.Terminated``), here raised by hand."""


def _interrupted_pool() -> object:
    """A process pool whose first ``submit`` was stopped by a signal handler raising inside ``Thread.start`` of the
    pool's manager thread: the thread is on its way but has not said it runs (it waits for a gate that opens when
    someone waits for it to start), and ``submit`` raised. This is the state a SIGTERM landing in ``pool.submit``
    left the audit's pool in (an internal error, exit 3, in one full-suite run)."""
    import _thread
    import threading
    from concurrent.futures import ProcessPoolExecutor

    real_start = threading.Thread.start

    class Gated(threading.Event):
        def __init__(self, gate: threading.Event) -> None:
            super().__init__()
            self.gate = gate

        def wait(self, timeout: float | None = None) -> bool:
            self.gate.set()
            return super().wait(timeout)

    def interrupted(thread: threading.Thread) -> None:
        gate = threading.Event()
        thread._started = Gated(gate)  # type: ignore[attr-defined]
        with threading._active_limbo_lock:  # type: ignore[attr-defined]
            threading._limbo[thread] = thread  # type: ignore[attr-defined]

        def run() -> None:
            gate.wait()
            thread._bootstrap()  # type: ignore[attr-defined]

        _thread.start_new_thread(run, ())
        raise _Stop

    pool = ProcessPoolExecutor(max_workers=1)
    threading.Thread.start = interrupted  # type: ignore[method-assign]
    try:
        with pytest.raises(_Stop):
            pool.submit(abs, -1)
    finally:
        threading.Thread.start = real_start  # type: ignore[method-assign]
    return pool


def test_a_pool_stopped_while_it_started_shuts_down() -> None:
    """``validate.shut_down`` (the validator's and the analysis' pools): the interrupted pool's shutdown, which joined
    the manager thread before it said it runs and raised RuntimeError over the signal, waits for it and ends the
    pool's workers."""
    from analyzer.validate import shut_down

    control = _interrupted_pool()
    with pytest.raises(RuntimeError, match="before it is started"):
        control.shutdown(wait=True, cancel_futures=True)  # type: ignore[attr-defined]
    shut_down(control)
    pool = _interrupted_pool()
    processes = list(pool._processes.values())  # type: ignore[attr-defined]
    assert processes
    shut_down(pool)
    assert not any(p.is_alive() for p in processes)


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
    from analyzer import stopping
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
            "from analyzer import stopping\n"
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
def test_a_pool_stopped_before_its_manager_thread_leaves_no_worker(recorded: bool,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop landing in ``pool.submit`` after the workers were forked, before the pool's manager thread was made
    (``recorded``), or as the second worker was forked, before the pool recorded it: nobody would tell those workers
    to stop, and the command hung at its exit waiting for them (a full-suite run; py-spy showed the command in
    multiprocessing's exit join and both workers waiting for work). ``shut_down`` ends them."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import process as cfp

    from analyzer.validate import pool_children, shut_down

    before = pool_children()
    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
    if recorded:
        class Stopped:
            def __init__(self, *a: object) -> None:
                raise _Stop

        monkeypatch.setattr(cfp, "_ExecutorManagerThread", Stopped)
    else:
        spawn = ProcessPoolExecutor._spawn_process
        calls = []

        def spawning(self: ProcessPoolExecutor) -> None:
            spawn(self)
            calls.append(1)
            if len(calls) == 2:  # forked, then the stop before the pool noted it
                self._processes.pop(max(self._processes, key=lambda pid: self._processes[pid]._identity))  # type: ignore[attr-defined]
                raise _Stop

        monkeypatch.setattr(ProcessPoolExecutor, "_spawn_process", spawning)
    workers: list = []
    try:
        with pytest.raises(_Stop):
            pool.submit(abs, -1)
        workers = [p for p in multiprocessing.active_children() if p.pid not in before]
        assert len(workers) == 2 and all(p.is_alive() for p in workers)
        assert len(pool._processes) == (2 if recorded else 1)  # type: ignore[attr-defined]
        monkeypatch.undo()
        shut_down(pool, before)
        assert not [p for p in workers if p.is_alive()]
    finally:
        for p in workers:
            if p.is_alive():
                p.kill()
                p.join(5)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="forks")
def test_shutting_down_a_pool_never_used_leaves_other_children_alone() -> None:
    """A pool closed before any ``submit`` (no manager thread, nothing forked) is not the interrupted one: a child
    this process started meanwhile for another purpose is not the pool's to kill."""
    import multiprocessing
    import time as _time
    from concurrent.futures import ProcessPoolExecutor

    from analyzer.validate import pool_children, shut_down

    before = pool_children()
    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork"))
    other = multiprocessing.get_context("fork").Process(target=_time.sleep, args=(30,))
    other.start()
    try:
        shut_down(pool, before)
        assert other.is_alive()
    finally:
        other.kill()
        other.join(5)
