"""Pilot tests of the app with the fake SavedModel: session, suggestions, attention, errors."""

import os
import threading
from pathlib import Path

import pytest
from rich.table import Table
from textual import events
from textual.widgets import Input, Static

from mtn_tui import main as cli
from mtn_tui.pilot import settle
from mtn_tui.screens.dialogs import ErrorScreen, HelpScreen, ModelPrompt
from mtn_tui.screens.help import keys_table
from mtn_tui.tui import MtnApp
from mtn_tui.widgets.cells import distinct_labels
from mtn_tui.widgets.copy_panel import CopyPanel
from mtn_tui.widgets.query_input import QueryInput, continue_typed
from mtn_tui.widgets.suggestion_list import (
    BAR,
    SuggestionList,
    are_confidences,
    score_label,
    score_shares,
)

SIZE = (120, 34)


async def type_text(pilot, text):
    await pilot.press(*["space" if char == " " else char for char in text])


async def type_and_settle(pilot, text):
    """Type `text` key by key and wait until the suggestions for it are shown."""
    await type_text(pilot, text)
    await settle(pilot)


async def add_queries(pilot, *queries):
    """Submit `queries` as if typed (inserted at once, which is quicker than key by key)."""
    for query in queries:
        pilot.app.query_one("#query", Input).insert_text_at_cursor(query)
        await pilot.press("enter")
    await settle(pilot)


def cells(column):
    return [str(cell) for cell in column.cells]


def suggestion_texts(app):
    """Each suggestion's row as one line: rank and bar, text, source."""
    options = app.query_one(SuggestionList)
    prompts = [options.get_option_at_index(i).prompt for i in range(options.option_count)]
    return [
        " ".join(str(cell) for column in prompt.columns for cell in column.cells)
        if isinstance(prompt, Table)
        else str(prompt)
        for prompt in prompts
    ]


def suggested(app):
    """The suggestions' texts, without rank and bar."""
    return [text[3 + BAR :] for text in suggestion_texts(app)]


def session_lines(app):
    return str(app.query_one("#session", Static).content).split("\n")


@pytest.fixture
def app(fake_model):
    """The app on the fake model, not yet running."""
    return MtnApp(fake_model, show_load_time=False)


async def test_queries_join_the_session_and_get_suggestions(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.sub_title == "tiny · this model does not use history"
        assert "Type a query" in suggestion_texts(app)[0]
        await add_queries(pilot, "cheap flights", "lisbon hotels")
        assert app.main_screen.session == ("cheap flights", "lisbon hotels")
        assert session_lines(app) == [" 1 cheap flights", " 2 lisbon hotels"]
        assert app.query_one("#query", Input).value == ""
        texts = suggestion_texts(app)
        assert len(texts) == 3
        assert texts[0].startswith("1 ██████ lisbon hotels near me")
        assert app.query_one(SuggestionList).highlighted is None


async def test_typing_completes_the_typed_words(app):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        await type_and_settle(pilot, "rome")
        assert suggested(app) == [
            "rome near me",
            "rome online",
            "rome reviews",
        ]
        assert app.main_screen.suggestions.prefix == "rome"


async def test_the_first_query_is_completed_from_its_first_key(app):
    async with app.run_test(size=SIZE) as pilot:
        calls = []
        suggestions = app.model.suggestions
        app.model.suggestions = lambda session, prefix, history: (
            calls.append((session, prefix)) or suggestions(session, prefix, history)
        )
        await type_and_settle(pilot, "r")
        assert calls[0] == ([], "r")  # an empty session: the typed words are completed
        assert app.main_screen.suggestions is not None and app.main_screen.suggestions.prefix == "r"


async def test_an_answer_for_older_typing_is_dropped_and_the_newest_asked(app):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        calls = []
        suggestions = app.model.suggestions
        app.model.suggestions = lambda session, prefix, history: (
            calls.append(prefix) or suggestions(session, prefix, history)
        )
        await type_and_settle(pilot, "rome")
        # one call at a time: keys typed while a call runs are asked for together afterwards
        assert calls[0] == "r" and calls[-1] == "rome" and len(calls) <= 4
        assert app.main_screen.suggestions.prefix == "rome"


async def test_enter_clears_the_list_of_the_finished_query_at_once(app):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        await type_and_settle(pilot, "rome")
        assert suggested(app)[0] == "rome near me"
        answer = threading.Event()  # the new session's call waits until the list is checked
        suggestions = app.model.suggestions
        app.model.suggestions = lambda session, prefix, history: (
            answer.wait(30) and suggestions(session, prefix, history)
        )
        await pilot.press("enter")
        try:
            assert suggestion_texts(app) == ["Suggestions for the new session…"]
        finally:
            answer.set()
        await settle(pilot)
        assert app.main_screen.suggestions.session == ("cheap flights", "rome")
        assert suggested(app)[0] == "rome near me"


async def test_attention_labels_are_the_queries_the_model_kept(app):
    # "???" has no words; the model drops it and the rows are the others.
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "weather boston", "???", "Boston Red Sox tickets")
        table = app.query_one("#heatmap", Static).content
        assert isinstance(table, Table)
        assert table.row_count == 2 and len(table.columns) == 3
        assert cells(table.columns[0]) == [" 1 weather boston ", " 3 boston red sox tickets "]
        assert [column.header for column in table.columns[1:]] == ["1", "3"]
        assert cells(table.columns[1]) == [" 1.00 ", " .50 "]
        assert session_lines(app)[1] == " 2 ???  (no words)"


