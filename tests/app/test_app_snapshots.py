"""Snapshot tests of the terminal app with the fake SavedModel at 160x48 and at 80x24, the
smallest usual terminal (update with --snapshot-update)."""

import pytest
from textual.widgets import Input

from app.tui import MtnApp
from tools.app_pilot import play_session, settle


async def a_long_session(pilot):
    """Five queries, one without words: the fake model reads the last three with words."""
    await play_session(pilot)
    query = pilot.app.query_one("#query", Input)
    query.value = ""
    for text in ("???", "lisbon trams"):
        query.insert_text_at_cursor(text)
        await pilot.press("enter")
        await settle(pilot)
    query.insert_text_at_cursor("lisbon")
    await settle(pilot)
    await pilot.press("f3", "f4", "down", "down")


@pytest.mark.slow
@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
def test_snapshot_main_screen(snap_compare, fake_model, size):
    app = MtnApp(fake_model, show_load_time=False)
    assert snap_compare(app, terminal_size=size, run_before=a_long_session)
