"""Issue 47, round four: a store in a folder this process may not write is read and exported,
and nothing is created beside it."""

import os
from pathlib import Path

import pytest

from app import main as cli
from app.history_store import open_store


@pytest.fixture(autouse=True)
def own_config(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def run(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_a_store_in_a_folder_one_may_not_write_is_read_and_exported(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "ro"
    store, _ = open_store(folder / "history.db")
    store.add("lisbon trams", 1_141_197_432.0)
    store.close()
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    access = os.access

    def not_writable(path, mode, **kwargs):  # root may write anywhere: as if it may not
        if mode & os.W_OK and Path(path).resolve().is_relative_to(folder):
            return False
        return access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", not_writable)
    out = tmp_path / "export.txt"
    code, _, err = run(
        capsys, "--history", str(folder / "history.db"), "--export-history", str(out)
    )
    assert code == 0, err
    assert out.read_text() == "lisbon trams\t2006-03-01 07:17:12\n"
    assert err.splitlines()[0] == (
        f"History store {folder / 'history.db'} is read-only: read, and this run's queries "
        "not kept."
    )
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before  # no -shm
