"""`python -m mtn_keras.suggest --model DIR QUERY [QUERY ...]`: print the k best next
queries for a session (oldest query first), one `score<TAB>suggestion<TAB>source` line each
(the ranker's confidence and model/log/history or their union with a ranking, else the
length-normalised log-probability and model; no source for an export that has none), under a
header line that names the columns when the output is a terminal. `--history FILE` passes the
searcher's earlier queries: one a line, or `query<TAB>time` as `mtn-tui --export-history`
writes them (`--user ID` picks them from an AOL-format log); each is cut to the model's query
length, as the session's queries are.

Without QUERY, the sessions come from standard input, one a line with its queries
TAB-separated, and each gets one line back: its suggestions, TAB-separated, best first (an
empty line when none passes), so that a script pays the start-up once."""

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NoReturn

import numpy as np

from mtn_keras import cli
from mtn_keras.base.config import DecodeConfig
from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.base.xla_setup import set_up_xla, skip_graph_rewrites
from mtn_keras.client import Answer, Suggestion, load
from mtn_keras.client.remote import redacted
from mtn_keras.data.history import read_history
from mtn_keras.data.logs import InputError
from mtn_keras.data.text import normalise
from mtn_keras.serving.savedmodel import SuggestError, export_settings, kind, resolve


def not_utf8(texts: Iterable[str]) -> str | None:
    """The first of `texts` that held bytes that are not UTF-8 (Python keeps them as lone
    surrogates), written with \\x escapes; None when every one is text."""
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


BATCH = 64  # sessions per call when they come from standard input
MAX_LINE_BYTES = 1 << 20  # a session longer than this on standard input is no session
# what `answerer` makes: (sessions [[query, ...], ...], prefix) -> their Answers
Answerer = Callable[[list[list[str]], str], list[Answer]]


def answerer(
    model: str, exported: bool, decoding: DecodeConfig, history: list[str] | None = None
) -> Answerer:
    """A function (sessions [[query, ...], ...], prefix) -> their Answers, through the client
    (`mtn_keras.load`: an export with plain TensorFlow, a run folder through its service);
    loaded once, so many batches pay one start-up. With a `history` (the user's earlier
    queries), for each session."""
    set_up_xla()
    if exported:
        skip_graph_rewrites(import_tensorflow())
    client = load(model, decoding)
    if history is not None:
        client.check_history()
        history = cut_queries(history, client.settings.get("max_query_tokens"))

    def answer(sessions: list[list[str]], prefix: str) -> list[Answer]:
        histories = None if history is None else [history] * len(sessions)
        answers = client.complete(sessions, [prefix] * len(sessions), histories)
        given = answers[0].slots
        if decoding.k != DecodeConfig().k and decoding.k > given:  # an export without export.json
            raise SuggestError(
                f"--k {decoding.k} is more than the {given} suggestions the SavedModel gives"
            )
        return answers

    return answer


def cut_queries(queries: Iterable[str], max_tokens: int | None) -> list[str]:
    """The queries normalised and cut to their first `max_tokens` words (all for None), as
    the model cuts the session's: no earlier query may make a call slower than a typed one."""
    cut = (" ".join(normalise(query).split()[:max_tokens]) for query in queries)
    return [query for query in cut if query]


def header(answer: Sequence[Suggestion]) -> str:
    """The line that names the printed columns: the ranker's confidence (probabilities) or
    the model's length-normalised log probability, the suggestion and, if given, its source."""
    finite = [item.score for item in answer if np.isfinite(item.score)]
    confidence = bool(finite) and 0 <= min(finite) and max(finite) <= 1 and max(finite) > 0
    names = ["confidence" if confidence else "log prob", "suggestion"]
    return "\t".join(names + (["source"] if any(item.source for item in answer) else []))


def stdin_batches() -> Iterator[list[list[str] | None]]:
    """The sessions on standard input, one a line, queries TAB-separated, in lists of at most
    BATCH of those that have arrived: a script that writes a line and waits gets its answer.
    A line that is not UTF-8 text, or longer than MAX_LINE_BYTES (a stream of NULs), is None
    in its list, and said on standard error; the lines after it are read as any other."""
    fd, parts, size, number, skipping = sys.stdin.fileno(), [], 0, 0, False
    while True:
        chunk = os.read(fd, 1 << 16)  # what has arrived, waiting only when nothing has
        pieces = chunk.split(b"\n") if chunk else [b""]
        lines: list[bytes | None] = []
        for i, piece in enumerate(pieces):
            ends = i < len(pieces) - 1 or not chunk  # a line break, or the end of input
            if not skipping:
                parts.append(piece)
                size += len(piece)
                skipping = size > MAX_LINE_BYTES
            if ends:
                whole = b"".join(parts)
                if skipping or whole or chunk:
                    lines.append(None if skipping else whole)
                parts, size, skipping = [], 0, False
        sessions: list[list[str] | None] = []
        for read in lines:
            number += 1
            sessions.append(_session(read, number))
        for start in range(0, len(sessions), BATCH):
            yield sessions[start : start + BATCH]
        if not chunk:
            return