async def test_attention_labels_differ_at_80_by_24(app):
    # Cut to fit, "cheap flights to lisbon" and "... london" read alike.
    async with app.run_test(size=(80, 24)) as pilot:
        await add_queries(
            pilot,
            "cheap flights to lisbon",
            "cheap flights to london",
            "cheap flights to lima",
            "cheap hotels",
        )
        labels = cells(app.query_one("#heatmap", Static).content.columns[0])
        assert len(set(labels)) == 4
        assert labels[1].startswith(" 2 …") and "lo" in labels[1]


@pytest.mark.parametrize(
    "queries, width, labels",
    [
        (["paris hotels", "paris hostels", "rome"], 8, ["…hotels", "…hostels", "rome"]),
        (["paris hotels", "paris hotels cheap"], 8, ["paris h…", "…cheap"]),
        (["paris", "paris"], 3, ["pa…", "pa…"]),  # the same query twice reads the same
    ],
)
def test_distinct_labels_drop_the_words_alike_queries_share(queries, width, labels):
    assert distinct_labels(queries, width) == labels


@pytest.mark.slow
async def test_a_long_suggestion_wraps_beside_its_rank(app):
    # A wrapped line starts under the text, not under the rank column.
    async with app.run_test(size=(80, 24)) as pilot:
        await add_queries(pilot, "cheap flights from springfield to lisbon in may")
        await pilot.pause()
        options = app.query_one(SuggestionList)
        lines = [options.render_line(y).text for y in range(3)]
        assert lines[0].startswith("1 ██████ cheap flights from")
        assert lines[1].startswith(" " * (3 + BAR)) and lines[1].strip()


@pytest.mark.slow
async def test_every_panel_uses_the_session_numbers(app):
    # 5 queries, the fake model reads the last 4; the first is dimmed.
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "one", "two", "three", "four", "five")
        assert session_lines(app)[0] == " 1 one  (outside the model's window of 4)"
        table = app.query_one("#heatmap", Static).content
        assert [column.header for column in table.columns[1:]] == ["2", "3", "4", "5"]
        await pilot.press("down")
        copy = app.query_one(CopyPanel)
        assert (copy.border_title, copy.border_subtitle) == (
            "Copied by suggestion 1",
            "log prob -1.00",
        )
        copied = copy.content  # "five near me" holds one word of the session: query 5's
        assert (cells(copied.columns[0]), cells(copied.columns[1])) == (["five"], ["5"])


