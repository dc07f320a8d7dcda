"""The Spark context the pipeline runs on: the master given, else spark-submit's, else every
core of this machine; on a local master the workers run this Python, so that they import
this project as the driver does."""

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any


class NoEngine(Exception):
    """pyspark is not installed (the `cluster` extra) or Java is missing."""


@contextlib.contextmanager
def spark_context(master: str | None = None) -> Iterator[Any]:
    """A SparkContext on `master` (local[N], spark://HOST:PORT, yarn, k8s://...), stopped on
    the way out. Raises NoEngine when pyspark is not installed."""
    try:
        from pyspark import SparkConf, SparkContext
    except ImportError:
        raise NoEngine("needs pyspark: pip install 'mtn-keras[cluster]' (and Java 17)") from None
    conf = SparkConf().setAppName("mtn-keras").set("spark.ui.showConsoleProgress", "false")
    master = master or conf.get("spark.master", "local[*]")
    conf.setMaster(master)
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        conf.set("spark.ui.enabled", "false")
    try:
        sc = SparkContext(conf=conf)
    except RuntimeError as error:  # pyspark's own errors: no Java, a gateway that exits
        raise NoEngine(f"Spark did not start ({error}); it needs Java 17") from None
    sc.setLogLevel("ERROR")
    try:
        yield sc
    finally:
        sc.stop()
