"""House rules of the code: no module of mtn_keras/ or app/ over MAX_LINES lines, no class
with more than MAX_METHODS methods of its own, so that each file reads top to bottom, and
type hints on every public function of mtn_keras/ (mypy checks them in .ci/run)."""

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


def public_functions(tree):
    """The module's functions and its classes' methods whose names do not start with "_",
    and every `__init__` (nested functions are no one's API)."""
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for item in inner:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not item.name.startswith("_") or item.name == "__init__":
                    yield item


def test_every_public_function_of_mtn_keras_has_type_hints():
    bare = []
    for path in modules():
        if path.relative_to(ROOT).parts[0] != "mtn_keras":
            continue
        for function in public_functions(ast.parse(path.read_text(encoding="utf-8"))):
            arguments = function.args
            named = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
            named += [star for star in (arguments.vararg, arguments.kwarg) if star is not None]
            unhinted = [
                a.arg for a in named if a.annotation is None and a.arg not in ("self", "cls")
            ]
            if unhinted or function.returns is None:
                where = f"{path.relative_to(ROOT)}:{function.lineno} {function.name}"
                bare.append(f"{where}: {', '.join(unhinted) or 'the return'} without a hint")
    assert not bare, "public functions without type hints:\n" + "\n".join(bare)