def _session(line: bytes | None, number: int) -> list[str] | None:
    """The queries of standard input's line `number` (None: longer than MAX_LINE_BYTES), or
    None, said on standard error, when it is too long or not UTF-8 text."""
    if line is None:
        print(
            f"suggest: standard input line {number} is longer than {MAX_LINE_BYTES:,} bytes",
            file=sys.stderr,
        )
        return None
    try:
        return line.decode("utf-8").rstrip("\r").split("\t")
    except UnicodeDecodeError:
        print(f"suggest: standard input line {number} is not UTF-8 text", file=sys.stderr)
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    decoding = cli.decode_config(args)
    if (text := not_utf8([*args.queries, args.prefix])) is not None:
        print(f'suggest: the argument "{text}" is not UTF-8 text', file=sys.stderr)
        return cli.BAD_INPUT
    if not args.queries and sys.stdin.isatty():
        parser.error("give the session's queries, or sessions on standard input (one a line)")
    # A session with no words yet still completes what was typed: its first query.
    if args.queries and not any(normalise(q) for q in [*args.queries, args.prefix]):
        print(
            "suggest: no suggestion (the session and --prefix have no words after normalising)",
            file=sys.stderr,
        )
        return cli.NOTHING_TO_SHOW
    try:
        if "://" in args.model:  # a server's address, which may hold a password: not printed
            raise SuggestError(
                f"--model {redacted(args.model)} is an address: suggest opens a run folder, an "
                "export or `default` (ask a server with mtn_keras.load(URL) or mtn-tui --server)"
            )
        exported = kind(args.model) == "savedmodel"  # before TensorFlow's seconds of import
        settings = export_settings(resolve(args.model)) if exported else {}
        if exported and (reason := cli.unfit_option(decoding, settings)):
            raise SuggestError(reason)
    except SuggestError as error:
        return cli.fail("suggest", error, args.verbose)
    if code := cli.needs_tensorflow("suggest", args.verbose):
        return code
    try:
        if args.user and not args.history:
            raise ValueError("--user names a user of the --history log; give --history too")
        history = read_history(args.history, args.user) if args.history else None
        answer = answerer(args.model, exported, decoding, history)
        if not args.queries:
            return print_each_line(answer, stdin_batches(), args.prefix, args.k)
        found = answer([args.queries], args.prefix)[0]
    except (SuggestError, InputError, ValueError) as error:
        return cli.fail("suggest", error, args.verbose)
    return print_list(found, args.k, exported)


def _parser() -> argparse.ArgumentParser:
    """The command's arguments (its --help)."""
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.suggest", description=__doc__)
    cli.add_model_option(
        parser,
        cli.MODEL_HELP + "; a SavedModel's decoding was fixed at export, so it refuses the "
        "options below that differ from it, and a --k above its own",
    )
    cli.add_decode_arguments(parser)
    parser.add_argument("--prefix", default="", help="words of the next query already typed")
    cli.add_queries_file(
        parser,
        "--history",
        "FILE",
        "the searcher's earlier queries, oldest first: one a line, or with --user an "
        "AOL-format log; ranked with the model's and the log's candidates",
        "the user of --history, an AOL-format log",
    )
    parser.add_argument(
        "queries",
        nargs="*",
        help="the session so far, oldest first; none: sessions from standard input, one a line",
    )
    cli.add_verbose(parser)
    return parser


def print_list(answer: Sequence[Suggestion], k: int, exported: bool) -> int:
    """Prints one session's first `k` suggestions (its Answer), a
    `score<TAB>suggestion<TAB>source` line each (under a header on a terminal);
    NOTHING_TO_SHOW, with why, when none passed."""
    lines = [
        "\t".join([f"{item.score:.4f}", item.text] + ([item.source] if item.source else []))
        for item in answer[:k]
    ]
    if not lines:
        hint = (
            "an export keeps the threshold it was exported with (export --threshold 0 shows "
            "every candidate)"
            if exported
            else "--threshold 0 shows every candidate"
        )
        print(
            f"suggest: no suggestion passed the filters and the confidence threshold ({hint})",
            file=sys.stderr,
        )
        return cli.NOTHING_TO_SHOW
    if sys.stdout.isatty():
        lines.insert(0, header(answer[:k]))
    print("\n".join(lines))
    return 0


def print_each_line(
    answer: Answerer, batches: Iterable[list[list[str] | None]], prefix: str, k: int
) -> int:
    """One line per session: its suggestions, TAB-separated, best first; a batch at a call,
    each line flushed as it is answered. A session that could not be read (None) gets an
    empty line, and the exit status 2 at the end."""
    unread = False
    for sessions in batches:
        read = [session for session in sessions if session is not None]
        rows = iter(answer(read, prefix) if read else [])
        for session in sessions:
            unread |= session is None
            row = [] if session is None else next(rows)
            print("\t".join(item.text for item in row[:k]), flush=True)
    return cli.BAD_INPUT if unread else 0


def exit_now(code: int | None) -> NoReturn:
    """End the process with `code` once the output is written, skipping the interpreter's
    teardown: unloading TensorFlow and the model took about 1.5 s after the answer (measured
    alternating with a plain exit, 2-core CPU), and nothing is left to save."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader stopped reading (`| head`): nothing left to say
        pass
    os._exit(code or 0)


if __name__ == "__main__":
    exit_now(cli.guarded(main, "suggest"))
