"""The judged study of the lists: its 40 sessions and the verdict on every item their lists
showed, read from the data files of studies/lists/ (whose comments say how they were made)."""

from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "lists"
VERDICTS = ("good", "generic", "junk")


def rows(name: str) -> list[list[str]]:
    """The TAB-separated rows of the data file `name`, without its comments and blank lines."""
    with open(FOLDER / name, encoding="utf-8") as handle:
        lines = (line.rstrip("\n") for line in handle)
        return [line.split("\t") for line in lines if line and not line.startswith("#")]


def sessions() -> list[tuple[list[str], str]]:
    """[(the session's queries, what is typed of the next one)] of sessions.tsv."""
    return [
        (earlier.split(" | ") if earlier else [], typed) for earlier, typed in rows("sessions.tsv")
    ]


def judgments(count: int) -> dict[tuple[int, str], str]:
    """{(session number, item): verdict} of judgments.tsv for `count` sessions: a * line
    judges the item for every session, a session's own line overrides it."""
    every, own = {}, {}
    for session, item, verdict, _ in rows("judgments.tsv"):
        if verdict not in VERDICTS:
            raise ValueError(f"judgments.tsv: {verdict!r} is none of {VERDICTS}")
        if session == "*":
            every[item] = verdict
        else:
            own[int(session), item] = verdict
    return {(i, item): verdict for i in range(count) for item, verdict in every.items()} | own


STUDY = sessions()
