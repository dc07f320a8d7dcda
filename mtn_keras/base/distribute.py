"""Which `tf.distribute` strategy trains a model, and what that means for each worker.

Imports Keras only inside its functions: `train` reads --strategy and TF_CONFIG before it
imports TensorFlow (quietly).

`--strategy auto|one|mirrored|multi-worker` of `python -m mtn_keras.train`. A cluster is
described the standard way, by the `TF_CONFIG` environment variable that Kubernetes (the
TF operator), Slurm scripts or plain ssh set on every worker; only its chief writes
artifacts, the other workers write to temporary directories (the TF multi-worker guide).
"""

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tensorflow as tf

STRATEGIES = ("auto", "one", "mirrored", "multi-worker")
# Each worker builds the same seeded dataset and keeps its share of every global batch:
# the prepared splits are single in-memory tensors, so there are no files to shard by.
AUTO_SHARD_POLICY = "DATA"


class StrategyError(ValueError):
    """The requested strategy cannot run here; says why."""


@dataclasses.dataclass(frozen=True)
class Cluster:
    """This worker's view of TF_CONFIG: how many workers, whether it is the chief, its task
    (`worker 1`) and the other tasks' addresses, which it waits for."""

    workers: int = 1
    chief: bool = True
    task: str = dataclasses.field(default="", compare=False)
    peers: tuple = dataclasses.field(default=(), compare=False)


def read_cluster(environ: Mapping[str, str] | None = None) -> Cluster:
    """The cluster named by TF_CONFIG (a one-worker cluster when it is unset or blank).
    Raises StrategyError, saying what is wrong, for one TensorFlow could not use."""
    text = (os.environ if environ is None else environ).get("TF_CONFIG", "").strip()
    if not text:
        return Cluster()
    try:
        config = json.loads(text)
        cluster = config.get("cluster", {})
        task_type = config["task"]["type"]
        task_index = int(config["task"]["index"])
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise StrategyError(f"TF_CONFIG is not a cluster spec with a task ({error!r})") from None
    if not isinstance(cluster, dict) or not all(
        isinstance(tasks, list) and all(isinstance(a, str) and ":" in a for a in tasks)
        for tasks in cluster.values()
    ):
        raise StrategyError(
            "TF_CONFIG: `cluster` must map each job to a list of host:port "
            f"addresses, not {json.dumps(cluster)[:120]}"
        )
    if not 0 <= task_index < len(cluster.get(task_type, [])):
        raise StrategyError(
            f"TF_CONFIG: the task {task_type} {task_index} is not in the "
            f"cluster ({', '.join(f'{k}: {len(v)}' for k, v in cluster.items())})"
        )
    workers = len(cluster.get("chief", [])) + len(cluster.get("worker", []))
    # The TF convention: the task `chief` if the cluster has one, else worker 0.
    chief = task_type == "chief" or (
        task_type == "worker" and task_index == 0 and not cluster.get("chief")
    )
    peers = tuple(
        address
        for job in ("chief", "worker")
        for index, address in enumerate(cluster.get(job, []))
        if (job, index) != (task_type, task_index)
    )
    return Cluster(workers, chief, f"{task_type} {task_index}", peers)


def on_cluster(requested: str, cluster: Cluster) -> bool:
    """Whether `requested` trains as one worker of the TF_CONFIG cluster."""
    return requested == "multi-worker" or (requested == "auto" and cluster.workers > 1)


def resolve(requested: str, cluster: Cluster, gpus: int) -> str:
    """The strategy to use: `auto` is multi-worker when TF_CONFIG names more than one
    worker, mirrored when more than one GPU is visible, else one."""
    import keras

    if requested not in STRATEGIES:
        raise StrategyError(f"--strategy {requested}: choose one of {', '.join(STRATEGIES)}")
    if keras.config.backend() != "tensorflow":
        if requested == "one" or (requested == "auto" and not on_cluster(requested, cluster)):
            return "one"
        what = "TF_CONFIG's cluster" if requested == "auto" else f"--strategy {requested}"
        raise StrategyError(
            f"{what} needs the TensorFlow backend (KERAS_BACKEND is {keras.config.backend()})"
        )
    if on_cluster(requested, cluster):
        if cluster.workers < 2:
            raise StrategyError(
                "--strategy multi-worker needs a TF_CONFIG that names a cluster "
                "of two or more workers; on one machine use mirrored or one"
            )
        return "multi-worker"
    if requested == "auto":
        return "mirrored" if gpus > 1 else "one"
    return requested


