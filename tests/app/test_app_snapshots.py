"""Snapshot tests of the terminal app with the fake SavedModel (update with --snapshot-update)."""

from app.screenshot import SIZE, play_session
from app.tui import MtnApp


def test_snapshot_main_screen(snap_compare, fake_model):
    app = MtnApp(fake_model, show_load_time=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=play_session)


def test_snapshot_attention_panel_other_layer_head_and_suggestion(snap_compare, fake_model):
    async def run_before(pilot):
        await play_session(pilot)
        await pilot.press("f3", "f4", "down", "down")

    app = MtnApp(fake_model, show_load_time=False)
    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)
