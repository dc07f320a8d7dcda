"""Faults injected into `train`: a run folder held by a live run, settings
no run can use, a backup cut by a kill, a log row lost between the backup and the
checkpoint, a run killed before its first epoch, and a loss that turns NaN."""

import csv
import json

import pytest

from mtn_keras.base.outputs import try_lock
from mtn_keras.train import LOCK, TrainInputError, check_out


def test_a_second_run_into_a_live_run_s_folder_is_refused_naming_the_owner(data, tmp_path, train):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text("{}")
    held = try_lock(str(out / LOCK), "train pid 4242 on host elsewhere\n")
    try:
        for extra in ([], ["--resume"]):
            code, err = train(data, out, *extra)
            assert code == 2 and err.count("\n") == 1, err
            assert "in use by a running training (train pid 4242 on host elsewhere)" in err
    finally:
        held.close()
    assert (out / "config.json").read_text() == "{}"


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--set", "weight_decay=nan"], "weight_decay must be a finite number, not nan"),
        (["--set", "weight_decay=-1"], "weight_decay must be at least 0"),
        (["--set", "entropy_weight=inf"], "entropy_weight"),
        (["--set", "label_smoothing=nan"], "label_smoothing"),
        (["--seed", "-1"], "--seed must be in [0, 2**32)"),
    ],
)
def test_settings_that_are_not_finite_are_refused(data, tmp_path, train, extra, words):
    code, err = train(data, tmp_path / "out", *extra)
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "out").exists()


def test_a_run_killed_before_its_first_epoch_can_be_resumed(tmp_path):
    out = tmp_path / "run"
    (out / "tensorboard").mkdir(parents=True)
    (out / "config.json").write_text("{}")
    with pytest.raises(TrainInputError, match="pass --resume"):
        check_out(str(out), resume=False)
    check_out(str(out), resume=True)  # no backup yet: it starts from the first epoch
    (out / "model.keras").write_text("x")
    with pytest.raises(TrainInputError, match="finished"):
        check_out(str(out), resume=True)
    with pytest.raises(TrainInputError, match="no interrupted run"):
        check_out(str(tmp_path / "other"), resume=True)


def test_resume_drops_the_log_rows_after_the_backup_and_a_cut_row(tmp_path):
    from mtn_keras.training.backup import finished_epochs, trim_log

    log = tmp_path / "log.csv"
    log.write_text("epoch,loss,val_loss\n0,2.0,1.5\n1,1.0,0.9\n2,0.8,0.7\n3,0.7,0.")
    assert len(finished_epochs(str(log))) == 4
    log.write_text("epoch,loss,val_loss\n0,2.0,1.5\n1,1.0,0.9\n2,0.8,0.7\n3,0.7")
    assert len(finished_epochs(str(log))) == 3, "a cut row is no finished epoch"
    trim_log(str(log), 2)
    with open(log) as handle:
        assert [row["epoch"] for row in csv.DictReader(handle)] == ["0", "1"]


def test_the_log_row_and_checkpoint_are_written_before_the_backup(tmp_path):
    import keras

    from mtn_keras.base.config import TrainConfig
    from mtn_keras.training.backup import RunBackup
    from mtn_keras.training.callbacks import BestCheckpoint, EpochTimer, fit_callbacks

    callbacks = fit_callbacks(str(tmp_path), str(tmp_path), TrainConfig(), EpochTimer())
    kinds = [type(callback) for callback in callbacks]
    assert (
        kinds.index(keras.callbacks.CSVLogger)
        < kinds.index(BestCheckpoint)
        < kinds.index(RunBackup)
    )


@pytest.mark.slow
def test_a_backup_cut_by_a_kill_falls_back_to_the_previous_one(tmp_path, capsys):
    import keras
    import numpy as np

    from mtn_keras.training.backup import RunBackup, backups, restore_backup

    def model():
        built = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        built.compile(keras.optimizers.Adam(), "mse")
        built.optimizer.build(built.trainable_variables)
        return built

    saved, backup = model(), RunBackup(str(tmp_path / "backup"))
    backup.set_model(saved)
    for epoch in range(3):
        saved.layers[0].kernel.assign(np.full((3, 2), float(epoch), "float32"))
        backup.on_epoch_end(epoch, {"loss": 1.0})
    backup.on_epoch_end(3, {"loss": float("nan")})  # diverged: not backed up
    assert [epoch for epoch, _ in backups(str(tmp_path / "backup"))] == [3, 2]
    newest = tmp_path / "backup" / "epoch-0003.weights.h5"
    newest.write_bytes(newest.read_bytes()[:500])  # what a kill during the write used to leave
    restored = model()
    assert restore_backup(restored, str(tmp_path / "backup")) == 2
    assert float(restored.layers[0].kernel.numpy()[0, 0]) == 1.0
    assert "epoch-0003.weights.h5 cannot be read" in capsys.readouterr().err
    assert restore_backup(model(), str(tmp_path / "none")) == 0


@pytest.mark.slow
def test_a_diverged_run_exits_1_and_keeps_no_nan_model(data, tmp_path, train):
    out = tmp_path / "run"
    code, err = train(
        data,
        out,
        "--model",
        "mnsrf",
        "--set",
        "entropy_weight=1e30",
        "--epochs",
        "2",
        "--steps-per-epoch",
        "2",
    )
    assert code == 1 and err.count("\n") == 1 and "the loss became nan" in err, err
    assert not (out / "model.keras").exists()
    assert "NaN" not in (out / "config.json").read_text()
    assert json.loads((out / "config.json").read_text())["train_config"]["epochs"] == 2