@pytest.mark.slow
async def test_a_failed_open_keeps_the_model_in_use(app, tmp_path):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        app_model = app.model
        for path in (tmp_path / "nowhere", tmp_path):  # missing, and a folder that is no model
            await pilot.press("ctrl+o")
            app.screen.query_one(Input).value = str(path)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, ErrorScreen)
            assert "stays in use" in str(app.screen.query_one("#error-hint", Static).content)
            await pilot.press("escape")
            assert app.model is app_model and app.sub_title.startswith("tiny ·")
        await add_queries(pilot, "lisbon hotels")
        assert suggestion_texts(app)[0].endswith("lisbon hotels near me")


@pytest.mark.slow
async def test_enter_adds_the_highlighted_suggestion(app):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        assert app.query_one(SuggestionList).highlighted is None
        await pilot.press("down", "down")
        assert app.query_one(CopyPanel).border_title.startswith("Copied by suggestion 2")
        await pilot.press("enter")
        await settle(pilot)
        assert app.main_screen.session == ("cheap flights", "cheap flights online")
        assert app.query_one(SuggestionList).highlighted is None
        await pilot.press("down", "up")  # up from the first goes back to the input
        await type_text(pilot, "rome")
        await pilot.press("enter")
        await settle(pilot)
        assert app.main_screen.session[-1] == "rome"


@pytest.mark.slow
async def test_enter_adds_the_highlighted_suggestion_over_typed_text(app):
    # With text in the input, enter on a highlighted suggestion adds it.
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        await type_and_settle(pilot, "chea")
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert app.main_screen.session == ("cheap flights", "cheap flights online")
        assert app.query_one("#query", Input).value == ""
        await type_and_settle(pilot, "h&r")
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.main_screen.session[-1] == "h&r near me"


async def test_keys_sent_in_a_burst_keep_their_order(app):
    # Text and enter arriving faster than the app reads them (tmux send-keys): each enter
    # ends the query typed before it.
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        query = app.query_one(QueryInput)
        for key in [*"rome", "enter", *"oslo", "enter", "?", "enter"]:
            query.post_message(events.Key(key, "\r" if key == "enter" else key))
        await settle(pilot)
        assert app.main_screen.session == ("rome", "oslo", "?")


@pytest.mark.slow
async def test_typed_text_stays_as_typed(app):
    # The model reads "h&r" as "h r"; the input and the session keep "h&r".
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "tax forms")
        await type_and_settle(pilot, "h&r")
        assert app.query_one("#query", Input).value == "h&r"
        assert suggestion_texts(app)[0].endswith("h r near me")
        await pilot.press("tab")
        assert app.query_one("#query", Input).value == "h&r near me"
        await pilot.press("ctrl+u")  # clear the input
        await type_text(pilot, "H&R  Block ")
        await pilot.press("enter")
        await settle(pilot)
        assert app.main_screen.session == ("tax forms", "H&R  Block")


@pytest.mark.parametrize(
    "typed, suggestion, taken",
    [
        ("h&r", "h r block", "h&r block"),
        ("h&r bl", "h r block online", "h&r block online"),
        ("Weather ", "weather boston", "Weather boston"),
        ("rome", "cheap flights", "cheap flights"),
        ("", "cheap flights", "cheap flights"),
    ],
)
def test_continue_typed_keeps_the_typed_characters(typed, suggestion, taken):
    assert continue_typed(typed, suggestion) == taken


@pytest.mark.slow
async def test_a_multi_line_paste_adds_each_line(app):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_text(pilot, "cheap ")
        app.query_one(QueryInput).post_message(events.Paste("flights\n\nlisbon hotels\nrome\n"))
        await settle(pilot)
        assert app.main_screen.session == ("cheap flights", "lisbon hotels", "rome")
        assert app.query_one("#query", Input).value == ""
        app.query_one(QueryInput).post_message(events.Paste("one line\n"))
        await pilot.pause()
        assert app.query_one("#query", Input).value == "one line"


@pytest.mark.slow
async def test_scores_show_as_bars_and_sources_when_the_model_gives_them(fake_model_with_sources):
    app = MtnApp(fake_model_with_sources, show_load_time=False)
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        texts = suggestion_texts(app)
        assert texts[0] == "1 ██████ cheap flights near me model"
        assert texts[1].endswith("cheap flights online log")
        assert texts[2].endswith("cheap flights reviews model+log")


