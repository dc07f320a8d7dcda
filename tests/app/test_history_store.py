"""The history store: queries in, sessions by gap, deletes that leave no bytes, migration, two
writers, a locked, a corrupt and an unwritable store, and its permissions."""

import gzip
import multiprocessing
import os
import sqlite3
import stat

import pytest

from mtn_tui.history.files import export_tsv, import_queries, user_queries
from mtn_tui.history.opening import default_path, open_store
from mtn_tui.history.store import MAX_QUERY_CHARS, MIGRATIONS, VERSION, HistoryStore, StoreError

HOUR = 3600


@pytest.fixture
def store(tmp_path):
    store, notes = open_store(tmp_path / "data" / "history.db")
    assert notes == []
    yield store
    store.close()


def file_bytes(path):
    """The bytes of the store and of its -wal and -shm files."""
    return b"".join(
        path.with_name(path.name + suffix).read_bytes()
        for suffix in ("", "-wal", "-shm")
        if path.with_name(path.name + suffix).exists()
    )


def test_default_path_is_in_the_user_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "mtn-keras" / "history.db"


def test_a_new_store_is_private(store):
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    store.add("lisbon", 0)
    for suffix in ("-wal", "-shm"):
        part = store.path.with_name(store.path.name + suffix)
        assert stat.S_IMODE(part.stat().st_mode) & 0o077 == 0


def test_queries_come_back_oldest_first(store):
    for when, query in enumerate(["a", "b", "c", "d"]):
        store.add(query, 100 + when)
    store.add("imported long ago", 1)
    assert store.recent(3) == ("b", "c", "d")
    assert store.recent(10) == ("imported long ago", "a", "b", "c", "d")
    assert store.recent(7) == ("imported long ago", "a", "b", "c", "d")
    assert store.recent(0) == ()
    assert store.recent(2, before=102) == ("a", "b")
    assert store.count() == 5


def test_recent_counts_a_repeated_query_once_as_the_model_does(store):
    for when, query in enumerate(["a", "a", "A!", "b", "???", "b", "c"]):
        store.add(query, 100 + when)
    assert store.recent(2) == ("b", "???", "b", "c")  # the model keeps "b" and "c"
    assert store.recent(3) == ("a", "a", "A!", "b", "???", "b", "c")


def test_recent_is_read_again_when_another_instance_writes(store):
    other = HistoryStore(store.path)
    store.add("mine", 1)
    assert store.recent(5) == ("mine",)
    other.add("theirs", 2)
    assert store.recent(5) == ("mine", "theirs")
    other.close()


def test_sessions_are_cut_at_30_minute_gaps_newest_first(store):
    for when, query in [(0, "a"), (29 * 60, "b"), (29 * 60 + 31 * 60, "c"), (5 * HOUR, "d")]:
        store.add(query, when)
    sessions = store.sessions()
    assert [[entry.query for entry in session] for session in sessions] == [
        ["d"],
        ["c"],
        ["a", "b"],
    ]
    assert [[e.query for e in s] for s in store.sessions("B")] == [["a", "b"]]


def test_delete_a_query_a_session_and_everything_leaves_no_text_in_the_file(store):
    store.add("keep this", 0)
    store.add("zanzibar secret", 10)
    store.add("other session", 5 * HOUR)
    secret = next(e for e in store.entries() if e.query == "zanzibar secret")
    store.delete([secret.id])
    assert [e.query for e in store.entries()] == ["keep this", "other session"]
    assert b"zanzibar" not in file_bytes(store.path)
    store.delete([e.id for e in store.sessions()[0]])
    assert [e.query for e in store.entries()] == ["keep this"]
    assert b"other session" not in file_bytes(store.path)
    store.clear()
    assert store.count() == 0 and store.recent(5) == ()
    assert b"keep this" not in file_bytes(store.path)


def test_a_first_version_store_is_migrated_with_its_queries(tmp_path):
    path = tmp_path / "history.db"
    old = sqlite3.connect(path)
    old.executescript(MIGRATIONS[0])
    old.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    old.execute("INSERT INTO schema_version VALUES (1)")
    old.execute("INSERT INTO queries (query, time) VALUES ('from version one', 5)")
    old.commit()
    old.close()
    store, _ = open_store(path)
    assert store.recent(5) == ("from version one",)
    version = store._db.execute("SELECT version FROM schema_version").fetchone()[0]
    assert version == VERSION == 2
    indexes = store._db.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()
    assert ("queries_by_time",) in indexes
    store.close()


