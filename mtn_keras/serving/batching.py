"""Requests of one signature answered together, fairly and each on its own merits: a call's
sessions are split between the client addresses waiting, and a client's part between its
requests, round-robin, so that neither a large request nor a client with many holds another
behind it; a request whose client has gone is dropped
before its next share is computed; a call that fails is retried request by request, so that
no request fails for another's input."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from mtn_keras.data.padding import front_padded
from mtn_keras.serving.outputs import SLOT_AXES
from mtn_keras.serving.requests import INPUT_RANKS, Columns

if TYPE_CHECKING:
    import tensorflow as tf

# The batch sizes of a model call (TensorFlow Serving's allowed_batch_sizes): a call is padded
# with empty sessions to the next one, so XLA compiles the search for these few sizes (at
# start, see warm_up) instead of once for every size that clients happen to make (each took
# 1 to 2.5 s, and held every request behind it). Above the largest, the graph's chunks of 64.
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)
# The sessions of one request in one model call while others wait: on a CPU a call costs
# about 25 ms a session, so a one-session request behind a large one waits for a call of 8
# (0.2 s) and then shares one of 16, where calls of 64 held it for 1.3 s each.
SHARE = 8
# The sessions of one model call split between the client addresses waiting (at least one
# each): on a CPU a call of 2 sessions costs as one of 1 (53 against 55 ms on the bundled
# model) and larger ones about 30 ms a session, so a client that arrives while another keeps
# the model busy waits for a call of 2 and then shares one of 2, not for calls of 64.
CLIENT_SHARE = 2
# A request's outputs (or its share's), numpy arrays by output name.
Outputs: TypeAlias = dict[str, np.ndarray]


class Pending:
    """One request waiting for its answer: its columns, its client's address, how many of its
    sessions went to a model call (`sent`) and came back (`answered`), and the future its
    handler awaits."""

    def __init__(
        self,
        columns: Mapping[str, Sequence[str] | Sequence[Sequence[str]]],
        done: asyncio.Future[Outputs] | None = None,
        client: str = "",
    ) -> None:
        self.columns, self.done, self.client = columns, done, client
        self.size = len(columns["session"])
        self.widths = {  # the request's own widths: every share of it is padded to these
            key: max((len(row) for row in rows), default=0)
            for key, rows in columns.items()
            if INPUT_RANKS[key] == 2
        }
        self.sent, self.answered = 0, 0
        self.parts: list[Outputs] = []

    def gone(self) -> bool:
        """Whether nobody waits for this answer any more (client gone, or it failed)."""
        return self.done is not None and self.done.done()

    def deliver(self, answer: Outputs | Exception, sessions: int) -> None:
        """Take the answer (or the error) of `sessions` of its sessions; answer the request
        once all are in."""
        if self.done is None or self.gone():  # no future (a warm-up's): nobody waits
            return
        if isinstance(answer, Exception):
            self.done.set_exception(answer)
            return
        self.parts.append(answer)
        self.answered += sessions
        if self.answered == self.size:
            joined = {key: np.concatenate([p[key] for p in self.parts]) for key in answer}
            self.done.set_result(joined)


# A share of a model call: (a request, its first session in the call, the end of its sessions).
Share: TypeAlias = tuple[Pending, int, int]


class Batcher:
    """Requests for one signature, answered together: the first waits up to `wait` seconds for
    others, then one model call (in a worker thread) answers up to `max_batch` sessions:
    `client_share` of them split between the client addresses waiting (None: no split), at
    most `share` of each request while others wait. `observe(sessions)` hears the sessions
    of each call (the server's metrics)."""

    def __init__(
        self,
        function: Callable[..., Mapping[str, tf.Tensor]],
        names: Sequence[str],
        wait: float,
        max_batch: int,
        share: int = SHARE,
        observe: Callable[[int], None] | None = None,
        client_share: int | None = None,
    ) -> None:
        self.function, self.names, self.observe = function, names, observe
        self.wait, self.max_batch, self.share = wait, max_batch, min(share, max_batch)
        self.client_share = client_share or max_batch
        self.waiting: list[Pending] = []  # requests with sessions still to send, oldest first
        self.arrived = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def answer(self, columns: Columns, client: str = "") -> Outputs:
        """The outputs (numpy arrays) for one request's columns from `client` (an address).
        Cancelling it (the client went away) drops the sessions not yet computed."""
        if self.task is None or self.task.done():  # first request, or a loop that failed
            self.task = asyncio.create_task(self.run())
        done: asyncio.Future[Outputs] = asyncio.get_running_loop().create_future()
        self.waiting.append(Pending(columns, done, client))
        self.arrived.set()
        return await done

    async def run(self) -> None:
        while True:
            await self.gather()
            shares = self.take()
            if not shares:
                continue
            if self.observe is not None:
                self.observe(sum(stop - start for _, start, stop in shares))
            answers = await asyncio.to_thread(self.answer_shares, shares)
            for (pending, start, stop), answer in zip(shares, answers):
                pending.deliver(answer, stop - start)

    async def gather(self) -> None:
        """Wait for a request, then up to `wait` seconds for others while the call has room."""
        while not self.waiting:
            self.arrived.clear()
            await self.arrived.wait()
        deadline = time.monotonic() + self.wait
        while sum(p.size - p.sent for p in self.waiting) < self.max_batch:
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), deadline - time.monotonic())
            except TimeoutError:
                break

    def take(self) -> list[Share]:
        """The shares of the next call, (request, first session, end): round-robin, a session
        at a time, each client its part of `client_share`, at most `share` of a request,
        then the padding of its batch size filled from those with more within their client's
        part; requests whose client has gone are dropped. The requests served go behind
        those that were not, so that a client's requests take turns."""
        live = [p for p in self.waiting if not p.gone()]
        part = max(1, self.client_share // max(1, len({p.client for p in live})))
        counts = [0] * len(live)
        used = self.max_batch - deal(counts, live, self.max_batch, self.share, part)
        padded = next((size for size in BATCH_SIZES if size >= used), used)
        padding = min(padded, max(self.max_batch, used)) - used
        deal(counts, live, padding, self.max_batch, part)
        shares = []
        for count, p in zip(counts, live):
            if count or not p.size:  # a request of no sessions is answered by a call too
                shares.append((p, p.sent, p.sent + count))
                p.sent += count
        served = [p for p, count in zip(live, counts) if count and p.sent < p.size]
        left = [p for p, count in zip(live, counts) if not count and p.sent < p.size]
        self.waiting = left + served
        return shares

    def answer_shares(self, shares: Sequence[Share]) -> Sequence[Outputs | Exception]:
        """Each share's answer from one model call; if it fails, from a call of each alone,
        so that each share gets its own answer or error."""
        try:
            return self.call(shares)
        except Exception as error:  # TensorFlow raises many types; the culprit hears it
            if len(shares) == 1:
                return [error]
        return [self.answer_shares([share])[0] for share in shares]

    def warm_up(self, sizes: Iterable[int] = (1,)) -> None:
        """One call at each batch size of `sizes`: the first call of a signature prepares its
        graph and each new size compiles the search, which no client should wait for."""
        for size in sizes:
            empty = Pending(
                {key: [[]] * size if INPUT_RANKS[key] == 2 else [""] * size for key in self.names}
            )
            self.call([(empty, 0, size)])

    def call(self, shares: Sequence[Share]) -> list[Outputs]:
        """One model call for `shares` (request, first session, end), split back per share."""
        import tensorflow as tf

        widths = {key: max(p.widths[key] for p, _, _ in shares) for key in shares[0][0].widths}
        sessions = sum(stop - start for _, start, stop in shares)
        padding = next((size for size in BATCH_SIZES if size >= sessions), sessions) - sessions
        inputs = {}
        for key in self.names:
            rows = [row for p, start, stop in shares for row in p.columns[key][start:stop]]
            rows += [[] if key in widths else ""] * padding
            if key in widths:
                padded = front_padded(rows, widths[key])
                inputs[key] = tf.constant(padded, tf.string, [len(padded), widths[key]])
            else:
                inputs[key] = tf.constant(rows, tf.string, [len(rows)])
        out = {key: value.numpy() for key, value in self.function(**inputs).items()}
        answers, first = [], 0
        for p, start, stop in shares:
            answers.append(own_slots(out, first, first + stop - start, p.widths["session"]))
            first += stop - start
        return answers


def deal(counts: list[int], live: Sequence[Pending], room: int, cap: int, part: int) -> int:
    """Add to `counts` (sessions per request of `live`) one session at a time, round-robin,
    at most `cap` a request and `part` a client, until `room` is used or none may have more;
    returns the room left."""
    given = Counter[str]()
    for c, p in zip(counts, live):
        given[p.client] += c

    def more(i: int) -> bool:
        p = live[i]
        return counts[i] < min(cap, p.size - p.sent) and given[p.client] < part

    while room and any(more(i) for i in range(len(live))):
        for i, p in enumerate(live):
            if room and more(i):
                counts[i], room, given[p.client] = counts[i] + 1, room - 1, given[p.client] + 1
    return room


def own_slots(out: Mapping[str, np.ndarray], start: int, stop: int, width: int) -> Outputs:
    """Rows start:stop of the call's outputs, cut back to a request of `width` queries: ""
    padding fills a row in front, so its slots are the last width + 1 of each slot axis."""
    answer = {}
    for key, value in out.items():
        value = value[start:stop]
        for axis in SLOT_AXES.get(key, ()):
            slots = min(max(width, 1) + 1, value.shape[axis])
            value = np.take(value, range(value.shape[axis] - slots, value.shape[axis]), axis)
        answer[key] = value
    return answer