class OneDevice:
    """What fit_model needs of a strategy under a backend without tf.distribute (JAX): one
    replica, and a scope that changes nothing."""

    num_replicas_in_sync = 1

    def scope(self) -> contextlib.nullcontext:
        return contextlib.nullcontext()


def make_strategy(name: str) -> "tf.distribute.Strategy | OneDevice":
    """The tf.distribute strategy called `name` (see `resolve`); OneDevice under another
    backend, where `resolve` allows only `one`. Create it before any other TensorFlow work:
    the collective ops of multi-worker training are set up at start."""
    import keras

    if keras.config.backend() != "tensorflow":
        return OneDevice()
    import tensorflow as tf

    if name == "multi-worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "mirrored":
        # Every local GPU; without one, every logical CPU device (one unless configured).
        devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([device.name for device in devices])
    return tf.distribute.get_strategy()  # the default: one device, no distribution


def local_gpus() -> int:
    """How many GPUs TensorFlow sees, when Keras runs on it; 0 under another backend, which
    `resolve` gives one device whatever it sees."""
    import keras

    if keras.config.backend() != "tensorflow":
        return 0
    import tensorflow as tf

    return len(tf.config.list_physical_devices("GPU"))


def shard(dataset: "tf.data.Dataset") -> "tf.data.Dataset":
    """`dataset` with the auto-shard policy stated, for a strategy to split across workers."""
    import tensorflow as tf

    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = getattr(
        tf.data.experimental.AutoShardPolicy, AUTO_SHARD_POLICY
    )
    return dataset.with_options(options)


def warmup_for(warmup_steps: int, replicas: int) -> int:
    """Warm-up steps at a global batch `replicas` times larger: the same number of sessions.
    With the Transformer schedule this also raises the rate by sqrt(replicas) at every point
    counted in sessions: the square-root scaling rule for Adam."""
    return max(1, round(warmup_steps / replicas))


def replica_loss(loss_sum: Any, tokens: Any) -> Any:
    """This replica's part of the mean loss per target token of the global batch, from its
    own sum and token count, as Keras expects under tf.distribute: the replicas' gradients,
    summed, are those of the global mean, and the value is that mean divided by the number
    of replicas (Keras multiplies it back to log it), however unevenly the batch is split."""
    import keras

    if keras.config.backend() != "tensorflow":
        return loss_sum / keras.ops.maximum(tokens, 1.0)
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return loss_sum / tf.maximum(tokens, 1.0)
    total = tf.maximum(context.all_reduce("sum", tf.stop_gradient(tokens)), 1.0)
    share = loss_sum / total
    mean = context.all_reduce("sum", tf.stop_gradient(share))
    return share + tf.stop_gradient(mean / context.num_replicas_in_sync - share)


def reducible_logs(logs: dict[str, Any]) -> dict[str, Any]:
    """A training step's logs as Keras can reduce them across workers: Keras 3 takes the
    mean of each along axis 0 under MultiWorkerMirroredStrategy, which a scalar lacks
    (tensorflow/tensorflow#72388), so there they become vectors of one value. The epoch's
    logs are read from the metrics themselves, as scalars."""
    import keras

    if keras.config.backend() != "tensorflow":
        return logs
    import tensorflow as tf

    if not isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
        return logs
    return {name: tf.reshape(value, (1,)) for name, value in logs.items()}


def write_dir(out: str, chief: bool) -> str:
    """Where this worker writes its artifacts: `out` for the chief, a fresh temporary
    directory for every other worker (removed by `finish`)."""
    return out if chief else tempfile.mkdtemp(prefix="mtn-keras-worker-")


def finish(directory: str, out: str) -> None:
    """Removes a non-chief worker's temporary directory once training is done."""
    if os.path.abspath(directory) != os.path.abspath(out):
        shutil.rmtree(directory, ignore_errors=True)