def test_a_store_newer_than_the_app_is_left_alone(tmp_path):
    path = tmp_path / "history.db"
    store, _ = open_store(path)
    with store._db:
        store._db.execute("UPDATE schema_version SET version = 99")
    store.close()
    again, notes = open_store(path)
    assert again is None and "newer" in notes[0]
    assert path.exists()


def write_queries(path, name, count):
    """One process's writer: `count` queries, one at a time."""
    store, _ = open_store(path)
    for number in range(count):
        store.add(f"{name} {number}")
    while not store.flush():
        pass
    store.close()


def test_two_writers_in_two_processes_keep_every_query(tmp_path):
    path = tmp_path / "history.db"
    open_store(path)[0].close()
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=write_queries, args=(path, n, 150)) for n in "ab"]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    store, _ = open_store(path)
    queries = {entry.query for entry in store.entries()}
    assert queries == {f"{name} {n}" for name in "ab" for n in range(150)}
    store.close()


def test_a_locked_store_keeps_the_query_in_memory_and_writes_it_later(store):
    store.add("before", 1)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    store.add("while locked", 2)
    assert store.pending == [("while locked", 2)]
    assert store.recent(5) == ("before", "while locked")
    other.execute("ROLLBACK")
    other.close()
    assert store.flush()
    assert [e.query for e in store.entries()] == ["before", "while locked"]


def test_closing_a_store_locked_to_the_end_says_what_was_not_written(monkeypatch, store):
    monkeypatch.setattr("mtn_tui.history.store.OPEN_WAIT_S", 0.1)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    store.add("late", 1)
    assert store.close() is False and store.pending == [("late", 1)]
    other.execute("ROLLBACK")
    other.close()
    store._db = sqlite3.connect(store.path)  # for the fixture's own close


def test_a_corrupt_store_in_the_default_place_is_set_aside_and_a_new_one_made(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    path = default_path()
    path.parent.mkdir()
    path.write_bytes(b"this is not a database, " * 200)
    os.chmod(path, 0o600)
    store, notes = open_store()
    assert store is not None and store.count() == 0
    [aside] = path.parent.glob("history.db.damaged-*")
    assert aside.read_bytes() == b"this is not a database, " * 200
    assert len(notes) == 1 and aside.name in notes[0]
    store.add("after", 1)
    assert store.recent(1) == ("after",)
    store.close()


def test_a_truncated_store_of_ours_is_set_aside_wherever_it_is(tmp_path):
    path = tmp_path / "history.db"
    open_store(path)[0].close()
    path.write_bytes(path.read_bytes()[:1000])
    store, notes = open_store(path)
    assert store is not None and "kept as history.db.damaged-" in notes[0]
    store.close()


def test_a_folder_a_foreign_database_and_other_files_are_refused_and_left_as_they_are(tmp_path):
    folder = tmp_path / "Documents"
    folder.mkdir()
    store, notes = open_store(folder)
    assert store is None and notes == [
        f"History off: {folder} is not a file: give the path of a history store."
    ]
    assert folder.is_dir() and list(tmp_path.iterdir()) == [folder]
    foreign = tmp_path / "contacts.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE people (name TEXT)")
    db.commit()
    db.close()
    before = foreign.read_bytes()
    store, notes = open_store(foreign)
    assert store is None and "a database this app did not make: left as it is" in notes[0]
    assert foreign.read_bytes() == before and not foreign.with_name("contacts.db-wal").exists()
    letter = tmp_path / "letter.txt"
    letter.write_text("dear ...\n" * 50)
    store, notes = open_store(letter)
    assert store is None and notes == [
        f"History off: {letter} is not a history store: left as it is."
    ]
    assert letter.read_text() == "dear ...\n" * 50
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Documents", "contacts.db", "letter.txt"]


def test_a_store_made_before_the_application_id_is_still_ours(tmp_path):
    path = tmp_path / "history.db"
    open_store(path)[0].close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 0")
    db.close()
    store, notes = open_store(path)
    assert store is not None and notes == []
    store.close()


