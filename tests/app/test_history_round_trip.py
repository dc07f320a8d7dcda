"""The history store, nothing lost and nothing doubled: its export imports back as itself
(sub-second times, the text as typed, year 1), an export file that is not text is refused by
line, a store locked when the app starts keeps the run's queries, and the secrets filter is
linear, bounded and off the caller's thread."""

import subprocess
import sys
import threading
import time

import pytest
from hang_limit import HANG_S

from mtn_tui.history import secrets
from mtn_tui.history.control import HistoryControl
from mtn_tui.history.files import export_tsv, import_queries, read_history_file
from mtn_tui.history.filter import HistoryFilter
from mtn_tui.history.opening import open_store
from mtn_tui.screens.history_screen import session_label

YEAR_ONE = -62_135_596_800.0  # 0001-01-01 00:00:00 UTC


@pytest.fixture
def store(tmp_path):
    store, notes = open_store(tmp_path / "history.db")
    assert notes == []
    yield store
    store.close()


def exported(store, path):
    export_tsv(store, path)
    return path.read_text(encoding="utf-8")


def test_an_export_imported_back_adds_nothing_and_another_store_gets_it_exactly(store, tmp_path):
    typed = time.time()  # as the app stores a query: to the microsecond
    store.add_many(
        [
            ("lisbon trams", typed),
            ("café\u00a0lisbon  28", typed + 0.25),  # a no-break space and two spaces
            ("porto", 1_141_197_432.9996),  # the millisecond rounds up to a whole second
            ("year one", YEAR_ONE),
        ]
    )
    text = exported(store, tmp_path / "export.tsv")
    assert "café\u00a0lisbon  28\t" in text and "year one\t0001-01-01 00:00:00\n" in text
    timed = read_history_file(tmp_path / "export.tsv", None)
    assert import_queries(store, timed) == 0 and store.count() == 4
    other, _ = open_store(tmp_path / "other.db")
    assert import_queries(other, timed) == 4
    assert exported(other, tmp_path / "again.tsv") == text
    assert "1-01-01 00:00 · 1 query" in session_label(other.sessions()[-1]).plain
    other.close()


def test_an_older_export_in_whole_seconds_imports_back_as_itself(store, tmp_path):
    store.add("lisbon trams", 1_141_197_432.75)
    older = tmp_path / "older.tsv"
    older.write_text("lisbon trams\t2006-03-01 07:17:12\n")  # its fraction was cut
    assert import_queries(store, read_history_file(older, None)) == 0


@pytest.mark.parametrize(
    "content, line",
    [
        (b"lisbon\t2006-03-01 07:17:12\ncaf\xe9\t2006-03-01 07:18:12\n", 2),  # Latin-1
        (b"\x00\x01\x02\t2006-03-01 07:17:12\n", 1),
    ],
    ids=["latin-1", "binary"],
)
def test_an_export_line_that_is_not_text_is_refused_by_file_and_line(tmp_path, content, line):
    path = tmp_path / "export.tsv"
    path.write_bytes(content)
    with pytest.raises(Exception, match=f"^{path}:{line}: not UTF-8 text: nothing imported$"):
        read_history_file(path, None)


def test_an_export_with_a_30_mib_line_is_refused_at_once(tmp_path):
    path = tmp_path / "export.tsv"
    with open(path, "w", encoding="utf-8") as file:
        file.write("lisbon\t2006-03-01 07:17:12\n" + "a" * (30 << 20) + "\t2006-03-01 07:18:12\n")
    code = "import sys; from mtn_tui.main import main; main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", code, "--history", str(tmp_path / "h.db"), "--import-history"]
        + [str(path)],
        capture_output=True,
        text=True,
        timeout=HANG_S,  # the refusal reads one line past its bound
    )
    assert done.returncode == 2
    assert done.stderr == f"mtn-tui: {path}:2: a line longer than 65,536 bytes\n"


def hold(path):
    """Another program's connection holding the store's write lock."""
    import sqlite3

    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    return other


def test_a_store_locked_when_the_app_starts_keeps_the_runs_queries(tmp_path, monkeypatch):
    monkeypatch.setattr("mtn_tui.history.store.OPEN_WAIT_S", 0.2)
    path = tmp_path / "history.db"
    store, _ = open_store(path)
    store.add("before", 1.0)
    store.close()
    other = hold(path)
    control = HistoryControl(path, ignore=tmp_path / "no-ignore-file")
    assert control.open() == [
        f"History store {path} is locked by another program: this run's queries wait in "
        "memory and are written once it is free."
    ]
    control.keep(["lisbon trams"], new_session=True)
    control.write_pending()
    assert control.store.pending == [("lisbon trams", control.session_began)]
    other.execute("ROLLBACK")
    other.close()
    control.write_pending()
    assert control.store.pending == []
    control.close()
    store, _ = open_store(path)
    assert [entry.query for entry in store.entries()] == ["before", "lisbon trams"]
    store.close()


class Tripwire:
    """A pattern that fails the test if it is ever used."""

    def __getattr__(self, name):
        raise AssertionError("a check read a query longer than anyone types")


def test_a_query_longer_than_anyone_types_is_judged_without_reading_it(monkeypatch):
    for name in ("CREDENTIAL", "PRIVATE_KEY", "KEY_LIKE", "CARD", "SSN", "IBAN"):
        monkeypatch.setattr(secrets, name, Tripwire())
    query = "a" * (64 << 10)
    assert secrets.looks_secret(query) and HistoryFilter(path="/nonexistent").kept(query) is None


def cost(text):
    """The least CPU time of three judgements of `text`, each repeated to about 20 ms."""
    best = float("inf")
    for _ in range(3):
        runs, start = 0, time.process_time()
        while (spent := time.process_time() - start) < 0.02:
            secrets.holds_secret(text)
            runs += 1
        best = min(best, spent / runs)
    return best


@pytest.mark.parametrize("unit", ["a", "1", "a.", "a-", "begin "])
def test_the_secrets_filter_is_linear_in_the_querys_length(unit):
    short, long = (unit * (size // len(unit)) for size in (16 << 10, 64 << 10))
    assert cost(long) / cost(short) < 8  # linear: 4; the quadratic patterns were 16


def test_the_filter_judges_off_the_callers_thread_and_close_stores_what_it_kept(
    tmp_path, monkeypatch
):
    control = HistoryControl(tmp_path / "history.db", ignore=tmp_path / "no-ignore-file")
    control.open()
    judged = threading.Event()
    kept = control.filter.kept

    def slow(typed):
        assert judged.wait(60) and threading.current_thread() is not threading.main_thread()
        return kept(typed)

    monkeypatch.setattr(control.filter, "kept", slow)
    future = control.keep_later(["lisbon trams", "password hunter2"], new_session=True)
    assert not future.done()  # the caller goes on while the filter works
    control.write_pending()
    assert control.store.count() == 0
    judged.set()
    control.close()
    store, _ = open_store(tmp_path / "history.db")
    assert [entry.query for entry in store.entries()] == ["lisbon trams"]
    store.close()
