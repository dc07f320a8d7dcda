"""Pilot tests of the app with the fake SavedModel: session, suggestions, attention, errors."""

import pytest
from rich.table import Table
from textual.widgets import Input, Static

from app import main as cli
from app.model import Suggestion, Suggestions
from app.screenshot import settle
from app.tui import ErrorScreen, HelpScreen, ModelPrompt, MtnApp, SuggestionList

SIZE = (120, 34)


async def type_text(pilot, text):
    await pilot.press(*["space" if char == " " else char for char in text])


async def add_queries(pilot, *queries):
    """Submit `queries` as if typed (inserted at once, which is quicker than key by key)."""
    for query in queries:
        pilot.app.query_one("#query", Input).insert_text_at_cursor(query)
        await pilot.press("enter")
    await settle(pilot)


def cells(column):
    return [str(cell) for cell in column.cells]


def suggestion_texts(app):
    options = app.query_one(SuggestionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


@pytest.fixture
def make_app(fake_model):
    return lambda: MtnApp(fake_model, show_load_time=False)


async def test_queries_join_the_session_and_get_suggestions(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.sub_title == "tiny"
        assert "Add a query" in suggestion_texts(app)[0]
        await add_queries(pilot, "cheap flights", "lisbon hotels")
        assert app.session == ["cheap flights", "lisbon hotels"]
        session = str(app.query_one("#session", Static).content)
        assert session == " 1 cheap flights\n 2 lisbon hotels"
        assert app.query_one("#query", Input).value == ""
        texts = suggestion_texts(app)
        assert len(texts) == 3
        assert texts[0].endswith("lisbon hotels near me")
        assert "-1.00" in texts[0]


async def test_typing_completes_the_typed_words(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        await type_text(pilot, "rome")
        await settle(pilot)
        assert [text.split("  ")[-1] for text in suggestion_texts(app)] == [
            "rome near me",
            "rome online",
            "rome reviews",
        ]


async def test_a_stale_answer_never_replaces_a_newer_one(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        before = suggestion_texts(app)
        stale = Suggestions([Suggestion("stale", 0.0, None)], [])
        app._show_suggestions(app._suggest_request - 1, stale)
        assert suggestion_texts(app) == before


async def test_tab_takes_the_highlighted_suggestion(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        await pilot.press("down", "tab")
        assert app.query_one("#query", Input).value == "cheap flights online"
        assert app.query_one("#copy", Static).border_title == "Copied by suggestion 2"
        await pilot.press("enter")
        await settle(pilot)
        assert app.session == ["cheap flights", "cheap flights online"]


async def test_an_empty_query_is_ignored_with_a_notice(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notices = []
        app.notify = lambda message, **options: notices.append(message)
        await type_text(pilot, "   ")
        await pilot.press("enter")
        assert app.session == []
        assert notices == ["Empty query ignored: type a query first."]


async def test_ctrl_n_starts_a_new_session(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights", "lisbon hotels")
        await type_text(pilot, "lisbon")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app.session == []
        assert app.query_one("#query", Input).value == ""
        assert app.attention is None
        assert app.suggestions is None
        assert "No queries yet" in str(app.query_one("#session", Static).content)


async def test_attention_panel_shows_the_session_matrix(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        queries = ["cheap flights", "lisbon hotels", "lisbon old town"]
        await add_queries(pilot, *queries)
        heatmap = app.query_one("#heatmap", Static)
        table = heatmap.content
        assert isinstance(table, Table)
        assert table.row_count == 3 and len(table.columns) == 4
        assert cells(table.columns[0]) == [
            "1 cheap flights ",
            "2 lisbon hotels ",
            "3 lisbon old to… ",
        ]
        headers = [column.header for column in table.columns[1:]]
        assert headers == ["1\nchea…", "2\nlisb…", "3\nlisb…"]
        assert cells(table.columns[1]) == [" 1.00 ", " .50 ", " .33 "]
        assert heatmap.border_title == "Attention · layer 1/2 · head 1/2"
        await pilot.press("f3", "f4")
        assert heatmap.border_title == "Attention · layer 2/2 · head 2/2"
        assert cells(heatmap.content.columns[1]) == [" 1.00 ", " .00 ", " .00 "]
        panel = app.query_one("#attention-panel")
        await pilot.press("f2")
        assert not panel.display
        await pilot.press("f2")
        assert panel.display


async def test_a_bad_model_path_shows_the_error_screen_then_another_opens(fake_model, tmp_path):
    app = MtnApp(tmp_path / "nowhere", show_load_time=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ErrorScreen)
        message = str(app.screen.query_one("#error-message", Static).content)
        assert message == f"No model at {tmp_path / 'nowhere'}: the path does not exist."
        await pilot.press("escape")
        assert app.sub_title == "no model"
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, ModelPrompt)
        app.screen.query_one(Input).value = str(fake_model.parent)
        await pilot.press("enter")
        await settle(pilot)
        assert app.backend is not None and app.sub_title == "tiny"


async def test_help_screen_and_palette_commands(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("tab")  # the main screen's keys are off under a dialog
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for title in ("New session", "Switch model", "Toggle attention panel", "Help"):
            assert title in titles
        await settle(pilot)


def test_main_runs_the_app_with_the_given_model(monkeypatch):
    runs = []

    class FakeApp:
        def __init__(self, model_path):
            self.model_path = model_path

        def run(self):
            runs.append(self.model_path)

    monkeypatch.setattr(cli, "MtnApp", FakeApp)
    cli.main(["--model", "somewhere/savedmodel"])
    assert runs == ["somewhere/savedmodel"]
