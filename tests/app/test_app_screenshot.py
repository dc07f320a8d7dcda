"""The README screenshot script, run with the fake SavedModel."""

import pytest

from tools import app_pilot, screenshot


@pytest.mark.slow
def test_screenshot_script_writes_an_svg_of_a_scripted_session(fake_model, tmp_path):
    out = tmp_path / "mtn-tui.svg"
    screenshot.main([str(out), "--model", str(fake_model)])
    svg = out.read_text()
    assert svg.startswith("<svg")
    for query in app_pilot.QUERIES:
        assert query.replace(" ", "&#160;") in svg


def test_screenshot_script_fails_clearly_without_a_model(tmp_path):
    with pytest.raises(SystemExit, match="No screenshot: No model at .*nowhere"):
        screenshot.main([str(tmp_path / "out.svg"), "--model", str(tmp_path / "nowhere")])
    assert not (tmp_path / "out.svg").exists()
