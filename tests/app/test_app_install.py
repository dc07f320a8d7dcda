"""Installed, not cloned: the wheel holds `mtn_tui` (not `app`) and the bundled model (the
library's package data), and an installed `mtn-tui` finds that model from any directory."""

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from hang_limit import HANG_S

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    return next(out.glob("*.whl"))


def test_the_wheel_holds_mtn_tui_and_the_bundled_model(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} >= {"mtn_keras", "mtn_tui"}
    assert not any(name.startswith("app/") for name in names)
    model = ROOT / "saved_models" / "default"
    bundled = {
        f"mtn_keras/default_model/{path.relative_to(model)}"
        for path in model.rglob("*")
        if path.is_file()
    }
    assert bundled <= set(names)
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "mtn-tui = mtn_tui.main:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """(python, site-packages, environment) of a fresh venv with the wheel installed, not
    editable; the dependencies come from the test's own environment."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    assert (site / "mtn_tui" / "main.py").is_file()
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site, env


def test_an_installed_mtn_tui_starts_on_the_bundled_model_from_elsewhere(installed, tmp_path):
    python, site, env = installed
    env_dir = python.parents[1]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = (
        "from mtn_tui.pilot import settle\n"
        "from mtn_tui.tui import MtnApp\n"
        "app = MtnApp(show_load_time=False)\n"
        "async def started(pilot):\n"
        "    await settle(pilot, 600)\n"
        "    app.exit(f'{app.sub_title.split(\" · \")[0]} {app.model.path}')\n"
        "print(app.run(headless=True, auto_pilot=started))\n"
    )
    run = subprocess.run(
        [python, "-c", script],
        cwd=elsewhere,
        env={**env, "XDG_DATA_HOME": str(tmp_path / "user-data")},  # its history store
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    name, path = run.stdout.split()
    assert name == "default"
    assert Path(path) == site / "mtn_keras" / "default_model" / "savedmodel"
    help_text = subprocess.run(
        [env_dir / "bin" / "mtn-tui", "--help"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "usage: mtn-tui" in help_text


def test_installed_commands_take_default_from_elsewhere(installed, tmp_path):
    # `--model default` is the bundled model wherever it is
    # installed, for suggest and for evaluate.
    python, _, env = installed
    log = tmp_path / "log.txt"
    log.write_text((ROOT / "examples" / "tiny-aol.txt").read_text(encoding="utf-8"))
    suggest = subprocess.run(
        [
            python,
            "-m",
            "mtn_keras.suggest",
            "--model",
            "default",
            "--k",
            "3",
            "weather",
            "weather boston",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert suggest.returncode in (0, 1), suggest.stderr[-2000:]
    assert suggest.stderr == "" or "no suggestion passed" in suggest.stderr
    evaluate = subprocess.run(
        [python, "-m", "mtn_keras.evaluate", "--model", "default", "--input", str(log)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert evaluate.returncode == 0, evaluate.stderr[-2000:]
    assert "| default |" in evaluate.stdout and "pairs 536" in evaluate.stdout
