"""The app's history control, without Textual: off, private, the store, and the earlier
queries a history model reads with the session."""

from types import SimpleNamespace

from mtn_tui.history.control import OFF_NOTE, HistoryControl

READS = SimpleNamespace(has_history=True, history_size=2, withheld_history=False)  # reads 2
IGNORES = SimpleNamespace(has_history=False, history_size=2, withheld_history=False)


def opened(tmp_path, *earlier):
    control = HistoryControl(tmp_path / "history.db")
    assert control.open() == []
    control.store.add_many([(query, 1_000 + n) for n, query in enumerate(earlier)])
    return control


def test_off_never_opens_a_store_nor_goes_private(tmp_path):
    control = HistoryControl(tmp_path / "history.db", use_history=False)
    assert control.open() == [] and control.store is None
    assert control.toggle_private() == OFF_NOTE and not control.private
    assert control.state(READS) == "history off" and control.earlier(READS) == ()
    control.keep(["paris"], new_session=True)
    control.close()
    assert not (tmp_path / "history.db").exists()


def test_the_model_reads_its_last_queries_from_before_the_session(tmp_path):
    control = opened(tmp_path, "rome", "lisbon zoo", "porto trams")
    control.keep(["paris"], new_session=True)
    assert control.earlier(READS) == ("lisbon zoo", "porto trams")  # not this session's
    assert control.state(READS) == ""
    assert control.earlier(IGNORES) == () and control.earlier(None) == ()
    assert control.state(IGNORES) == "this model does not use history"
    assert control.store.recent(5)[-1] == "paris"
    control.close()


def test_a_private_session_reads_and_writes_nothing(tmp_path):
    control = opened(tmp_path, "rome")
    assert control.toggle_private() is None and control.private
    assert control.state(READS) == "private session" and control.earlier(READS) == ()
    control.keep(["secret"], new_session=True)
    control.toggle_private()
    assert control.store.recent(5) == ("rome",)
    control.close()
