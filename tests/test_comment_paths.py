"""Every test or benchmark file a comment or docstring under analyzer/ and tests/ names (a path under tests/ or
benchmarks/ ending in .py) exists: a file moved or deleted leaves no pointer to nothing behind it."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A path of the repository's tests or benchmarks, as prose names one.
PATH = re.compile(r"(?<![\w./-])((?:tests|benchmarks)/[\w./-]*?\.py)\b")


def _prose(source: str) -> list[tuple[int, str]]:
    """The comments and docstrings of a module, each with its line."""
    out = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.append((first.lineno, first.value.value))
    return out


def named_paths(source: str) -> list[tuple[int, str]]:
    """The test and benchmark paths the comments and docstrings of ``source`` name, with their lines."""
    return [(line + text.count("\n", 0, m.start()), m.group(1)) for line, text in _prose(source)
            for m in PATH.finditer(text)]


def test_the_checker_finds_a_named_path() -> None:
    source = '"""See tests/a/test_x.py."""\n# and benchmarks/run_all.py\nx = "tests/not_prose.py"\n'
    assert named_paths(source) == [(2, "benchmarks/run_all.py"), (1, "tests/a/test_x.py")]


def test_every_test_or_benchmark_path_in_a_comment_exists() -> None:
    missing = []
    for folder in ("analyzer", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, named in named_paths(path.read_text(encoding="utf-8")):
                if not (ROOT / named).is_file():
                    missing.append(f"{path.relative_to(ROOT)}:{line}: {named}")
    assert missing == [], "\n".join(missing)
