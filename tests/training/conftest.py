"""Fixtures of the training tests that run the train command on a copy of the prepared data."""

import shutil

import pytest


@pytest.fixture
def data(prepared_data, tmp_path):
    """A copy of the prepared dataset, to damage."""
    return shutil.copytree(prepared_data, tmp_path / "data")


@pytest.fixture
def train(capsys):
    """`train(data, out, *extra)`: the train command, quiet, on the tiny preset; its exit code
    and what it wrote to stderr."""
    from mtn_keras.train import main

    def run(data, out, *extra):
        args = ["--data", str(data), "--preset", "tiny", "--out", str(out), "--verbose", "0"]
        code = main([*args, *extra])
        return code, capsys.readouterr().err

    return run
