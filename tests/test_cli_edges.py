"""The commands' edges without a model: Ctrl-C and a closed pipe end in one line, an interrupt
after an output was written whole says so, `suggest` labels its columns and cuts a history
file's queries as the model cuts the session's, and an empty file name is refused."""

import argparse

import pytest

from mtn_keras import cli, suggest
from mtn_keras.base import outputs
from mtn_keras.client import Suggestion


def test_ctrl_c_is_one_line_and_130(capsys):
    def interrupted():
        raise KeyboardInterrupt

    assert cli.guarded(interrupted, "suggest") == 130
    assert capsys.readouterr().err == "suggest: interrupted; no half-written output is left\n"


def test_an_interrupt_after_the_output_was_written_says_it_is_whole(tmp_path, capsys):
    out = tmp_path / "prepared"

    def prepared_then_interrupted():
        with outputs.staged_directory(str(out), "prepare") as temp:
            (tmp_path / temp / "stats.json").write_text("{}")
        raise KeyboardInterrupt

    assert cli.guarded(prepared_then_interrupted, "prepare") == 130
    assert capsys.readouterr().err == f"prepare: interrupted after {out} was written whole\n"
    assert (out / "stats.json").exists()


def test_a_closed_pipe_ends_quietly(monkeypatch, tmp_path, capsys):
    def closed():
        raise BrokenPipeError

    monkeypatch.setattr("sys.stdout", open(tmp_path / "stdout", "w"))  # a file descriptor
    assert cli.guarded(closed, "suggest") == 141
    assert capsys.readouterr().err == ""


def test_an_empty_file_name_is_refused():
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--history", type=cli.file_name)
    with pytest.raises(SystemExit):
        parser.parse_args(["--history", ""])
    assert parser.parse_args(["--history", "h.txt"]).history == "h.txt"


def test_suggest_names_its_columns():
    ranked = [Suggestion("a", 0.012, "log"), Suggestion("b", 0.004, "model")]
    assert suggest.header(ranked) == "confidence\tsuggestion\tsource"
    assert suggest.header([Suggestion("a", -1.0), Suggestion("b", -2.5)]) == "log prob\tsuggestion"


def test_a_history_file_is_cut_to_the_models_query_length():
    long = "word " * 200_000
    assert suggest.cut_queries(["Red Sox tickets!", long, "?!"], 10) == [
        "red sox tickets",
        " ".join(["word"] * 10),
    ]


@pytest.mark.parametrize(
    "command, argv",
    [
        ("suggest", ["--model", "default", "--history", "", "red sox"]),
        ("suggest", ["--model", "", "red sox"]),
        ("evaluate", ["--model", "default", "--input", "log.txt", "--json", ""]),
        ("export", ["--model", "runs/tiny", "--out", ""]),
        ("rank", ["--model", ""]),
        ("prepare", ["--input", "", "--out", "data/x"]),
    ],
)
def test_every_command_refuses_an_empty_file_name(capsys, command, argv):
    import importlib

    main = importlib.import_module(f"mtn_keras.{command}").main
    with pytest.raises(SystemExit) as refused:
        main(argv)
    assert refused.value.code == 2
    assert "an empty name is no file" in capsys.readouterr().err
