"""mtn-tui, the terminal app (installed as `mtn_tui`): `tui.py` the App (loading, history,
dialogs, palette), `screens/` its screens, `widgets/` their widgets, `history/` the
searcher's store, `model.py` and `remote_model.py` the model client, `scheduler.py` which
call runs when."""
