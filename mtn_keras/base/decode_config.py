"""How suggestions are decoded: DecodeConfig, one frozen dataclass whose fields carry their
command-line options (mtn_keras.cli builds the parser from them), and the filters' names."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mtn_keras.base.parsing import non_negative_float, non_negative_int, positive_int, probability

FILTERS = ("session", "repeats", "blocked", "unrelated", "nonwords", "fragments")
# Where a user's earlier queries that relate to nothing in the session stand in a list
# (DecodeConfig.unrelated_place, mtn_keras/ranking/hybrid.py `placed`).
UNRELATED_PLACES = ("last", "ranked")


def option(flag: str, help: str, read: Callable | None = None, **argparse: object) -> dict:
    """A DecodeConfig field's command-line option, written once: its flag, its help ("{default}"
    reads the field's default; the commands may add to its end), `read` to turn the parsed
    value into the field's (when they differ) and argparse's other keywords."""
    return {"flag": flag, "help": help, "read": read, "argparse": argparse}


def filters_on(switched_off: Iterable[str]) -> tuple[str, ...]:
    """The filters left on when `switched_off` are (`--no-filter`, repeatable)."""
    return tuple(f for f in FILTERS if f not in switched_off)


@dataclass(frozen=True, kw_only=True)
class DecodeConfig:
    """How suggestions are decoded; frozen, built by keyword. Each field carries its command-line
    option (mtn_keras.cli builds the parser from them). The defaults' reasons and figures
    (alpha, exact_stop) are in docs/quality.md, "Decoding settings"."""

    k: int = field(default=5, metadata=option("--k", "number of suggestions", type=positive_int))
    beam: int = field(
        default=8, metadata=option("--beam", "beam width, at least k", type=positive_int)
    )
    alpha: float | None = field(  # None: 2.0 or 1.0 (see length_alpha)
        default=None,
        metadata=option(
            "--alpha",
            "length normalisation ((5 + len) / 6) ** alpha (default: 1.0 for "
            "ranked lists, 2.0 for the beam's alone)",
            type=non_negative_float,
        ),
    )
    repeat_last: bool = field(
        default=False,
        metadata=option(
            "--repeat-last", "allow the last query itself as a suggestion", action="store_true"
        ),
    )
    xla: bool = field(  # about 2.5x faster on a CPU
        default=True,
        metadata=option("--no-xla", "run the search without XLA compilation", action="store_false"),
    )
    # Stop as soon as no alive beam beats the pool at its next length (the usual heuristic)
    # rather than at any length.
    exact_stop: bool = field(
        default=False,
        metadata=option(
            "--exact-stop",
            "search on while an alive beam could still win at any length",
            action="store_true",
        ),
    )
    # "hybrid" when the model has a ranking (see mtn_keras.ranking); "beam" is the paper's.
    source: str = field(
        default="hybrid",
        metadata=option(
            "--source",
            "hybrid: the beam's and the query log's candidates ranked together "
            "(when the model has a ranking); beam: the beam's alone",
            choices=["hybrid", "beam"],
        ),
    )
    filters: tuple = field(  # the filters on (mtn_keras/ranking/filters.py)
        default=FILTERS,
        metadata=option(
            "--no-filter",
            "switch a filter off (repeatable)",
            read=filters_on,
            action="append",
            default=[],
            choices=FILTERS,
        ),
    )
    threshold: float | None = field(  # None: the ranking's own
        default=None,
        metadata=option(
            "--threshold",
            "the ranker's probability a suggestion needs to be shown "
            "(default: the ranking's tuned value; 0 shows k)",
            type=probability,
        ),
    )
    # With a history and nothing typed: the user's earlier queries that relate to nothing in
    # the session, how many and where (docs/ranking.md, mtn_keras/ranking/hybrid.py `placed`).
    unrelated_history: int = field(
        default=1,
        metadata=option(
            "--unrelated-history",
            "with a history, nothing typed: at most this many of the user's earlier queries "
            "that relate to nothing in the session (default {default})",
            type=non_negative_int,
        ),
    )
    unrelated_place: str = field(
        default="ranked",
        metadata=option(
            "--unrelated-place",
            "where they stand: ranked (where the ranker puts them, never first; the default) "
            "or last (after every related suggestion, the session's own two best kept)",
            choices=UNRELATED_PLACES,
        ),
    )
    # The log's most frequent next queries ("google") are filler after any session: none by
    # default, as judged lists found them junk (ranking/popular.py).
    popular: int = field(
        default=0,
        metadata=option(
            "--popular",
            "nothing typed: at most this many of the log's most frequent next queries, "
            "chosen by their share of them, after the ranked ones (default {default})",
            type=non_negative_int,
        ),
    )
    # Where the log completes nothing, the model's own phrases of English words, when it is
    # this sure of each word on average (docs/ranking.md, "Beyond the log").
    beyond_log: float = field(
        default=0.0,
        metadata=option(
            "--beyond-log",
            "where the log completes nothing typed: the model's phrases of English words whose "
            "mean word probability is at least this (0: none; default {default})",
            type=probability,
        ),
    )
    # A query that seeks sexual content involving minors is never shown, whatever this says
    # (data/safety.py).
    explicit: bool = field(
        default=False,
        metadata=option(
            "--explicit",
            "show sexually explicit suggestions too (hidden by default; a query seeking "
            "sexual content involving minors is never shown)",
            action="store_true",
        ),
    )

    def length_alpha(self, ranked: bool) -> float:
        """alpha, or when unset 1.0 if the ranker orders the lists, else 2.0 (BLEU's)."""
        if self.alpha is not None:
            return self.alpha
        return 1.0 if ranked else 2.0
