"""`mtn-tui`'s history files without the interface: an empty file name, a failed or empty
import, a log not in the format, and an export that never writes over the store, the log it
reads or an existing file, written 0600 through a temporary file."""

import gzip
import os
import random
import stat

import pytest

from mtn_tui import main as cli
from mtn_tui.history.opening import open_store

HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"


@pytest.fixture(autouse=True)
def no_interface(monkeypatch):
    monkeypatch.setattr(cli, "MtnApp", None)  # opening the interface would fail


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "store" / "history.db"


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.txt.gz"
    with gzip.open(path, "wt") as file:
        file.write(HEADER)
        file.write("42\tlisbon hotels\t2006-03-01 07:17:12\t\t\n")
        file.write("43\tnot mine\t2006-03-01 07:18:12\t\t\n")
    return path


def run(capsys, *argv):
    """mtn-tui's exit code and stderr."""
    with pytest.raises(SystemExit) as done:
        cli.main([str(arg) for arg in argv])
    return done.value.code, capsys.readouterr().err


def stored(path):
    store, _ = open_store(path)
    queries = [entry.query for entry in store.entries()]
    store.close()
    return queries


@pytest.mark.parametrize("option", ["--export-history", "--import-history", "--history", "--model"])
def test_an_empty_file_name_is_refused(capsys, option):
    code, err = run(capsys, option, "")
    assert code == 2 and f"argument {option}: an empty name is no file" in err


def test_a_failed_import_creates_nothing(capsys, tmp_path, store_path):
    code, err = run(
        capsys, "--history", store_path, "--import-history", tmp_path / "no", "--user", 4
    )
    assert code == 2 and "no such file" in err
    assert not store_path.parent.exists()


def test_an_import_that_finds_no_row_of_the_user_says_so(capsys, log, store_path):
    code, err = run(capsys, "--history", store_path, "--import-history", log, "--user", 99999)
    assert code == 2 and err == f"mtn-tui: {log}: no query of user 99999: nothing imported\n"
    assert not store_path.parent.exists()


# Two lines of random bytes (seeded: a line break drawn inside one would make three).
BINARY = b"\n".join(
    random.Random(0).randbytes(size).replace(b"\n", b"x").replace(b"\r", b"x")
    for size in (100_000, 100)
)


@pytest.mark.parametrize(
    "content, bad, first",
    [
        (BINARY, 2, "1: not UTF-8"),
        (b"lisbon hotels\t2006-03-01\nporto\t07:19:00\n", 2, "1: too few"),
        (HEADER.encode() + b"42\tlisbon\t2006-03-01 07:17:12\n42\tbad \xff\t2006-03-01\n", 1, "3:"),
    ],
    ids=["binary", "wrong-columns", "one-line-not-utf8"],
)
def test_a_log_not_in_the_format_is_refused_with_the_first_bad_line(
    capsys, tmp_path, store_path, content, bad, first
):
    path = tmp_path / "queries.txt"
    path.write_bytes(content)
    code, err = run(capsys, "--history", store_path, "--import-history", path, "--user", 42)
    assert code == 2 and " lines are not AOL-format rows" in err and "nothing imported" in err
    assert err.startswith(f"mtn-tui: {bad} of ") and f"the first at {path}:{first}" in err
    assert not store_path.parent.exists()


def test_an_export_is_private_and_replaces_a_file_only_with_force(
    capsys, log, store_path, tmp_path
):
    assert run(capsys, "--history", store_path, "--import-history", log, "--user", 42)[0] == 0
    out = tmp_path / "out.tsv"
    out.write_text("my notes\n")
    os.chmod(out, 0o644)
    code, err = run(capsys, "--history", store_path, "--export-history", out)
    assert code == 2 and err == f"mtn-tui: {out} exists: give --force to replace it\n"
    assert out.read_text() == "my notes\n"
    assert run(capsys, "--history", store_path, "--export-history", out, "--force")[0] == 0
    assert out.read_text() == "lisbon hotels\t2006-03-01 07:17:12\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.txt.gz", "out.tsv", "store"]


