"""Progress on a terminal (analyzer.progress): the pre-count never opens what is not a regular file, and a named pipe
is read by the command itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import feed_fifo, legal_lines, on_a_terminal

ONE_SAMPLE = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


needs_pty = pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")




@needs_fifo
@needs_pty
@pytest.mark.parametrize("command", ["decisions", "audit"])
def test_a_named_pipe_on_a_terminal_is_read_by_the_command_not_by_the_progress_count(tmp_path: Path,
                                                                                      command: str) -> None:
    """On a terminal, `decisions` and `audit` count the input's lines first, for the progress bar's ETA. The count
    opened a named pipe (``<(zcat log.gz)``) and read it to its end, so the command itself then read nothing:
    `decisions` said "0 decisions from 0 new hands" and exited 0, `audit` "no valid hands" (exit 2); only on a
    terminal, so a script's run was right and the person's silently empty. Only regular files are counted now."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    writer = feed_fifo(fifo, legal_lines(3))
    extra = ONE_SAMPLE if command == "decisions" else ["--samples", "1", "--dd-samples", "1", "--min-hands", "1"]
    code, stdout, shown = on_a_terminal(command, str(fifo), "-o", str(out), *extra)
    writer.join(timeout=10)
    assert "Traceback" not in shown
    assert code == 0, shown
    if command == "decisions":
        assert "from 3 new hands" in shown, shown
        assert list(out.glob("part-*.parquet"))
    else:
        assert stdout.startswith("3 hands, 6 pairs"), stdout + shown
        assert (out / "audit.json").is_file()


def test_the_progress_count_never_opens_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """The count itself: a FIFO (opening it would wait for a writer), a device, a folder: unknown (None), nothing
    read; regular files, plain and gzip, are counted."""
    import gzip

    from analyzer.progress import count_lines

    plain = tmp_path / "a.jsonl"
    plain.write_bytes(b"1\n2\n3\n")
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress(b"1\n2\n"))
    assert count_lines([str(plain), str(packed)]) == 5
    assert count_lines([str(plain), os.devnull]) is None
    assert count_lines([str(tmp_path)]) is None
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.jsonl"
        os.mkfifo(fifo)
        writer = feed_fifo(fifo, b"4\n")  # so that a count that opens the FIFO reads a line (and fails) instead of waiting
        assert count_lines([str(plain), str(fifo)]) is None
        with open(fifo, "rb") as f:  # the line is still there for the command: the count did not take it
            assert f.read() == b"4\n"
        writer.join(timeout=10)
