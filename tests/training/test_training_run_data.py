"""config.json's "data": the prepared dataset's path relative to the run folder (no machine
path in a run folder), resolved against the run folder when read; an absolute one, from an
older run, still read."""

import json
import os
import shutil

from mtn_keras.base.config import ModelConfig, TrainConfig
from mtn_keras.training.artifacts import data_entry, data_path, load_trained, run_config


def test_the_data_path_is_written_relative_to_the_run_folder(tmp_path):
    config = run_config(
        "mtn", ModelConfig(), TrainConfig(), str(tmp_path / "data"), str(tmp_path / "runs" / "a")
    )
    assert config["data"] == os.path.join("..", "..", "data")
    assert data_path(config["data"], str(tmp_path / "runs" / "a")) == str(tmp_path / "data")
    assert data_entry(None, str(tmp_path)) is None and data_path(None, str(tmp_path)) is None


def test_a_moved_run_finds_its_data_and_an_old_absolute_path_still_works(
    trained_model_dir, prepared_data, tmp_path
):
    run, data = tmp_path / "moved" / "runs" / "tiny", tmp_path / "moved" / "data"
    shutil.copytree(trained_model_dir, run, ignore=shutil.ignore_patterns("tensorboard"))
    shutil.copytree(prepared_data, data)
    saved = json.loads((run / "config.json").read_text())
    assert not os.path.isabs(saved["data"])
    (run / "config.json").write_text(json.dumps({**saved, "data": "../../data"}))
    assert load_trained(str(run), ranking=False).data_dir == str(data)
    (run / "config.json").write_text(json.dumps({**saved, "data": str(prepared_data)}))
    assert load_trained(str(run), ranking=False).data_dir == str(prepared_data)
