"""The import graph of the package: no cycle, and no module imports a layer above its own.

Every ``import`` / ``from ... import`` of an ``analyzer`` module is read from the source (module level
and inside functions alike), so a late import cannot hide an upward reach.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "analyzer"

#: Layers, lowest first (docs/design.md). A module may import its own layer or any below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("analyzer.cards", "analyzer.problems", "analyzer.running"),
    ("analyzer.rules",),
    ("analyzer.kernels",),
    ("analyzer.variants",),
    ("analyzer.logs", "analyzer.schema", "analyzer.corrupt", "analyzer.progress"),
    ("analyzer.explain",),
    ("analyzer.validate",),
    ("analyzer.strategy",),
    ("analyzer.simulate", "analyzer.analysis"),
    ("analyzer.audit",),
    ("analyzer.report",),
    ("analyzer.desk",),
    ("analyzer.publish", "analyzer.commands", "analyzer.cli"),
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    best, depth = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and p.count(".") > depth:
                best, depth = i, p.count(".")
    return best


def _imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("analyzer")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")
                base = ".".join(pkg[:len(pkg) - node.level + 1] + ([base] if base else []))
            if base.startswith("analyzer"):
                out.add(base)
                for a in node.names:  # "from analyzer.kernels import bieqi" imports a module
                    if (ROOT.parent / (base + "." + a.name).replace(".", "/")).with_suffix(".py").exists():
                        out.add(f"{base}.{a.name}")
    out.discard(module)
    return out


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p, _module_name(p)) for p in sorted(ROOT.rglob("*.py"))}


GRAPH = _graph()


def test_every_module_has_a_layer():
    assert [m for m in GRAPH if _layer(m) < 0 and m != "analyzer"] == []


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_module_imports_a_layer_above_its_own(module):
    mine = _layer(module)
    upward = sorted(m for m in GRAPH[module] if _layer(m) > mine)
    assert upward == [], f"{module} (layer {mine}) imports upward: {upward}"


def test_the_rule_table_is_a_leaf():
    assert GRAPH["analyzer.cards"] == set()
    assert GRAPH["analyzer.rules"] == {"analyzer.cards"}
    assert all(not m.startswith("analyzer.variants") for k, deps in GRAPH.items() if k.startswith("analyzer.kernels")
               for m in deps)


def test_the_import_graph_has_no_cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if d not in GRAPH:
                continue
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The test above can fail: a module of the rules layer importing a variant is caught."""
    bad = tmp_path / "analyzer" / "rules.py"
    bad.parent.mkdir()
    bad.write_text("def f():\n    from analyzer.variants.bieqi import State\n", encoding="utf-8")
    deps = _imports(bad, "analyzer.rules")
    assert deps == {"analyzer.variants.bieqi"} and _layer("analyzer.variants.bieqi") > _layer("analyzer.rules")


#: What numba compiles with BLAS/LAPACK: analyzer.kernels loads numba with scipy.linalg hidden, so none may appear.
BLAS_NAMES = {"dot", "vdot", "matmul", "linalg", "inner", "outer", "kron", "trace"}


def _blas_uses(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            out.append(f"line {node.lineno}: @")
        elif isinstance(node, ast.Attribute) and node.attr in BLAS_NAMES:
            out.append(f"line {node.lineno}: .{node.attr}")
    return out


@pytest.mark.parametrize("path", [p for p in sorted(ROOT.rglob("*.py")) if "numba" in p.read_text(encoding="utf-8")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_compiled_module_uses_blas(path: Path) -> None:
    assert _blas_uses(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_blas_check_sees_a_dot() -> None:
    assert sorted(_blas_uses(ast.parse("def f(a, b):\n    return np.dot(a, b) + (a @ b)\n"))) == ["line 2: .dot", "line 2: @"]


def test_loading_the_kernels_leaves_scipy_unloaded_and_usable() -> None:
    import subprocess
    import sys

    code = ("import sys, analyzer.kernels.bieqi, numba.np.arraymath as m; "
            "print(any(k.startswith('scipy') for k in sys.modules), m._HAVE_BLAS); import scipy.linalg.cython_blas")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT.parent).stdout.split()
    assert out == ["False", "False"]
