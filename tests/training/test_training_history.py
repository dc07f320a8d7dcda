"""train with `history_queries`: the MTN trains on its users' histories and is written with
the option; other models and datasets without histories are refused in one line."""

import json
import shutil

import numpy as np

from mtn_keras.data.encode import encode_session
from mtn_keras.data.history import split_histories
from mtn_keras.data.prepared import load_split
from mtn_keras.data.vocab import BOS
from mtn_keras.train import main
from mtn_keras.training.artifacts import load_trained


def train(data, out, *extra, capsys):
    code = main(
        ["--data", str(data), "--preset", "tiny", "--out", str(out), "--verbose", "0", *extra]
    )
    return code, capsys.readouterr().err


def test_the_mtn_trains_on_histories_and_reads_them_when_loaded(
    prepared_data, tmp_path, capsys, monkeypatch
):
    """Trains: every weight of the history layers (the history's slots and the reader) has
    moved from where it stood when fitting began, which needs batches that carry the
    histories (a forward pass without them leaves those layers out of the gradient).
    Reads when loaded: the loaded model's first next-token distribution for one session
    changes with its history, and not when the history only gains padding in front (its
    history attention sums to 1 each time)."""
    from mtn_keras.training import fitting

    before = []
    fit = fitting._train

    def weights_then_fit(job, model, *args):
        before.extend((v.path, np.array(v)) for v in model.weights if "history" in v.path)
        return fit(job, model, *args)

    monkeypatch.setattr(fitting, "_train", weights_then_fit)
    out = tmp_path / "out"
    code, err = train(
        prepared_data, out, "--epochs", "1", "--set", "history_queries=4", capsys=capsys
    )
    assert code == 0, err
    summary = json.loads((out / "train_summary.json").read_text())
    assert np.isfinite(summary["best_val_loss"])
    trained = load_trained(str(out), ranking=False)
    assert trained.config.history_queries == 4
    after = [np.array(v) for v in trained.model.weights if "history" in v.path]
    assert len(after) == len(before) >= 8  # the same layers, in the same order
    assert [path for (path, old), new in zip(before, after) if np.array_equal(old, new)] == []

    n = trained.config.max_query_tokens
    history = split_histories(str(prepared_data), ("valid",), trained.vocab, n, 4)["valid"]
    lines = np.flatnonzero(history.bounds[:, 1] - history.bounds[:, 0] >= 4)  # 4 earlier
    rows = [history.tokens[history.bounds[i, 1] - 4 : history.bounds[i, 1]] for i in lines]
    other = next(r for r in rows[1:] if not np.array_equal(r, rows[0]))
    session = encode_session(load_split(prepared_data, "valid")[lines[0]], trained.vocab, n)

    def next_token(history_rows):
        """Log probabilities of the first token of the query after the session."""
        tokens, ext = session.tokens[None], session.ext[None]
        state = trained.model.start(tokens, ext, history_tokens=history_rows[None])
        np.testing.assert_allclose(np.sum(state["context"]["history_attention"]), 1, rtol=1e-5)
        return np.asarray(trained.model.step(np.array([BOS], "int32"), state, 0)[0])

    own, words = next_token(rows[0]), slice(0, len(trained.vocab))  # then the copy slots
    assert np.abs(next_token(other)[:, words] - own[:, words]).max() > 1e-6  # unread: 0
    padded = np.concatenate([np.zeros((2, n), "int32"), rows[0][2:]])
    np.testing.assert_allclose(next_token(padded), next_token(rows[0][2:]), atol=1e-5)


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
