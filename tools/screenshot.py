"""Saves an SVG screenshot of the app for the README: a scripted session of three made-up queries.

Usage: python -m tools.screenshot OUT.svg [--model PATH]
"""

import argparse
import sys
import tempfile
from pathlib import Path

from textual.pilot import Pilot

from mtn_tui.pilot import play_session, settle
from mtn_tui.screens.dialogs import ErrorScreen
from mtn_tui.tui import MtnApp

SIZE = (120, 34)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the SVG file to write")
    parser.add_argument("--model", metavar="PATH", help="the model (default: the project's)")
    args = parser.parse_args(argv)
    history = tempfile.TemporaryDirectory()  # the made-up queries stay out of your history
    app = MtnApp(args.model, show_load_time=False, history_path=Path(history.name) / "history.db")

    async def shoot(pilot: Pilot) -> None:
        await settle(pilot)
        if isinstance(app.screen, ErrorScreen):
            app.exit(app.screen.message)
            return
        await play_session(pilot)
        app.save_screenshot(args.out.name, str(args.out.parent))
        app.exit()

    error = app.run(headless=True, size=SIZE, auto_pilot=shoot)
    history.cleanup()
    if error:
        sys.exit(f"No screenshot: {error}")
    print(args.out)


if __name__ == "__main__":
    main()
