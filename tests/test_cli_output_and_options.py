"""Command-line output and options: quiet means quiet, options after sub-commands, help examples
that name real folders, no tracked file overwritten unless asked, a busy port explained."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_silence_library_progress_turns_off_every_library_bar() -> None:
    import datasets
    import transformers
    from huggingface_hub.utils import are_progress_bars_disabled

    from gecobench.quiet import silence_library_progress

    transformers.utils.logging.enable_progress_bar()
    datasets.enable_progress_bars()
    try:
        silence_library_progress()
        assert not transformers.utils.logging.is_progress_bar_enabled()
        assert not datasets.is_progress_bar_enabled()
        assert are_progress_bars_disabled()
    finally:
        transformers.utils.logging.enable_progress_bar()
        datasets.enable_progress_bars()


def test_submit_status_accepts_requests_after_the_subcommand(tmp_path) -> None:
    from submissions.requests import RequestStore
    from submissions.submit import submit_file

    store = tmp_path / "reqs"
    code = tmp_path / "x_explainer.py"
    code.write_text("class X:\n    name = 'x_explainer'\n    def explain(self, model, tokenizer, words, targets):\n"
                    "        return []\n")
    submit_file(RequestStore(store), "code", {"name": "x_explainer", "version": "1.0.0", "authors": "A",
                                              "description": "d", "license": "MIT", "contact": "a@b"}, code)
    from submissions.cli import submit
    for argv in (["status", "--requests", str(store), "--json"], ["--requests", str(store), "status", "--json"]):
        out = io.StringIO()
        with redirect_stdout(out):
            assert submit.main(argv) == 0
        assert [row["name"] for row in json.loads(out.getvalue())] == ["x_explainer"], argv


def test_help_examples_name_the_demo_checkpoint_folders() -> None:
    from gecobench.evaluation.demo import demo_plan

    plan = demo_plan(quick=False)
    evaluate = (REPO_ROOT / "gecobench" / "cli" / "evaluate.py").read_text(encoding="utf-8")
    queue = (REPO_ROOT / "submissions" / "cli" / "queue.py").read_text(encoding="utf-8")
    assert f"runs/models/{plan.folder_name('CE', 0)}" in evaluate
    assert f"runs/models/{plan.folder_name('OLA', 0)}" in queue
    assert "MRC always runs" not in queue


def test_train_zoo_writes_docs_only_when_asked() -> None:
    train_zoo = (REPO_ROOT / "gecobench" / "cli" / "zoo.py").read_text(encoding="utf-8")
    parser_defaults = train_zoo.split('"--doc"', 1)[1].split(")", 1)[0]
    assert "default=None" in parser_defaults
    help_text = subprocess.run([sys.executable, "scripts/maintainer/screenshot_space.py", "--help"], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=120, check=False).stdout
    assert "default: artifacts/screenshots" in help_text and "--docs" in help_text


def test_the_space_explains_a_busy_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = subprocess.run([sys.executable, "leaderboard_space/app.py", "--port", str(port)], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr
