"""The app driven headless by Textual's pilot: waiting for its model calls and a scripted
session of made-up queries, for the app's tests, its latency bench and the README screenshot
(tools/screenshot.py); shipped with the app, so that an installed copy can be driven too."""

import asyncio

from textual.pilot import Pilot
from textual.widgets import Input

QUERIES = ["cheap flights to lisbon", "lisbon weather in may", "lisbon old town hotels"]
PREFIX = "lisbon"


async def settle(pilot: Pilot, timeout: float = 60) -> None:
    """Wait until every model call has been answered and shown."""
    await pilot.pause()
    async with asyncio.timeout(timeout):
        while len(pilot.app.workers):
            await pilot.pause(0.02)
    await pilot.pause()


async def play_session(pilot: Pilot) -> None:
    """Add QUERIES to the session and type PREFIX of the next one, waiting for the model."""
    await settle(pilot)  # the main screen composes its widgets once the app has started
    query = pilot.app.query_one("#query", Input)
    query.cursor_blink = False
    for text in QUERIES:
        query.insert_text_at_cursor(text)
        await pilot.press("enter")
        await settle(pilot)
    query.insert_text_at_cursor(PREFIX)
    await settle(pilot)
