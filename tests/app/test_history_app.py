"""The app with the searcher's history: it reaches a history model's calls, comes back after a
restart, is marked in the list; private sessions and --no-history read and write nothing; the
history screen deletes; the command line imports and exports without opening the interface."""

import gzip
import sqlite3

import pytest
from textual.widgets import Input

from mtn_tui import main as cli
from mtn_tui.history.opening import open_store
from mtn_tui.history.store import HistoryStore
from mtn_tui.pilot import settle
from mtn_tui.screens.history_screen import ROWS_SHOWN, ConfirmScreen, HistoryScreen
from mtn_tui.tui import MtnApp
from mtn_tui.widgets.suggestion_list import HISTORY_GLYPH, SuggestionList

pytestmark = pytest.mark.slow  # loads a SavedModel and drives the app
SIZE = (120, 34)
LONG_AGO = 1_000_000_000  # 2001: before any session typed in a test


async def add_queries(pilot, *queries):
    """Submit `queries` as if typed."""
    for query in queries:
        pilot.app.query_one("#query", Input).insert_text_at_cursor(query)
        await pilot.press("enter")
    await settle(pilot)


def seeded(path, *queries):
    """A store at `path` holding `queries`, typed long ago a minute apart."""
    store, _ = open_store(path)
    store.add_many([(query, LONG_AGO + 60 * n) for n, query in enumerate(queries)])
    store.close()
    return path


def stored(path):
    store = HistoryStore(path)
    queries = [entry.query for entry in store.entries()]
    store.close()
    return queries


def first_suggestion(app):
    return app.main_screen.suggestions[0] if app.main_screen.suggestions else None


def recorded_calls(monkeypatch, app):
    """The signatures of the app's model calls from now on, each with the history it sends
    (its "" padding dropped; None without one): what the client's runner is asked."""
    calls = []
    runner = app.model._client._runner
    run = runner.run

    def recording(name, inputs):
        history = inputs.get("history")
        calls.append((name, [q for q in history[0] if q] if history is not None else None))
        return run(name, inputs)

    monkeypatch.setattr(runner, "run", recording)
    return calls


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "store" / "history.db"


async def test_the_history_reaches_the_call_and_is_marked(
    monkeypatch, fake_model_with_history, store_path
):
    seeded(store_path, "paris hotels", "lisbon zoo", "rome", "berlin", "madrid", "oslo", "x")
    app = MtnApp(fake_model_with_history, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.sub_title == "remembers"  # a model that reads history: nothing to say
        calls = recorded_calls(monkeypatch, app)
        await add_queries(pilot, "Rome weather")
        # the model's history size is 5: the last five stored queries, oldest first
        assert ("complete_with_history", ["rome", "berlin", "madrid", "oslo", "x"]) in calls
        item = first_suggestion(app)
        assert (item.text, item.source) == ("rome", "history")
        row = app.query_one(SuggestionList).get_option_at_index(0).prompt
        assert str(list(row.columns[1].cells)[0]).startswith(HISTORY_GLYPH)
        await pilot.press("down")
        assert app.query_one("#copy").border_subtitle.endswith("· from history")
        assert "History read (5)" in app.query_one("#history-read").border_title
        await pilot.press("up")
        await pilot.press(*"rom")
        await settle(pilot)
        assert calls[-1][0] == "complete_with_history"
    assert stored(store_path)[-1] == "Rome weather"


async def test_earlier_sessions_come_back_after_a_restart(fake_model_with_history, store_path):
    for session in (["lisbon hotels", "lisbon trams"], ["lisbon weather"]):
        app = MtnApp(fake_model_with_history, show_load_time=False, history_path=store_path)
        async with app.run_test(size=SIZE) as pilot:
            await add_queries(pilot, *session)
    assert stored(store_path) == ["lisbon hotels", "lisbon trams", "lisbon weather"]
    # the second run read the first's queries, not its own session's
    assert first_suggestion(app).text == "lisbon trams"


async def test_a_private_session_reads_and_writes_nothing(
    monkeypatch, fake_model_with_history, store_path
):
    seeded(store_path, "zanzibar ferry")
    app = MtnApp(fake_model_with_history, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        calls = recorded_calls(monkeypatch, app)
        await pilot.press("f6")
        assert "private session" in app.sub_title
        await add_queries(pilot, "zanzibar secret")
        assert calls and not any(history for _, history in calls)  # none, or empty
        assert not first_suggestion(app).from_history
        await pilot.press("f6")
        await settle(pilot)
        assert "private" not in app.sub_title
        assert first_suggestion(app).text == "zanzibar ferry"  # history read again
        await add_queries(pilot, "kept again")
    assert stored(store_path) == ["zanzibar ferry", "kept again"]
    everything = b"".join(p.read_bytes() for p in store_path.parent.iterdir())
    assert b"zanzibar secret" not in everything


async def test_no_history_never_opens_the_store(fake_model_with_history, tmp_path):
    app = MtnApp(fake_model_with_history, show_load_time=False, use_history=False)
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "nothing kept")
        assert app.sub_title == "remembers · history off"
        await pilot.press("f6", "f5")
        assert not isinstance(app.screen, HistoryScreen)
    assert not (tmp_path / "user-data").exists()


async def test_an_unwritable_folder_means_no_history_said_once(fake_model_with_history, tmp_path):
    (tmp_path / "a-file").write_text("")
    app = MtnApp(
        fake_model_with_history, show_load_time=False, history_path=tmp_path / "a-file" / "h.db"
    )
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "not kept")
        assert app.store is None and app.sub_title == "remembers · history off"
        [note] = [n.message for n in app._notifications]
        assert note.startswith("History off: cannot write")


