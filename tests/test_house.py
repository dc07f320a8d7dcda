"""House rules of the code: no module of mtn_keras/ or app/ over MAX_LINES lines, no class
with more than MAX_METHODS methods of its own and no function over MAX_FUNCTION_LINES, so that
each file reads top to bottom; type hints on every public function of mtn_keras/ (mypy checks
them in .ci/run); comments that say why rather than cite an issue a reader of the repository
cannot follow; the developer tools of tools/, the research of studies/ and the tests kept
apart (the tests may import the studies they test)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 350
MAX_METHODS = 20
MAX_FUNCTION_LINES = 60
# Functions still over MAX_FUNCTION_LINES, being split: empty this.
ISSUE_NUMBER = re.compile(r"\b[Ii]ssues?[ -]?#?\d+|\bround[ _-]?\d+\b")


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


def functions(tree, prefix=""):
    """(qualified name, node) of every function and method of `tree`, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from functions(node, name + ".")


def test_no_function_is_over_the_line_limit():
    long = []
    for path in modules():
        where = path.relative_to(ROOT).as_posix()
        for name, node in functions(ast.parse(path.read_text(encoding="utf-8"))):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                long.append(f"{where}:{node.lineno} {name}: {lines} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_no_code_or_test_cites_an_issue_number():
    cited = []
    for folder in ("mtn_keras", "app", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            if ISSUE_NUMBER.search(path.name):
                cited.append(where)
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if ISSUE_NUMBER.search(line):
                    cited.append(f"{where}:{number}: {line.strip()}")
    assert not cited, "say why instead of citing an issue:\n" + "\n".join(cited)


def imported_modules(path):
    """The top-level names of every module that the file at `path` imports."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".")[0]


def module_names(folder):
    """The names the files of `folder` are imported by: the folder's, and each module's own, as
    a script that puts a folder of them on sys.path imports it."""
    return {folder} | {path.stem for path in (ROOT / folder).rglob("*.py")} - {"__init__"}


def test_the_tools_the_studies_and_the_tests_import_nothing_of_each_other():
    apart = [("tests", "tools"), ("tools", "tests"), ("tools", "studies")]
    apart += [("studies", "tests"), ("studies", "tools")]
    crossing = [
        f"{path.relative_to(ROOT)} imports {name}"
        for folder, other in apart
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in imported_modules(path)
        if name in module_names(other)
    ]
    assert not crossing, "\n".join(crossing)
