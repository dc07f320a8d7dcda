"""A store in a folder this process may not write is read and exported,
and nothing is created beside it; queries a store locked to the end could not take are saved
to a recovery file that --import-history adds back, said in one line, exit 1."""

import os
import sqlite3
from pathlib import Path

import pytest

from mtn_tui import main as cli
from mtn_tui.history.control import HistoryControl
from mtn_tui.history.opening import open_store


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


class LockedApp:
    """An app whose run adds two queries to a store another program holds locked to the end."""

    def __init__(self, model_path, history_path, **settings):
        self.history = HistoryControl(history_path)

    def run(self):
        self.history.open()
        other = sqlite3.connect(self.history.store.path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        self.history.keep(["lisbon trams", "lisbon\ttram 28"], new_session=True)
        self.history.close()
        other.execute("ROLLBACK")
        other.close()

    @property
    def store(self):
        return self.history.store


def test_queries_a_store_locked_to_the_end_could_not_take_are_saved_and_said(
    tmp_path, monkeypatch, capsys
):
    for name in ("XLA_FLAGS", "TF_XLA_FLAGS"):  # set, so that monkeypatch puts them back
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("mtn_tui.history.store.OPEN_WAIT_S", 0.1)
    monkeypatch.setattr(cli, "MtnApp", LockedApp)
    path = tmp_path / "history.db"
    code, _, err = run(capsys, "--history", str(path))
    [saved] = tmp_path.glob("history.db.unwritten-*.txt")
    assert code == 1 and err == (
        f"mtn-tui: {path}: stayed locked: 2 queries of this run saved in {saved} instead; "
        f"add them with: mtn-tui --history {path} --import-history {saved} --user me\n"
    )
    assert oct(saved.stat().st_mode & 0o777) == "0o600"
    code, out, err = run(
        capsys, "--history", str(path), "--import-history", str(saved), "--user", "me"
    )
    assert code == 0, err
    store, _ = open_store(path)
    assert [entry.query for entry in store.entries()] == ["lisbon trams", "lisbon tram 28"]
    store.close()
