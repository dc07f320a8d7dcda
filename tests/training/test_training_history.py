"""train with `history_queries`: the MTN trains on its users' histories and is written with
the option; other models and datasets without histories are refused in one line."""

import json
import shutil

import numpy as np

from mtn_keras.data.history import split_histories
from mtn_keras.train import main
from mtn_keras.training.artifacts import load_trained


def train(data, out, *extra, capsys):
    code = main(
        ["--data", str(data), "--preset", "tiny", "--out", str(out), "--verbose", "0", *extra]
    )
    return code, capsys.readouterr().err


def test_the_mtn_trains_on_histories_and_reads_them_when_loaded(prepared_data, tmp_path, capsys):
    out = tmp_path / "out"
    code, err = train(
        prepared_data, out, "--epochs", "1", "--set", "history_queries=4", capsys=capsys
    )
    assert code == 0, err
    summary = json.loads((out / "train_summary.json").read_text())
    assert np.isfinite(summary["best_val_loss"])
    trained = load_trained(str(out), ranking=False)
    assert trained.config.history_queries == 4
    n = trained.config.max_query_tokens
    history = split_histories(str(prepared_data), ("valid",), trained.vocab, n, 4)["valid"]
    line = np.argmax(history.bounds[:, 1] - history.bounds[:, 0] >= 4)  # 4 earlier queries
    hi = history.bounds[line, 1]
    tokens = np.ones((1, 2, n), "int32")
    rows = history.tokens[hi - 4 : hi][None]
    context = trained.model.start(tokens, tokens, history_tokens=rows)["context"]
    np.testing.assert_allclose(np.sum(context["history_attention"]), 1.0, rtol=1e-5)


def test_history_is_refused_for_other_models_and_old_datasets(prepared_data, tmp_path, capsys):
    code, err = train(
        prepared_data,
        tmp_path / "a",
        "--model",
        "hred",
        "--set",
        "history_queries=4",
        capsys=capsys,
    )
    assert code == 2 and "mtn model only" in err and err.count("\n") == 1
    data = shutil.copytree(prepared_data, tmp_path / "data")
    (data / "history.tsv").unlink()
    code, err = train(data, tmp_path / "b", "--set", "history_queries=4", capsys=capsys)
    assert code == 2 and "no history.tsv" in err and err.count("\n") == 1
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
