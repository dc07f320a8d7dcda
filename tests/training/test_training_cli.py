"""The train command: outputs, summary, overrides, refusing to overwrite, and --resume."""

import csv
import json

import keras
import pytest
from tiny_training import tiny_fit_args, tiny_train_args

from mtn_keras.train import main


def test_train_writes_the_model_directory(trained_model_dir):
    names = {p.name for p in trained_model_dir.iterdir()}
    assert {
        "model.keras",
        "vocab.txt",
        "config.json",
        "train_summary.json",
        "log.csv",
        "tensorboard",
    } <= names
    summary = json.loads((trained_model_dir / "train_summary.json").read_text())
    for key in (
        "parameters",
        "size_mb",
        "epochs",
        "best_val_loss",
        "best_val_perplexity",
        "seconds_per_epoch",
        "sessions_per_second",
    ):
        assert summary[key] is not None
    assert summary["epochs"] == 4
    assert summary["val_loss"][-1] < summary["val_loss"][0], "validation loss falls"
    config = json.loads((trained_model_dir / "config.json").read_text())
    assert config["model"] == "mtn" and config["train_config"]["warmup_steps"] == 20


def test_refuses_to_overwrite_and_rejects_bad_overrides(
    trained_model_dir, prepared_data, tmp_path, capsys
):
    def refused(args, words):
        assert main(["--data", str(prepared_data), "--preset", "tiny", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err

    refused(["--out", str(trained_model_dir)], "not empty")
    refused(["--out", str(tmp_path / "x"), "--set", "colour=red"], "unknown field")
    assert main(["--data", str(tmp_path), "--preset", "tiny", "--out", str(tmp_path / "y")]) == 2
    assert "missing" in capsys.readouterr().err
    refused(["--out", str(tmp_path / "z"), "--resume"], "no interrupted run")


class Interrupt(keras.callbacks.Callback):
    """Stops training like a kill right after an epoch has finished."""

    def on_epoch_end(self, epoch, logs=None):
        if epoch == 0:
            raise KeyboardInterrupt


@pytest.mark.slow
def test_resume_continues_from_the_last_finished_epoch(prepared_data, tmp_path):
    from mtn_keras.training.fitting import fit_model

    args, keywords = tiny_fit_args(prepared_data, tmp_path, epochs=3)
    with pytest.raises(KeyboardInterrupt):
        fit_model(*args, extra_callbacks=[Interrupt()], **keywords)
    assert (tmp_path / "backup").is_dir()
    summary = fit_model(*args, **keywords)
    with open(tmp_path / "log.csv") as handle:
        epochs = [int(row["epoch"]) for row in csv.DictReader(handle)]
    assert epochs == [0, 1, 2], "no finished epoch is lost or repeated"
    assert summary["epochs"] == 3


def test_the_best_checkpoint_follows_the_selected_column(tmp_path):
    from mtn_keras.training.callbacks import BestCheckpoint

    class Saved:
        def __init__(self):
            self.saves = 0

        def save(self, path):
            self.saves += 1
            open(path, "w").close()

    checkpoint = BestCheckpoint(str(tmp_path / "best.keras"), "val_bleu", "max", best=0.2)
    checkpoint.set_model(Saved())
    for epoch, bleu in enumerate([0.1, 0.3, 0.25, 0.4]):
        checkpoint.on_epoch_end(epoch, {"val_loss": 9.0, "val_bleu": bleu})
    assert checkpoint.model.saves == 2 and checkpoint.best == -0.4


def test_validation_bleu_is_evaluate_s_bleu_of_the_top_suggestion(trained, prepared_data):
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.data.prepared import load_split
    from mtn_keras.model_reports import evaluate
    from mtn_keras.training.callbacks import ValidationBleu

    valid = load_split(str(prepared_data), "valid")
    scorer = ValidationBleu(trained.vocab, valid)
    scorer.set_model(trained.model)
    scorer.on_train_begin()
    logs = {}
    scorer.on_epoch_end(0, logs)
    report = evaluate(trained, valid, decoding=DecodeConfig(source="beam", filters=(), xla=False))
    assert logs["val_bleu"] == pytest.approx(report["bleu"], abs=1e-6)
    precisions = scorer.scores()["precisions"]
    assert precisions[0] > 0 and precisions == pytest.approx(report["precisions"], abs=1e-6)


@pytest.mark.slow
def test_the_best_epoch_can_be_chosen_by_validation_bleu(prepared_data, tmp_path, capsys):
    """--set select=bleu: every epoch logs the validation pairs' BLEU, the kept model is
    the (first) epoch with the highest, and early stopping watches it too."""
    out = tmp_path / "bleu"
    assert main(tiny_train_args(prepared_data, out, 3, "select=bleu")) == 0
    summary = json.loads((out / "train_summary.json").read_text())
    bleu = summary["val_bleu"]
    assert summary["selected_by"] == "val_bleu" and len(bleu) == summary["epochs"] >= 1
    assert summary["best_epoch"] == 1 + bleu.index(max(bleu))
    with open(out / "log.csv") as handle:
        assert [float(row["val_bleu"]) for row in csv.DictReader(handle)] == pytest.approx(bleu)
    bad = ["--data", str(prepared_data), "--preset", "tiny", "--out", str(tmp_path / "x")]
    assert main([*bad, "--set", "select=accuracy"]) == 2
    assert "select must be one of loss, bleu" in capsys.readouterr().err
