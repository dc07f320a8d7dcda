"""`train --stream-input`: the training split's batches read from memory-mapped .npy files
beside it train as the in-memory ones do; `auto` streams a large split only; an empty or
damaged input is one clear line."""

import csv
import json
import os

import pytest
from tiny_training import tiny_train_args

from mtn_keras.base.config import configure
from mtn_keras.data.batches import SessionBatches
from mtn_keras.data.prepared import load_stats
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.train import main, parse_args
from mtn_keras.training import prepared_input
from mtn_keras.training.prepared_input import streams


def streamed_folders(data):
    folder = data / "streamed"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def test_the_help_says_when_the_input_streams(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--stream-input {auto,yes,no}" in help_text
    assert "auto (default): yes when train.tsv is 64 MiB or more" in help_text


def test_auto_streams_a_split_of_the_stated_size_or_more(data, monkeypatch):
    size = os.path.getsize(data / "train.tsv")
    assert (streams(str(data), "auto"), streams(str(data), "yes")) == (False, True)
    monkeypatch.setattr(prepared_input, "STREAM_FROM_BYTES", size)
    assert (streams(str(data), "auto"), streams(str(data), "no")) == (True, False)
    monkeypatch.setattr(prepared_input, "STREAM_FROM_BYTES", size + 1)
    assert not streams(str(data), "auto")


@pytest.mark.slow
def test_a_streamed_run_trains_as_an_in_memory_one(data, tmp_path):
    logs, summaries = {}, {}
    for choice in ("no", "yes"):
        out = tmp_path / choice
        args = tiny_train_args(data, out, 1) + ["--steps-per-epoch", "4"]
        assert main([*args, "--stream-input", choice]) == 0
        with open(out / "log.csv") as handle:
            logs[choice] = list(csv.DictReader(handle))[0]
        summaries[choice] = json.loads((out / "train_summary.json").read_text())
    assert len(streamed_folders(data)) == 1
    for key in ("loss", "nll", "val_loss", "val_nll"):
        assert float(logs["yes"][key]) == pytest.approx(float(logs["no"][key]), rel=1e-5), key
    lines = sum(1 for line in (data / "train.tsv").read_text().splitlines() if line.strip())
    assert summaries["yes"]["train_sessions"] == summaries["no"]["train_sessions"] == lines


def expect_refused(code, err, *words):
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("train: ") and all(word in err for word in words), err


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", ["train.tsv holds no session"]),
        (b"red\tblue\n\xff\tbad\n", ["train.tsv:2: not UTF-8"]),
    ],
)
def test_an_empty_or_unreadable_streamed_split_is_one_line(data, tmp_path, train, content, words):
    (data / "train.tsv").write_bytes(content)
    expect_refused(*train(data, tmp_path / "out", "--stream-input", "yes"), *words)
    assert not (tmp_path / "out").exists() and streamed_folders(data) == []


def test_a_damaged_streamed_file_is_named(data, tmp_path, train):
    vocab = Vocabulary.load(str(data / "vocab.txt"))
    model_config, _ = configure("tiny", load_stats(str(data)), len(vocab))
    SessionBatches(str(data / "train.tsv"), vocab, model_config.max_query_tokens, 1, stream=True)
    (folder,) = streamed_folders(data)
    shard = sorted((data / "streamed" / folder).glob("*-session_ext.npy"))[0]
    shard.write_bytes(shard.read_bytes()[:-4])
    code, err = train(data, tmp_path / "out", "--stream-input", "yes")
    expect_refused(code, err, f"{shard}: damaged streamed batches", "delete")
    assert not (tmp_path / "out").exists()
