"""The server's Prometheus metrics at TensorFlow Serving's path, `/monitoring/prometheus/metrics`,
kept and written by prometheus-client under TensorFlow Serving's names where it has one:
predict requests by status (gRPC's code names) through either door (REST or gRPC), their
latency in microseconds; and this server's own, the sessions of each model call."""

from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

# TensorFlow Serving's buckets of request_latency, in microseconds: 10 x 1.8^i, 33 of them.
LATENCY_BUCKETS = tuple(round(10 * 1.8**i, 1) for i in range(33))
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # the text format generate_latest writes
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
# The status of a REST answer as TensorFlow Serving counts it: by the gRPC code it stands for.
HTTP_STATUS = {
    200: "OK",
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    413: "RESOURCE_EXHAUSTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",  # the client hung up before its answer
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class Metrics:
    """What the server counts for model `model`, in a registry of its own: `request(...)` after
    each predict request (signature "" when the request named none this model has), and
    `batch(signature, sessions)` after each model call."""

    def __init__(self, model: str) -> None:
        self.model = model
        disable_created_metrics()  # no `_created` series, as TensorFlow Serving writes none
        self.registry = CollectorRegistry()
        self.requests = Counter(
            ":tensorflow:serving:request_count",
            "The total number of requests.",
            ["model_name", "status", "signature", "entrypoint"],
            registry=self.registry,
        )
        self.latency = Histogram(
            ":tensorflow:serving:request_latency",
            "Distribution of wall time (in microseconds) for Tensorflow Serving request.",
            ["model_name", "API", "entrypoint", "signature"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.batches = Histogram(
            "mtn_serving_batch_sessions",
            "sessions in one model call, before padding",
            ["model", "signature"],
            buckets=BATCH_BUCKETS,
            registry=self.registry,
        )

    def request(
        self, signature: str, status: str, seconds: float, entrypoint: str = "REST"
    ) -> None:
        """Count one predict request: its `status` (a gRPC code's name, as "OK"), its
        `seconds` from arrival to answer, the door (`entrypoint`: "REST" or "GRPC")."""
        signature = signature or "unknown"
        self.requests.labels(self.model, status, signature, entrypoint).inc()
        self.latency.labels(self.model, "Predict", entrypoint, signature).observe(seconds * 1e6)

    def batch(self, signature: str, sessions: int) -> None:
        """Count one model call of `sessions` sessions for `signature`."""
        self.batches.labels(self.model, signature).observe(sessions)

    def text(self) -> bytes:
        """Every metric in Prometheus's text format (0.0.4)."""
        return generate_latest(self.registry)
