"""Saves an SVG screenshot of the app for the README: a scripted session of three made-up queries.

Usage: python -m app.screenshot OUT.svg [--model PATH]
"""

import argparse
import asyncio
import sys
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from .screens import ErrorScreen
from .tui import MtnApp

QUERIES = ["cheap flights to lisbon", "lisbon weather in may", "lisbon old town hotels"]
PREFIX = "lisbon"
SIZE = (120, 34)


async def settle(pilot: Pilot, timeout: float = 60) -> None:
    """Wait until every model call has been answered and shown."""
    await pilot.pause()
    async with asyncio.timeout(timeout):
        while len(pilot.app.workers):
            await pilot.pause(0.02)
    await pilot.pause()


async def play_session(pilot: Pilot) -> None:
    """Add QUERIES to the session and type PREFIX of the next one, waiting for the model."""
    query = pilot.app.query_one("#query", Input)
    query.cursor_blink = False
    await settle(pilot)
    for text in QUERIES:
        query.insert_text_at_cursor(text)
        await pilot.press("enter")
        await settle(pilot)
    query.insert_text_at_cursor(PREFIX)
    await settle(pilot)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the SVG file to write")
    parser.add_argument("--model", metavar="PATH", help="the model (default: the project's)")
    args = parser.parse_args(argv)
    app = MtnApp(args.model, show_load_time=False)

    async def shoot(pilot: Pilot) -> None:
        await settle(pilot)
        if isinstance(app.screen, ErrorScreen):
            app.exit(app.screen.message)
            return
        await play_session(pilot)
        app.save_screenshot(args.out.name, str(args.out.parent))
        app.exit()

    error = app.run(headless=True, size=SIZE, auto_pilot=shoot)
    if error:
        sys.exit(f"No screenshot: {error}")
    print(args.out)


if __name__ == "__main__":
    main()