@pytest.mark.parametrize("suffix", ["", "-wal"])
def test_an_export_never_writes_over_the_store(capsys, log, store_path, suffix):
    run(capsys, "--history", store_path, "--import-history", log, "--user", 42)
    target = store_path.with_name(store_path.name + suffix)
    code, err = run(capsys, "--history", store_path, "--export-history", target, "--force")
    assert code == 2 and "is the history store itself" in err
    assert stored(store_path) == ["lisbon hotels"]


def test_an_export_never_writes_over_the_log_it_imports(capsys, log, store_path):
    before = log.read_bytes()
    code, err = run(
        capsys,
        "--history",
        store_path,
        "--import-history",
        log,
        "--user",
        42,
        "--export-history",
        log,
        "--force",
    )
    assert code == 2 and "is the log being imported" in err
    assert log.read_bytes() == before and not store_path.parent.exists()


def test_a_killed_export_leaves_nothing_that_looks_complete(
    monkeypatch, capsys, log, store_path, tmp_path
):
    run(capsys, "--history", store_path, "--import-history", log, "--user", 42)

    def killed(_):
        raise KeyboardInterrupt

    monkeypatch.setattr("mtn_tui.history.files.os.fsync", killed)
    code, err = run(capsys, "--history", store_path, "--export-history", tmp_path / "out.tsv")
    assert code == 130 and err == "mtn-tui: interrupted; nothing half-written is left\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.txt.gz", "store"]


def test_a_damaged_store_is_named_in_one_line(capsys, store_path, tmp_path, damaged_store):
    damaged_store(store_path)
    code, err = run(capsys, "--history", store_path, "--export-history", tmp_path / "out.tsv")
    assert code == 1 and err.startswith(f"mtn-tui: {store_path}: the store is damaged (")
    assert err.count("\n") == 1 and not (tmp_path / "out.tsv").exists()


def test_an_export_imports_back_as_it_was(capsys, log, store_path, tmp_path):
    """--export-history writes what --import-history reads, no --user."""
    assert run(capsys, "--history", store_path, "--import-history", log, "--user", 42)[0] == 0
    out = tmp_path / "out.tsv"
    assert run(capsys, "--history", store_path, "--export-history", out)[0] == 0
    other = tmp_path / "other" / "history.db"
    assert run(capsys, "--history", other, "--import-history", out)[0] == 0
    assert stored(other) == stored(store_path) == ["lisbon hotels"]
    again = tmp_path / "again.tsv"
    assert run(capsys, "--history", other, "--export-history", again)[0] == 0
    assert again.read_text() == out.read_text()
    out.write_text("lisbon hotels\t2006-03-01 07:17:12\nno time here\n")
    code, err = run(capsys, "--history", other, "--import-history", out)
    assert code == 2 and f"{out}:2: not a `query TAB time` line" in err


def test_a_secret_across_the_stored_length_is_never_stored_in_part(capsys, store_path, tmp_path):
    """The filter reads the whole query before the store cuts it."""
    path = tmp_path / "log.txt"
    long = "a" * 505 + " 4111 1111 1111 1111"
    path.write_text(
        HEADER + f"42\t{long}\t2006-03-01 07:17:12\t\t\n42\tkept\t2006-03-01 07:18:12\t\t\n"
    )
    assert run(capsys, "--history", store_path, "--import-history", path, "--user", 42)[0] == 0
    assert stored(store_path) == ["kept"]


def test_an_endless_file_is_refused_in_one_line(capsys, store_path):
    """/dev/zero is no regular file: refused before a byte is read."""
    code, err = run(capsys, "--history", store_path, "--import-history", "/dev/zero", "--user", 4)
    assert code == 2 and "not a regular file" in err and err.count("\n") == 1
