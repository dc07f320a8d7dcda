"""The README screenshot script (tools/screenshot.py), run as a developer runs it, with the
fake SavedModel."""

import subprocess
import sys
from pathlib import Path

import pytest
from hang_limit import HANG_S

from mtn_tui.pilot import QUERIES

ROOT = Path(__file__).resolve().parents[2]


def screenshot(*args):
    """`python -m tools.screenshot ARGS` in the repository root: the finished process."""
    command = [sys.executable, "-m", "tools.screenshot", *map(str, args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=HANG_S)


@pytest.mark.slow
def test_screenshot_script_writes_an_svg_of_a_scripted_session(fake_model, tmp_path):
    out = tmp_path / "mtn-tui.svg"
    done = screenshot(out, "--model", fake_model)
    assert done.returncode == 0, done.stderr[-2000:]
    svg = out.read_text()
    assert svg.startswith("<svg")
    for query in QUERIES:
        assert query.replace(" ", "&#160;") in svg


@pytest.mark.slow
def test_screenshot_script_fails_clearly_without_a_model(tmp_path):
    done = screenshot(tmp_path / "out.svg", "--model", tmp_path / "nowhere")
    assert done.returncode == 1
    assert "No screenshot: No model at" in done.stderr and "nowhere" in done.stderr
    assert not (tmp_path / "out.svg").exists()
