"""benchmarks/gpu_train.py, the run prepared for a GPU machine, in its `--steps 5` form on
the CPU: under JAX without TensorFlow, in mixed precision, on the tiny preset (the paper
preset's steps each compile for about a minute on this CPU). In bfloat16: JAX's CPU refuses
some of the tiny MTN's float16 matmuls ("precision 'F16_F16_F32' is not supported by
dot_general on CPU"), which a GPU runs."""

import json
import subprocess

import pytest
from jax_env import jax_command


@pytest.mark.slow
def test_gpu_train_prints_its_rates_loss_and_memory(jax_python, prepared_data):
    args = ["benchmarks/gpu_train.py", "--steps", "5", "--preset", "tiny", "--batch-size", "8"]
    args += ["--precision", "mixed_bfloat16", "--data", str(prepared_data)]
    done = subprocess.run(**jax_command(jax_python, "jax", *args), capture_output=True)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert (report["backend"], report["device"], report["precision"]) == (
        "jax",
        "cpu",
        "mixed_bfloat16",
    )
    assert report["steps"] == 5 and not report["stopped_by_budget"]
    assert report["compile_steps"] < 5 and report["sessions_per_second"] > 0
    assert report["loss"] > 0 and report["peak_memory_mb"] > 0