def test_a_read_only_store_is_read_and_left_unchanged(monkeypatch, tmp_path):
    path = tmp_path / "history.db"
    store, _ = open_store(path)
    store.add("lisbon trams", 1)
    store.close()
    before = path.read_bytes()
    monkeypatch.setattr("mtn_tui.history.opening._writable", lambda path: False)
    store, notes = open_store(path)
    assert store.read_only and "is read-only" in notes[0]
    store.add("this run", 2)
    assert store.recent(5) == ("lisbon trams", "this run")
    with pytest.raises(StoreError, match="read-only"):
        store.delete([1])
    assert store.close()
    assert path.read_bytes() == before


def test_a_damaged_page_is_named_when_read(tmp_path, damaged_store):
    path = damaged_store(tmp_path / "history.db")
    store, _ = open_store(path)
    with pytest.raises(StoreError, match="history.db: the store is damaged"):
        store.entries()
    store.close()


def test_a_full_disk_is_named_not_called_locked(store):
    store.add("first", 1)
    store._db.execute("PRAGMA max_page_count = 1")  # every further page: SQLITE_FULL
    store.add_many([(f"query number {n} " * 20, n) for n in range(500)])
    assert store.pending and store.failure == "the disk is full"


def test_a_stored_entry_is_cut_to_the_length_cap(store):
    store.add("word " * 100_000, 1)
    [entry] = store.entries()
    assert len(entry.query) == MAX_QUERY_CHARS


def test_a_delete_with_another_connection_open_leaves_the_text_in_no_file(store):
    store.add("keep", 1)
    store.add("zanzibar secret", 2)
    other = sqlite3.connect(store.path)  # a second app, idle
    assert other.execute("SELECT count(*) FROM queries").fetchone() == (2,)
    assert store.delete([e.id for e in store.entries() if e.query == "zanzibar secret"])
    assert b"zanzibar" not in file_bytes(store.path)
    other.close()


def test_a_delete_while_another_connection_reads_says_the_text_is_still_in_the_wal(
    monkeypatch, store
):
    monkeypatch.setattr("mtn_tui.history.store.OPEN_WAIT_S", 0.2)
    store.add("keep", 1)
    store.add("zanzibar secret", 2)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN")
    other.execute("SELECT * FROM queries").fetchall()  # a read that holds its snapshot
    assert not store.delete([e.id for e in store.entries() if e.query == "zanzibar secret"])
    other.execute("COMMIT")
    assert store.scrub()
    assert b"zanzibar" not in file_bytes(store.path)
    other.close()


def test_a_folder_that_cannot_be_made_means_no_history(tmp_path):
    (tmp_path / "file").write_text("")
    store, notes = open_store(tmp_path / "file" / "mtn-keras" / "history.db")
    assert store is None and notes[0].startswith("History off: cannot write")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_means_no_history(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    store, notes = open_store(folder / "history.db")
    assert store is None and notes[0].startswith("History off")


def test_a_store_readable_by_others_is_reported(tmp_path):
    path = tmp_path / "history.db"
    open_store(path)[0].close()
    os.chmod(path, 0o644)
    store, notes = open_store(path)
    assert store is not None and "open to others (mode 644)" in notes[0]
    store.close()


def test_import_one_user_of_an_aol_log_and_export(store, tmp_path):
    log = tmp_path / "log.txt.gz"
    with gzip.open(log, "wt", encoding="utf-8") as file:
        file.write("AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n")
        file.write("7\tlisbon hotels\t2006-03-01 07:17:12\t\t\n")
        file.write("7\tlisbon hotels\t2006-03-01 07:17:12\t2\thttp://y\n")  # a second click
        file.write("8\tsomeone else\t2006-03-01 07:18:00\t\t\n")
        file.write("7\t-\t2006-03-01 07:19:00\t\t\n")
        file.write("7\tlisbon trams\t2006-03-01 07:20:00\t1\thttp://x\n")
    assert import_queries(store, user_queries(log, "7")) == 2
    assert import_queries(store, user_queries(log, "7")) == 0  # run twice: nothing twice
    assert store.recent(5) == ("lisbon hotels", "lisbon trams")
    out = tmp_path / "out.tsv"
    assert export_tsv(store, out) == 2
    assert out.read_text() == (
        "lisbon hotels\t2006-03-01 07:17:12\nlisbon trams\t2006-03-01 07:20:00\n"
    )