def test_score_shares_read_log_probabilities_and_confidences():
    assert score_shares([-1.0, -2.0, float("-inf")]) == pytest.approx([1.0, 0.36788, 0.0], rel=1e-4)
    # A ranker's small probabilities are scaled within the list.
    assert score_shares([0.013, 0.0065, 0.001]) == pytest.approx([1.0, 0.5, 0.07692], rel=1e-4)
    assert score_shares([]) == []
    # drawn from the order shown: a second item scored above the first gets no longer bar
    assert score_shares([0.010, 0.013, 0.005]) == pytest.approx([1.0, 1.0, 0.5], rel=1e-4)
    assert score_shares([-2.0, -1.0, -3.0]) == pytest.approx([1.0, 1.0, 0.36788], rel=1e-4)


def test_scores_read_as_a_chance_or_a_log_probability():
    assert are_confidences([0.013, 0.001]) and not are_confidences([-1.0, -2.0])
    assert score_label(0.0134, True) == "chance 1.3%"
    assert score_label(0.0004, True) == "chance <0.1%"
    assert score_label(-2.881, False) == "log prob -2.88"


@pytest.mark.slow
async def test_ctrl_n_starts_a_new_session(app):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights", "lisbon hotels")
        await type_text(pilot, "lisbon")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app.main_screen.session == ()
        assert app.query_one("#query", Input).value == ""
        assert app.main_screen.attention is None
        assert app.main_screen.suggestions is None
        assert "No queries yet" in str(app.query_one("#session", Static).content)


@pytest.mark.slow
async def test_attention_layers_heads_and_toggle(app):
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights", "lisbon hotels", "lisbon old town")
        heatmap = app.query_one("#heatmap", Static)
        assert cells(heatmap.content.columns[1]) == [" 1.00 ", " .50 ", " .33 "]
        assert heatmap.border_title == "Attention · layer 1/2 · head 1/2"
        await pilot.press("f3", "f4")
        assert heatmap.border_title == "Attention · layer 2/2 · head 2/2"
        assert cells(heatmap.content.columns[1]) == [" 1.00 ", " .00 ", " .00 "]
        panel = app.query_one("#attention-panel")
        await pilot.press("f2")
        assert not panel.display
        await pilot.press("f2")
        assert panel.display


@pytest.mark.slow
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
        assert app.model is not None and app.sub_title.startswith("tiny ·")


async def test_help_lists_every_binding_and_palette_commands(app):
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


def test_main_runs_the_app_with_the_given_model_and_the_process_settings(monkeypatch, tmp_path):
    """The entry point, not the app's model, sets XLA's flags and turns Grappler off."""
    from mtn_keras.base.xla_setup import skip_graph_rewrites

    runs = []

    class FakeApp:
        store = None

        def __init__(self, model_path, history_path, use_history, prepare_tensorflow, **rest):
            self.model_path, self.prepare_tensorflow = model_path, prepare_tensorflow

        def run(self):
            runs.append((self.model_path, self.prepare_tensorflow))

    for name in ("XLA_FLAGS", "TF_XLA_FLAGS"):  # set, so that monkeypatch puts them back
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cli, "MtnApp", FakeApp)
    cli.main(["--model", "somewhere/savedmodel"])
    assert runs == [("somewhere/savedmodel", skip_graph_rewrites)]
    assert "--xla_backend_optimization_level" in os.environ["XLA_FLAGS"]


def test_readme_lists_the_keys_from_the_bindings():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert keys_table(MtnApp.KEYS) in readme


async def test_an_empty_list_says_so_in_one_line_naming_what_was_typed(app):
    from mtn_tui.model import Answer

    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "cheap flights")
        app.main_screen.suggestions = Answer(session=("cheap flights",), prefix="labradood")
        await pilot.pause()
        assert suggestion_texts(app) == ["No known query starts like “labradood”."]
        app.main_screen.suggestions = Answer(session=("cheap flights",))
        await pilot.pause()
        assert suggestion_texts(app) == ["No suggestions."]
