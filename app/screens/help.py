"""The help text, with its key table written from the app's BINDINGS (the README holds the same)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType

KEY_NAMES = {"ctrl+": "ctrl+", "up": "↑", "down": "↓"}

ABOUT = """\
# mtn-tui

Type a query and press **enter**: it joins the session. The suggestions for the *next* query
update as you type: with nothing typed the model suggests freely, otherwise it completes
the words typed so far. What you type is kept as typed; the model reads it normalised
(lowercase, punctuation as spaces), so its suggestions are normalised.

## Keys

{keys}

Pasting several lines adds each line as a query, in order.

## Suggestions

Each suggestion has its rank (1 is the best), a bar and, when the model says so, where it
came from (`model`: generated; `log`: a query that followed similar ones in the query log;
`model+log`: both; `history`, `model+history`, `log+history`: your own earlier queries
proposed it, and it is marked ↺; `popular`: one of the log's most frequent next queries,
such as "google", shown after the others). The bar compares the suggestion with the best one of the
list, which has a full bar: half a bar is half as likely. The foot of the copy panel gives the
highlighted suggestion's own figure. For a model with a ranker (the bundled one) it is
the ranker's estimate of the chance that this is the query you type next ("chance 1.3%"):
small numbers, since many queries can follow a session, so read the order and the bars
rather than the percentage. For a model without one it is the mean log probability of the
suggestion's words ("log prob -2.88").

## Panels

The session lists the queries typed, numbered from 1; every panel uses those numbers. A
query the model did not read is struck through, with why: it has no words once
normalised (only punctuation or emoji), or it lies before the model's window (the model
reads only the last few queries).

The **attention** panel shows how much each query the model read (row) attends to each
earlier one (column) in its session encoder, labelled with the query as the model read it.
The **copy** panel lists the session words the highlighted suggestion copied, with their
copy weights, and says where the suggestion came from. For a model that reads your history,
the **history** panel lists the earlier queries it read that counted most.

## Your history

Every query you add is kept with its time in a file of yours on this machine (SQLite, in
the user-data folder, e.g. `~/.local/share/mtn-keras/history.db`, readable by you only),
and a model that reads history gets your last queries from before this session with each
call. It never leaves the machine. **f6** starts a private session: nothing is read or
written while it is on (the header says so); `mtn-tui --no-history` never opens the store.
**f5** shows the stored queries by session, newest first; type to search them.

{history_keys}

Deleting overwrites the deleted text in the file. A model without history signatures
works as before; the header then says that it does not use history.
"""


def key_label(binding: Binding) -> str:
    """The keys of `binding` as a person reads them: "ctrl+n", "f3", "↑"."""
    return " / ".join(KEY_NAMES.get(key, key) for key in binding.key.split(","))


def keys_table(bindings: list[Binding]) -> str:
    """A markdown table of `bindings`: key and what it does, from each binding's tooltip or
    description."""
    rows = [
        f"| {key_label(binding)} | {binding.tooltip or binding.description} |"
        for binding in bindings
    ]
    return "\n".join(["| Key | Action |", "| --- | --- |", *rows])


def key_bindings(entries: Iterable[BindingType]) -> list[Binding]:
    """The Binding objects of a BINDINGS list (the app writes every key as one)."""
    return [entry for entry in entries if isinstance(entry, Binding)]


def help_text(bindings: list[Binding], history_bindings: list[Binding]) -> str:
    """The help screen's markdown: the app's keys and the history screen's."""
    shown = [binding for binding in history_bindings if binding.show]
    return ABOUT.format(keys=keys_table(bindings), history_keys=keys_table(shown))
