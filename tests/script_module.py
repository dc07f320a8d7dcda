"""A script of the repository that is no package's module (benchmarks/, tests/app/), loaded as
one so that a test can call its functions (a module of its own: test files import it by a name
no other file in tests/ has)."""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_script(path):
    """The script at `path` (from the repository's root) run once as a fresh module."""
    path = REPO / path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
