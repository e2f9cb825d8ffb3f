"""Every user job of an installed GECOBench Hub, the way a ``pip install gecobench-hub`` user meets it.

A wheel built from the source tree is installed **with its dependencies** into a fresh virtual environment under
the system's temporary folder (a prefix such as ``/tmp/...``, which the code-submission sandbox must cope with).
Torch goes in first as the pinned CPU build (``torch==2.13.0``, a local wheel on these machines, as ``make setup``
does), then the wheel resolves everything else through pip's ordinary index: no ``--system-site-packages``, no
``.pth`` line to the shared environment. From an unrelated folder the test runs ``gecobench --help``, trains a
tiny OLA, evaluates two built-ins and a user's explainer file, submits a code submission, runs the queue to
FINISHED (in the bubblewrap sandbox, skipped with the reason where it cannot start), shows the request's Mass
Accuracy with ``gecobench submit status``, and opens the Space on a free port.

Slow (minutes: the dependency install alone is most of it); ``make test-full`` runs it. The short installed path
(``tests/test_packaging.py``) stays in the default run.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from test_packaging import REPO_ROOT, USER_EXPLAINER, build_wheel, clean_env, installed_venv

#: the options that keep an evaluation to seconds: two sentence groups, no properties, a short bootstrap
SHORT_EVALUATION = ["--max-groups", "2", "--no-properties"]

#: the front door from the installed package: the tiny OLA loaded as an object, a built-in and a plain function
FRONT_DOOR = """
import json, sys
import gecobench
from gecobench.models import load_zoo_model

model, tokenizer, info = load_zoo_model(sys.argv[1])

def last_word_function(model, tokenizer, words, targets):
    return [[0.0] * (len(sentence) - 1) + [1.0] for sentence in words]

results = gecobench.evaluate(model, tokenizer, explainers=["saliency", last_word_function], config="binary_all",
                             max_sentences=2, properties=False, faithfulness=False, bootstrap=20, chunk_size=2,
                             progress=False, model_info=info)
