"""The server's Prometheus metrics, written by hand in the text exposition format (version
0.0.4) at TensorFlow Serving's path, `/monitoring/prometheus/metrics`: requests and errors by
signature and HTTP code, a latency histogram, and the sessions of each model call. No
dependency: a few counters under one lock."""

import threading
from collections import Counter

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """What the server counts for model `model`: `request(signature, code, seconds)` after each
    predict request (signature "" when the request named none this model has), and
    `batch(signature, sessions)` after each model call."""

    def __init__(self, model):
        self.model = model
        self._lock = threading.Lock()  # model calls report from worker threads
        self._requests = Counter()  # (signature, code) -> requests
        self._latency = {}  # signature -> Histogram
        self._batches = {}  # signature -> Histogram

    def request(self, signature, code, seconds):
        with self._lock:
            self._requests[signature, code] += 1
            self._latency.setdefault(signature, Histogram(LATENCY_BUCKETS)).add(seconds)

    def batch(self, signature, sessions):
        with self._lock:
            self._batches.setdefault(signature, Histogram(BATCH_BUCKETS)).add(sessions)

    def text(self):
        """Every metric in Prometheus's text format."""
        with self._lock:
            requests = sorted(self._requests.items())
            latency, batches = sorted(self._latency.items()), sorted(self._batches.items())
        lines = header("mtn_serving_requests_total", "counter", "predict requests by answer")
        lines += [
            f"mtn_serving_requests_total{self._labels(s, code=c)} {n}" for (s, c), n in requests
        ]
        lines += header("mtn_serving_request_errors_total", "counter", "requests answered >= 400")
        lines += [
            f"mtn_serving_request_errors_total{self._labels(s, code=c)} {n}"
            for (s, c), n in requests
            if c >= 400
        ]
        name = "mtn_serving_request_latency_seconds"
        lines += header(name, "histogram", "seconds from a request's arrival to its answer")
        for signature, histogram in latency:
            lines += histogram.lines(name, self._labels(signature))
        name = "mtn_serving_batch_sessions"
        lines += header(name, "histogram", "sessions in one model call, before padding")
        for signature, histogram in batches:
            lines += histogram.lines(name, self._labels(signature))
        return "\n".join(lines) + "\n"

    def _labels(self, signature, **more):
        pairs = {"model": self.model, "signature": signature or "unknown", **more}
        return "{" + ",".join(f'{key}="{escaped(value)}"' for key, value in pairs.items()) + "}"


class Histogram:
    """Observations counted into cumulative buckets of upper bounds `bounds`."""

    def __init__(self, bounds):
        self.bounds, self.counts, self.sum, self.count = bounds, [0] * len(bounds), 0.0, 0

    def add(self, value):
        for i, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[i] += 1
        self.sum, self.count = self.sum + value, self.count + 1

    def lines(self, name, labels):
        """The `_bucket`, `_sum` and `_count` lines of `name` with `labels` ("{...}")."""
        inner = labels[1:-1] + ","
        found = [
            f'{name}_bucket{{{inner}le="{bound}"}} {count}'
            for bound, count in zip(self.bounds, self.counts)
        ]
        found.append(f'{name}_bucket{{{inner}le="+Inf"}} {self.count}')
        return found + [f"{name}_sum{labels} {self.sum}", f"{name}_count{labels} {self.count}"]


def header(name, kind, words):
    return [f"# HELP {name} {words}", f"# TYPE {name} {kind}"]


def escaped(value):
    """A label value as the text format writes it: backslash, quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