async def test_a_model_without_history_says_so(fake_model, store_path):
    app = MtnApp(fake_model, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "still kept")
        assert app.sub_title == "tiny · this model does not use history"
        assert not app.query_one("#history-read").display
    assert stored(store_path) == ["still kept"]
    with pytest.raises(sqlite3.ProgrammingError):  # the app closed its store when it ended
        app.store.count()


async def test_the_history_screen_searches_and_deletes(fake_model_with_history, store_path):
    seeded(store_path, "lisbon zoo", "porto trams", "lisbon castle")
    app = MtnApp(fake_model_with_history, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "lisbon weather")
        assert first_suggestion(app).text == "lisbon castle"
        await pilot.press("f5")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert [row[0].query for row in screen.rows if row] == [
            "lisbon weather",  # this session, the newest
            "lisbon zoo",
            "porto trams",
            "lisbon castle",
        ]
        await pilot.press("down", "down")
        assert screen.highlighted()[0].query == "porto trams"
        await pilot.press(*"castle")  # the sessions that hold it, whole
        await pilot.pause()
        assert [row[0].query for row in screen.rows if row] == [
            "lisbon zoo",
            "porto trams",
            "lisbon castle",
        ]
        assert screen.highlighted()[0].query == "lisbon zoo"  # the first result, not row 3
        await pilot.press("down", "down")
        assert screen.highlighted()[0].query == "lisbon castle"
        await pilot.press("f7")  # asks first, naming the query
        assert isinstance(app.screen, ConfirmScreen)
        assert "“lisbon castle”" in app.screen.question
        await pilot.press("n")
        assert "lisbon castle" in stored(store_path)
        await pilot.press("f7", "y")
        assert "lisbon castle" not in stored(store_path)
        await pilot.press("escape")
        await settle(pilot)
        assert first_suggestion(app).text == "lisbon zoo"  # gone from the lists too
        await pilot.press("f5", "f9")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        assert stored(store_path)
        await pilot.press("f9", "y")
        assert stored(store_path) == []
    everything = b"".join(p.read_bytes() for p in store_path.parent.iterdir())
    assert b"castle" not in everything and b"porto" not in everything


async def test_a_delete_on_a_locked_store_is_refused_not_crashed(fake_model, store_path):
    seeded(store_path, "lisbon zoo")
    app = MtnApp(fake_model, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        other = sqlite3.connect(store_path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        await pilot.press("f7", "y")
        assert "Not deleted: the store is busy" in [n.message for n in app._notifications][-1]
        other.execute("ROLLBACK")
        other.close()
        await pilot.press("f7", "y")
    assert stored(store_path) == []


async def test_the_history_screen_lists_a_large_store_from_its_newest_queries(
    fake_model, store_path
):
    store, _ = open_store(store_path)
    store.add("zanzibar ferry", LONG_AGO - 10)
    store.add_many([(f"made up query {n}", LONG_AGO + n) for n in range(20_000)])  # one session
    store.close()
    app = MtnApp(fake_model, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        screen = app.screen
        listed = [row[0].query for row in screen.rows if row]
        assert len(listed) == ROWS_SHOWN and listed[-1] == "made up query 19999"
        assert "20001 stored queries" in str(screen.query_one("#history-title").render())
        await pilot.press(*"zanzibar")  # searching reaches the older ones
        await pilot.pause()
        assert screen.highlighted()[0].query == "zanzibar ferry"


async def test_a_damaged_store_is_named_on_the_history_screen(
    fake_model, store_path, damaged_store
):
    damaged_store(store_path)
    app = MtnApp(fake_model, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        title = str(app.screen.query_one("#history-title").render())
        assert title.startswith("History unreadable:") and "the store is damaged" in title


async def test_a_corrupt_store_is_kept_aside_and_the_app_goes_on(fake_model, store_path):
    seeded(store_path, "lisbon zoo")
    store_path.write_bytes(store_path.read_bytes()[:1000])  # truncated: still ours by its header
    damaged = store_path.read_bytes()
    app = MtnApp(fake_model, show_load_time=False, history_path=store_path)
    async with app.run_test(size=SIZE) as pilot:
        await add_queries(pilot, "after the damage")
        [note] = [n.message for n in app._notifications]
        assert "kept as history.db.damaged-" in note
    assert stored(store_path) == ["after the damage"]
    [aside] = store_path.parent.glob("history.db.damaged-*")
    assert aside.read_bytes() == damaged


def test_import_and_export_work_without_the_interface(monkeypatch, tmp_path, store_path, capsys):
    monkeypatch.setattr(cli, "MtnApp", None)  # opening the interface would fail
    log = tmp_path / "log.txt.gz"
    with gzip.open(log, "wt") as file:
        file.write("AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n")
        file.write("42\tlisbon hotels\t2006-03-01 07:17:12\t\t\n")
        file.write("43\tnot mine\t2006-03-01 07:18:12\t\t\n")
    with pytest.raises(SystemExit) as done:
        cli.main(["--history", str(store_path), "--import-history", str(log), "--user", "42"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("Imported 1 queries of user 42")
    out = tmp_path / "out.tsv"
    with pytest.raises(SystemExit) as done:
        cli.main(["--history", str(store_path), "--export-history", str(out)])
    assert done.value.code == 0 and out.read_text() == "lisbon hotels\t2006-03-01 07:17:12\n"
    with pytest.raises(SystemExit) as done:
        cli.main(["--history", str(store_path), "--import-history", str(log)])
    assert done.value.code == 2  # --user is needed
    with pytest.raises(SystemExit) as done:
        cli.main(
            ["--history", str(store_path), "--import-history", str(tmp_path / "no"), "--user", "4"]
        )
    assert done.value.code == 2 and "no such file" in capsys.readouterr().err
