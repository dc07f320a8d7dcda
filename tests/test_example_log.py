"""The example log a newcomer tries every command on: it is what its
script writes, `prepare` reads it with the README's options, and the README's walk-through
runs on it end to end."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limit import HANG_S

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "examples" / "tiny-aol.txt"


def walk_through():
    """The commands of the README's "Try every command on the example log" block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Try every command on the example log", 1)[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line and not line.startswith("#")]


def test_the_example_log_is_what_its_script_writes():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from make_tiny_aol import tiny_log
    finally:
        sys.path.remove(str(ROOT / "examples"))
    assert LOG.read_text(encoding="utf-8") == "\n".join(tiny_log()) + "\n"


def test_prepare_reads_the_example_log_as_the_readme_says(tmp_path, capsys):
    from mtn_keras.data.prepared import load_split
    from mtn_keras.prepare import main

    command = walk_through()[0]
    assert command[:3] == ["python", "-m", "mtn_keras.prepare"]
    out = tmp_path / "tiny"
    args = command[3:]
    args[args.index("--out") + 1] = str(out)
    args[args.index("--input") + 1] = str(LOG)
    assert main(args) == 0
    assert re.search(r"malformed +0\n", capsys.readouterr().out)
    sizes = {split: len(load_split(out, split)) for split in ("train", "valid", "test")}
    assert sizes == {"train": 144, "valid": 18, "test": 18}


@pytest.mark.slow
def test_the_readme_walk_through_runs_on_the_example_log(tmp_path):
    """Every command of the block, in a fresh folder holding only examples/; the app's line
    is left out (it waits for keys) and its model opened as the app opens it instead."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commands = walk_through()
    assert commands[-1] == ["mtn-tui", "--model", "runs/tiny"]
    for command in commands[:-1]:
        assert command[0] == "python"
        run = subprocess.run(
            [sys.executable, *command[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
        assert run.returncode == 0, f"{shlex.join(command)}: {run.stderr[-2000:]}"
        if command[2] == "mtn_keras.train":  # a line per epoch in a pipe, not a progress bar
            assert "\r" not in run.stdout and re.search(r"^\d+/\d+ - \d+s - ", run.stdout, re.M)
    from mtn_tui.model import LocalModel

    app_model = LocalModel(tmp_path / "runs" / "tiny")
    assert app_model.suggestions(["pizza delivery"])
