"""`python -m mtn_keras.cluster`'s own errors: one line and exit 2 before any Spark work, with
or without pyspark installed."""

import sys

from mtn_keras.cluster.__main__ import main

LOG = "examples/tiny-aol.txt"


def test_without_pyspark_it_says_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    assert main(["--input", LOG, "--out", str(tmp_path / "data")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "pip install 'mtn-keras[cluster]'" in error


def test_an_index_folder_holding_other_files_is_left_alone(tmp_path, capsys):
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "notes.txt").write_text("mine\n", encoding="utf-8")
    command = ["--input", LOG, "--out", str(tmp_path / "data"), "--index", str(tmp_path / "index")]
    for force in ([], ["--force"]):
        assert main(command + force) == 2
        assert "--force replaces only an index" in capsys.readouterr().err
    assert (tmp_path / "index" / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "data").exists()
