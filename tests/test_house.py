"""House rules of the code: no module of mtn_keras/ or app/ over MAX_LINES lines, and no class
with more than MAX_METHODS methods of its own, so that each file reads top to bottom."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 350
MAX_METHODS = 20


def modules():
    """Every .py file of mtn_keras/ and app/, by its path from the repository root."""
    return sorted(path for folder in ("mtn_keras", "app") for path in (ROOT / folder).rglob("*.py"))


def test_no_module_is_over_the_line_limit():
    long = []
    for path in modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, f"over {MAX_LINES} lines:\n" + "\n".join(long)


def test_no_class_has_too_many_methods():
    crowded = []
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = [
                    item
                    for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                ]
                if len(methods) > MAX_METHODS:
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    crowded.append(f"{where} {node.name}: {len(methods)} methods")
    assert not crowded, f"classes with more than {MAX_METHODS} methods:\n" + "\n".join(crowded)