table = results.to_pandas()
print(json.dumps(dict(zip(table["explainer"], table["mass_accuracy.value"].astype(float)))))
"""


class Steps:
    """Runs the installed command from the user's folder and remembers how long each step took."""

    def __init__(self, command: Path, work: Path, env: dict[str, str]) -> None:
        self.command, self.work, self.env = command, work, env
        self.timings: dict[str, float] = {}

    def __call__(self, step: str, *arguments: str, timeout: float = 1200) -> str:
        start = time.perf_counter()
        done = subprocess.run([str(self.command), *arguments], cwd=self.work, env=self.env, capture_output=True,
                              text=True, timeout=timeout, check=False)
        self.timings[step] = time.perf_counter() - start
        assert done.returncode == 0, (
            f"`gecobench {' '.join(arguments)}` exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_http(url: str, process: subprocess.Popen, timeout: float) -> int:
    """The HTTP status of ``url`` once it answers (polling), or fail with the server's output."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the Space exited with {process.returncode}:\n{process.stdout.read()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(2)
    pytest.fail(f"{url} did not answer within {timeout:.0f} s")


def _sandbox_can_start() -> tuple[bool, str]:
    """Whether bubblewrap builds the sandbox on this machine (the checkout's probe; the installed worker runs the
    same one at its start and refuses to start when it fails)."""
    from submissions.sandbox import sandbox_status

    return sandbox_status()


@pytest.mark.slow  # installs every dependency into a fresh environment: many minutes
def test_a_fresh_environment_with_the_dependencies_runs_every_user_job(shared_data: Path, tmp_path: Path) -> None:
    started = time.perf_counter()
    wheel = build_wheel(REPO_ROOT, tmp_path / "wheel")
    venv = tmp_path / "venv"
    env = clean_env(tmp_path)
    env["GECOBENCH_GECO_DIR"] = str(shared_data / "geco")
    python = installed_venv(venv, wheel, env)
    install_seconds = time.perf_counter() - started
    command = venv / "bin" / "gecobench"
    assert command.is_file(), "the wheel installs no `gecobench` console script"
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "my_explainer.py").write_text(USER_EXPLAINER, encoding="utf-8")
    gecobench = Steps(command, work, env)

    # the command and its jobs
    top = gecobench("help", "--help")
    for job in ("demo", "train", "zoo", "evaluate", "leaderboard", "submit", "queue", "space", "spanish", "export",
                "publish", "reference", "compare", "build-geco"):
        assert f"  {job}" in top, f"`gecobench --help` does not list {job}"
    origin = subprocess.run([str(python), "-c", "import gecobench; print(gecobench.__file__)"], cwd=work, env=env,
                            capture_output=True, text=True, check=True, timeout=300).stdout.strip()
    assert Path(origin).resolve().is_relative_to(venv.resolve()), f"gecobench imported from {origin}, not the wheel"

    # train a tiny OLA, then evaluate two built-ins and the user's explainer file on it
    gecobench("train", "train", "--regime", "OLA", "--config", "binary_all", "--schedule", "tiny",
              "--output-dir", "zoo", "--threads", "1", "--quiet")
    checkpoint = "zoo/binary_all/OLA/seed0"
    assert (work / checkpoint / "gecobench_model.json").is_file()
    out = gecobench("evaluate", "evaluate", "--explainers", "uniform_random", "saliency", "last_word",
                    "--import", "my_explainer.py", "--models", checkpoint, *SHORT_EVALUATION, "--chunk-size", "2",
                    "--no-faithfulness", "--bootstrap", "20", "--results", "store", "--checkpoint-dir", "checkpoints",
                    "--quiet")
    assert "records written: 3" in out, out
    records = [json.loads(p.read_text()) for p in (work / "store" / "explainer_score").glob("*.json")]
    assert sorted(r["explainer"]["name"] for r in records) == ["last_word", "saliency", "uniform_random"]
    for record in records:
        assert 0.0 <= record["metrics"]["mass_accuracy"]["value"] <= 1.0, record["explainer"]["name"]
    leaderboard = gecobench("leaderboard", "leaderboard", "--results", "store")
    assert "last_word" in leaderboard and "saliency" in leaderboard

    # the Python front door on the same model as an object, with a plain-function explainer: its MA equals the
    # CLI's records (the same stages, the same sentences)
    front_door = subprocess.run([str(python), "-c", FRONT_DOOR, checkpoint], cwd=work, env=env, capture_output=True,
                                text=True, timeout=1200)
    assert front_door.returncode == 0, front_door.stderr[-3000:]
    by_name = json.loads(front_door.stdout.strip().splitlines()[-1])
    cli_ma = {r["explainer"]["name"]: r["metrics"]["mass_accuracy"]["value"] for r in records}
    assert set(by_name) == {"saliency", "last_word_function"}, by_name
    # float32 attributions folded to words and averaged: equal to float32 rounding of values of order 1
    assert by_name["saliency"] == pytest.approx(cli_ma["saliency"], rel=0, abs=float(64 * np.finfo(np.float32).eps))
    assert by_name["last_word_function"] == pytest.approx(cli_ma["last_word"], rel=0, abs=float(64 * np.finfo(np.float32).eps))

    # a code submission through the queue: the example the package ships, run on the tiny OLA
    gecobench("submit example", "submit", "example", "gradient_norm.py")
    gecobench("submit code", "submit", "--requests", "requests", "code", "gradient_norm.py", "--name", "gradient_norm",
              "--version", "1.0.0", "--authors", "Ada Lovelace", "--description", "gradient norm", "--license", "MIT",
              "--contact", "ada@example.org", "--submitter", "ada")
    usable, why = _sandbox_can_start()
    if usable:
        gecobench("queue", "queue", "--requests", "requests", "--results", "queue-results", "--models", checkpoint,
                  "--configs", "binary_all", *SHORT_EVALUATION)
        status = json.loads(gecobench("submit status --json", "submit", "status", "--requests", "requests",
                                      "--results", "queue-results", "--json"))
        (request,) = status
        assert request["status"] == "FINISHED", request
        assert request["scores"] and all(0.0 <= s["mass_accuracy"] <= 1.0 for s in request["scores"]), request
        table = gecobench("submit status", "submit", "status", "--requests", "requests", "--results", "queue-results")
        assert "FINISHED" in table and "MA " in table, table
    else:
        print(f"queue step skipped: the bubblewrap sandbox cannot start here ({why})")

    # the Space answers on its port; only the process started here is stopped
    port = _free_port()
    start = time.perf_counter()
    space = subprocess.Popen([str(command), "space", "--results", "store", "--port", str(port)], cwd=work, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert _wait_for_http(f"http://127.0.0.1:{port}/", space, timeout=300) == 200
        gecobench.timings["space answers"] = time.perf_counter() - start
    finally:
        space.terminate()
        try:
            space.wait(timeout=30)
        except subprocess.TimeoutExpired:
            space.kill()
            space.wait(timeout=30)
    timings = {"build + install": install_seconds, **gecobench.timings, "total": time.perf_counter() - started}
    print("installed end-to-end timings (s): " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items()))
    if not usable:
        pytest.skip(f"every step ran except the queue: the bubblewrap sandbox cannot start here ({why})")
