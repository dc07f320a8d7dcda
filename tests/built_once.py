"""Folders built once per test run and shared by pytest-xdist's workers (a module of its own:
the conftest files import it by a name no other file in tests/ has)."""

import fcntl
import os
import shutil


def built_once(tmp_path_factory, name, build):
    """The folder `name` that `build(folder)` writes, built once per test run: under
    pytest-xdist the first worker to ask builds it, holding a lock the others wait on, and
    every worker then reads that one folder."""
    root = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        root = root.parent  # the run's folder, above each worker's own
    shared = root / "built-once"
    folder, key = shared / name, name.replace("/", "-")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / f"{key}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            (shared / f"{key}.done").touch()
    return folder
