"""Snapshot tests of the terminal app with the fake SavedModel at 160x48 and at 80x24, the
smallest usual terminal (update with --snapshot-update)."""

import time
from pathlib import Path

import pytest
from textual.widgets import Input

from mtn_tui.history.opening import open_store
from mtn_tui.pilot import play_session, settle
from mtn_tui.tui import MtnApp


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


@pytest.mark.slow
def test_snapshot_history_screen(snap_compare, fake_model_with_history, tmp_path, monkeypatch):
    """The history screen over two stored sessions, searched, one query highlighted."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.chdir(tmp_path)  # the screen names the store's path: keep it short and fixed
    store, _ = open_store(Path("history.db"))
    day = 1_141_200_000  # 2006-03-01 08:00 UTC
    store.add_many(
        [
            ("cheap flights to lisbon", day),
            ("lisbon weather in may", day + 120),
            ("lisbon old town hotels", day + 300),
            ("porto wine tours", day + 86_400),
            ("porto to lisbon train", day + 86_460),
        ]
    )
    store.close()

    async def open_history(pilot):
        await settle(pilot)
        await pilot.press("f5", *"lisbon", "down")

    app = MtnApp(fake_model_with_history, show_load_time=False, history_path="history.db")
    assert snap_compare(app, terminal_size=(100, 30), run_before=open_history)
