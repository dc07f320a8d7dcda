"""Every string table of the bundled export (its variables and the graph's string constants)
and every file of the prepared AOL data hold no query that seeks sexual content involving
minors (data/safety.py), by its words or, where the AOL dev log is at hand, by its clicks
(data/evidence.py, every user's). The rule's own patterns, constants of the graph, are not
data."""

import functools
from pathlib import Path

import pytest

from mtn_keras.data import safety
from mtn_keras.data.dataset_writer import prepare
from mtn_keras.data.sessions import Protocol
from mtn_keras.data.text import normalise
from mtn_keras.scorecard.string_tables import RULE, export_strings
from mtn_tui.model import DEFAULT_MODEL

AOL_DEV = Path(__file__).resolve().parents[2].parent / "shared/data/aol/aol-top1000-dev.txt.gz"


@functools.cache
def child_unsafe():
    """The judge: the word rule, and the dev log's clicks when the log is at hand."""
    if not AOL_DEV.exists():
        return safety.child_unsafe
    from mtn_keras.data.evidence import Evidence

    return Evidence.of_logs([str(AOL_DEV)], "aol").child_unsafe


def unsafe_entries(entries):
    """The entries that seek sexual content involving minors. A word table's keys are words
    of the log's queries, not queries: the word rule judges them, the clicks judge queries
    ("preteen" spells an innocent query, and typed alone its clicks went to adult sites)."""
    unsafe = child_unsafe()
    return [
        (where, text)
        for where, text in entries
        if (safety.child_unsafe if "words" in where or "vocab" in where else unsafe)(
            normalise(text)
        )
    ]


@pytest.mark.slow
def test_the_bundles_tables_hold_no_such_query():
    entries = [(w, t) for w, t in export_strings(DEFAULT_MODEL) if t not in RULE]
    assert len(entries) > 100_000  # the log index's tables were read
    found = unsafe_entries(entries)
    assert not found, f"{len(found)} such entries, the first in {found[0][0]}"


@pytest.mark.slow
@pytest.mark.skipif(not AOL_DEV.exists(), reason=f"{AOL_DEV} is absent")
def test_the_prepared_aol_data_holds_no_such_query(tmp_path):
    """Prepared as the bundle's data is (saved_models/default/README.md)."""
    out = tmp_path / "aol"
    every = Protocol.named("all")
    prepare([str(AOL_DEV)], str(out), protocol=every, split_by="user", split_users=(90, 90))
    entries = [
        (f"{file.name}:{number}", field)
        for file in sorted(out.iterdir())
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
        for field in line.split("\t")
    ]
    assert len(entries) > 300_000
    found = unsafe_entries(entries)
    assert not found, f"{len(found)} such entries, the first at {found[0][0]}"


def test_a_table_with_such_a_query_is_found():
    """The scan itself finds what it looks for."""
    found = unsafe_entries([("t", "cheap flights"), ("t", "Teen Porn"), ("t", "nude pics")])
    assert found == [("t", "Teen Porn")]
