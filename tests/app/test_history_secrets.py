"""The history keeps no secrets (card numbers by Luhn, social
security numbers, key-like tokens, a password after its word), nothing typed with a leading
space and nothing matching the person's ignore patterns; stored secrets are purged with one
command; an export goes to a file, a new path or standard output, and nothing else; a
dangling link as the store creates nothing (case 7)."""

import gzip
import os
import random
import socket
from pathlib import Path

import pytest
from secret_queries import secret_queries

from mtn_tui import main as cli
from mtn_tui.history.control import HistoryControl
from mtn_tui.history.opening import open_store
from mtn_tui.history.secrets import looks_secret

SECRETS = [
    "password hunter2",
    "chase password hunter2",
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "ssn 078-05-1120",
    "AKIAIOSFODNN7EXAMPLE",
    "pwd: x",
    # each of these once passed the filter
    "my password is hunter2",
    "password for gmail hunter2",
    "my pin is 1234",
    "bank pin code 4821",
    "078 05 1120",
    "078051120",
    "bob@example.com:hunter2",
    "4111  1111  1111  1111",
    "4111.1111.1111.1111",
    "pass: hunter2",
    "pw: hunter2",
    "GB82 WEST 1234 5698 7654 32",
]
PLAIN = [
    "chase bank",
    "gmail password reset",
    "forgot password",
    "bowling pin set",
    "1234 5678 9012 3456",
    "iphone 15 pro max 256gb",
    "route 66 diner",
    "my password is not working",
    "password for gmail",
    "uss hartford ssn 768",
    "rj45 to 25 pin connector",
    "mountain pass 2",
]
AOL_DEV = Path(__file__).resolve().parents[3] / "shared/data/aol/aol-top1000-dev.txt.gz"


@pytest.fixture(autouse=True)
def own_config(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(cli, "MtnApp", None)  # opening the interface would fail


@pytest.mark.parametrize("query", SECRETS)
def test_secrets_are_recognised(query):
    assert looks_secret(query)


@pytest.mark.parametrize("query", PLAIN)
def test_plain_queries_are_not(query):
    assert not looks_secret(query)


def test_at_least_98_percent_of_our_secret_like_queries_are_caught():
    queries = secret_queries()
    missed = [query for query in queries if not looks_secret(query)]
    assert len(queries) >= 100 and len(missed) <= 0.02 * len(queries), missed


@pytest.mark.skipif(not AOL_DEV.exists(), reason=f"{AOL_DEV} is absent")
def test_at_least_999_of_1000_ordinary_queries_of_the_log_are_kept():
    with gzip.open(AOL_DEV, "rt", encoding="utf-8", errors="replace") as log:
        next(log)
        queries = sorted({row.split("\t")[1] for row in log if row.count("\t") >= 2})
    sample = random.Random(0).sample(queries, 1000)
    assert sum(map(looks_secret, sample)) <= 1


def test_the_app_keeps_no_secret_nor_a_query_typed_with_a_leading_space(tmp_path):
    ignore = tmp_path / "history-ignore"
    ignore.write_text("# mine\n\n^bank of \\w+$\n")
    control = HistoryControl(tmp_path / "history.db", ignore=ignore)
    assert control.open() == []
    control.keep(["chase bank", *SECRETS, " private thing", "bank of america", "rome "], True)
    assert [entry.query for entry in control.store.entries()] == ["chase bank", "rome"]
    control.close()


def test_a_bad_ignore_pattern_keeps_nothing_and_says_where(tmp_path):
    ignore = tmp_path / "history-ignore"
    ignore.write_text("fine\n(unclosed\n")
    control = HistoryControl(tmp_path / "history.db", ignore=ignore)
    notes = control.open()
    assert control.store is None and notes[0].startswith(f"History off: {ignore}:2: ")


def run(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_stored_secrets_are_purged_with_one_command(tmp_path, capsys):
    path = tmp_path / "history.db"
    store, _ = open_store(path)
    store.add_many([(query, 1000.0 + n) for n, query in enumerate(["chase bank", *SECRETS])])
    store.close()
    (tmp_path / "config" / "mtn-keras").mkdir(parents=True)
    (tmp_path / "config" / "mtn-keras" / "history-ignore").write_text("chase\n")
    code, out, _ = run(capsys, "--history", str(path), "--purge-secrets")
    assert (
        code == 0
        and out == f"Purged {1 + len(SECRETS)} queries that look like secrets from {path}.\n"
    )
    store, _ = open_store(path)
    assert store.count() == 0
    store.close()
    assert b"hunter2" not in path.read_bytes()


def test_an_export_goes_to_a_file_a_new_path_or_standard_output(tmp_path, capsys):
    path = tmp_path / "history.db"
    store, _ = open_store(path)
    store.add("lisbon hotels", 1_141_197_432.0)
    store.close()
    code, out, err = run(capsys, "--history", str(path), "--export-history", "-")
    assert code == 0 and out == "lisbon hotels\t2006-03-01 07:17:12\n"
    assert err == "Exported 1 queries to standard output.\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "to-stdout").symlink_to("/proc/self/fd/1")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "sock"))
    for target in ("/dev/null", fifo, tmp_path / "to-stdout", tmp_path / "sock"):
        code, out, err = run(capsys, "--history", str(path), "--export-history", str(target))
        assert code == 2 and err == (
            f"mtn-tui: {target} is not a regular file: give a file or a new path (or - for "
            "stdout)\n"
        ), err
        assert not out
    listening.close()
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_a_dangling_link_as_the_store_creates_nothing(tmp_path):
    (tmp_path / "link.db").symlink_to(tmp_path / "missing.db")
    store, notes = open_store(tmp_path / "link.db")
    assert store is None and notes == [
        f"History off: {tmp_path / 'link.db'} is a link to nowhere: give the path of a store."
    ]
    assert not (tmp_path / "missing.db").exists()


def test_a_pattern_that_backtracks_without_end_is_stopped_in_time(tmp_path):
    """Each query gets PATTERN_SECONDS in the patterns; a pattern that
    cannot say in time counts as a match, so the query is not stored."""
    import time

    from mtn_tui.history.filter import HistoryFilter

    ignore = tmp_path / "history-ignore"
    ignore.write_text("(a|aa)+$\n^(a+)+$\n")
    history_filter = HistoryFilter(ignore)
    began = time.monotonic()
    kept = [history_filter.kept("a" * n + "!") for n in range(28, 40)]
    assert time.monotonic() - began < 12 * 0.5 and None in kept
    assert history_filter.kept("cheap flights") == "cheap flights"


def test_a_purge_beside_another_reader_says_where_the_text_stays(tmp_path, capsys):
    """With another program reading, the deleted text stays in the store's
    file (the -wal holds the deletion), and the message says so."""
    import sqlite3

    path = tmp_path / "history.db"
    store, _ = open_store(path)
    store.add_many([("cheap flights", 1000.0), ("password hunter2", 1001.0)])
    store.close()
    reader = sqlite3.connect(path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM queries").fetchone()  # holds its snapshot
    try:
        code, out, err = run(capsys, "--history", str(path), "--purge-secrets")
        assert code == 0 and out.startswith("Purged 1 queries")
        assert "the deleted text stays in that file until the program closes it" in err
        assert b"hunter2" in path.read_bytes()  # what the message says
    finally:
        reader.close()
