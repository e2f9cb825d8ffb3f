"""Runs inside the sandbox: load the model, put up the diagnostic guards, import the submission, explain.

Started by :mod:`submissions.sandbox` as ``python -I -B <lib>/gecobench_sandbox_runner.py <input>/job.json``
inside bubblewrap (a staged copy of this file sits next to the staged packages). Everything trusted (libraries,
the model, its variants, the words) is loaded *before* the audit hook goes up; the submitted file is imported
only *after*. The result goes to descriptor 3 (the worker's result file), violations the hook saw to
descriptor 4.

The audit hook is a diagnostic layer that names what a submission tried; the isolation itself is the
operating system's (namespaces, an unprivileged user, a seccomp filter, a cgroup per run, rlimits). The time
this runner measures is the submission's own word (it can patch the clock): a diagnostic only. A submission can get around the hook and
rewrite both descriptors — the worker parses the result strictly and trusts nothing else in it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

SECRET_MARKERS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "ACCESS_KEY", "CREDENTIAL", "PRIVATE_KEY")
# Names the libraries read on import that merely contain a marker (TOKENIZERS_PARALLELISM is no token).
NOT_SECRET_PREFIXES = ("TOKENIZERS_",)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_SPAWN_EVENTS = {
    "subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec",
    "os.startfile", "pty.spawn",
}
_SOCKET_EVENTS = {"socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto"}
_FS_CHANGE_EVENTS = {
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.symlink", "os.link",
    "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move",
}


class SandboxViolation(PermissionError):
    """The submission did something the sandbox forbids."""


def _is_secret_name(key: str) -> bool:
    upper = key.upper()
    if upper.startswith(NOT_SECRET_PREFIXES):
        return False
    return any(marker in upper for marker in SECRET_MARKERS)


def _install_guards(workdir: Path, violation_fd: int) -> None:
    workdir_text = str(workdir.resolve())

    def under(path: str, prefix: str) -> bool:
        return path == prefix or path.startswith(prefix.rstrip("/") + "/")

    def violate(message: str) -> None:
        os.write(violation_fd, (message + "\n").encode("utf-8", "replace"))
        raise SandboxViolation(f"sandbox: {message}")

    def resolve(path) -> str | None:
        if isinstance(path, int):
            return None
        if isinstance(path, bytes):
            path = path.decode("utf-8", "replace")
        try:
            return os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))
        except (TypeError, ValueError, OSError):
            return None

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path = resolve(args[0])
            if path is None:
                return
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = any(ch in mode for ch in "wax+") or bool(flags & _WRITE_FLAGS)
            if writing and not under(path, workdir_text) and not under(path, "/tmp") and path != "/dev/null":
                violate(f"wrote outside its working directory: {path}")
            if path.startswith("/proc/") and path.endswith(("/environ", "/mem")):
                violate(f"read another process's environment or memory: {path}")
        elif event in _SOCKET_EVENTS:
            violate(f"opened a network socket ({event})")
        elif event in _SPAWN_EVENTS:
            violate(f"spawned a process ({event})")
        elif event in _FS_CHANGE_EVENTS:
            targets = [resolve(a) for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
            outside = [t for t in targets if t and not under(t, workdir_text)]
            if outside:
                violate(f"changed the file system outside its working directory ({event} {outside[0]})")
        elif event == "ctypes.dlopen":
            violate("loaded a native library with ctypes")

    class GuardedEnviron(type(os.environ)):
        def __getitem__(self, key):
            if isinstance(key, str) and _is_secret_name(key):
                violate(f"read the secret-looking environment variable {key}")
            return super().__getitem__(key)

    guarded = GuardedEnviron(
        os.environ._data, os.environ.encodekey, os.environ.decodekey,  # type: ignore[attr-defined]
        os.environ.encodevalue, os.environ.decodevalue,  # type: ignore[attr-defined]
    )
    os.environ = guarded  # type: ignore[misc]  # noqa: B003 - replacing the mapping object is the point: reads are guarded
    sys.addaudithook(hook)


def _find_explainer_class(module):
    from gecobench.explainers.base import Explainer

    candidates = [
        obj for obj in vars(module).values()
        if isinstance(obj, type) and obj.__module__ == module.__name__
        and callable(getattr(obj, "explain", None)) and isinstance(getattr(obj, "name", None), str)
    ]
    preferred = [c for c in candidates if issubclass(c, Explainer)]
    chosen = preferred or candidates
    if len(chosen) != 1:
        raise TypeError(
            f"the submission must define exactly one explainer class (a class with `name` and `explain`), found {len(chosen)}"
        )
    return chosen[0]


def _probe(job: dict, write_result) -> int:
    """The worker's start-up check: import the staged packages and the probe explainer, call it, answer."""
    import gecobench.explainers.base  # noqa: F401  - the staged packages and the environment's numpy import

    spec = importlib.util.spec_from_file_location("submitted_explainer", job["submission_file"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    explainer = _find_explainer_class(module)()
    items = json.loads(Path(job["inputs_file"]).read_text(encoding="utf-8"))["items"]
    scores = explainer.explain(None, None, [item["words"] for item in items], [item["target"] for item in items])
    header = {"explainer": {"name": str(explainer.name), "version": "0", "params": {}, "model_independent": True},
              "main_seconds": 0.0}
    write_result(header, {"main": [[float(v) for v in row] for row in scores]}, ["main"])
    return 0


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    workdir = Path(job["work_dir"])
    sys.dont_write_bytecode = True
    result_fd, violation_fd = int(job["result_fd"]), int(job["violation_fd"])

    def write_result(header: dict, scores: dict | None = None, kinds=()) -> None:
        # JSON lines: the header, then one line per (kind, input) in the job's order of kinds (the worker
        # size-checks each line against its input's word count before parsing it).
        os.lseek(result_fd, 0, os.SEEK_SET)
        os.ftruncate(result_fd, 0)
        lines = [json.dumps(header)] + [json.dumps(row) for kind in kinds for row in (scores or {})[kind]]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        while data:
            data = data[os.write(result_fd, data):]

    try:
        if job.get("probe"):
            return _probe(job, write_result)
        import numpy as np
        import torch

        torch.set_num_threads(1)
        from gecobench.evaluation.modelling import (
            mean_over_other_targets,
            noisy_copy,
            randomised_copy,
        )
        from gecobench.explainers.engine import attribute
        from gecobench.models import load_zoo_model

        model, tokenizer, info = load_zoo_model(job["model_path"])
        kinds = job.get("kinds", ["main"])
        # Every model variant is built before the guards go up; the submission only ever sees finished modules.
        variants = {"main": model}
        if "randomised" in kinds:
            variants["randomised"] = randomised_copy(model, job["randomisation_seed"])
        if "noisy" in kinds:
            variants["noisy"] = noisy_copy(model, job["noise_std"], job["randomisation_seed"] + 1)
        reference = None
        if "reference" in kinds and job.get("reference_model_path"):
            reference, reference_tokenizer, _ = load_zoo_model(job["reference_model_path"])
        inputs = json.loads(Path(job["inputs_file"]).read_text(encoding="utf-8"))
        items = inputs["items"]
        num_labels = int(info.get("num_labels") or getattr(model.config, "num_labels", 2))

        _install_guards(workdir, violation_fd)

        spec = importlib.util.spec_from_file_location("submitted_explainer", job["submission_file"])
        module = importlib.util.module_from_spec(spec)
        sys.modules["submitted_explainer"] = module
        spec.loader.exec_module(module)
        explainer = _find_explainer_class(module)()
        if inputs.get("train_words") is not None and hasattr(explainer, "fit"):
            explainer.fit(inputs["train_words"], inputs["train_labels"])
        words = [item["words"] for item in items]
        targets = [int(item["target"]) for item in items]
        seed = job.get("seed", 0)

        def run(variant, tok, tgt):
            return [np.asarray(x, dtype=float).tolist() for x in attribute(explainer, variant, tok, words, tgt, seed=seed)]

        started = time.perf_counter()
        # The worker asks for "main" alone on every model it scores (the real one, its re-initialised copy, the
        # zero-shot reference, the hidden controls: one model per run, which this process cannot tell apart), and
        # for the perturbation kinds in a run of their own.
        scores = {"main": run(model, tokenizer, targets)} if "main" in kinds else {}
        main_seconds = time.perf_counter() - started
        for kind in ("randomised", "noisy"):
            if kind in variants:
                scores[kind] = run(variants[kind], tokenizer, targets)
        if "other_target" in kinds:
            scores["other_target"] = mean_over_other_targets(
                lambda other: run(model, tokenizer, other), targets, num_labels)
        if reference is not None:
            scores["reference"] = run(reference, reference_tokenizer, targets)
        params = explainer.params() if hasattr(explainer, "params") else {}
        header = {
            "explainer": {"name": str(explainer.name), "version": str(getattr(explainer, "version", "0")),
                          "params": params if isinstance(params, dict) else {},
                          "model_independent": bool(getattr(explainer, "model_independent", False))},
            # Measured in here, by the submission's own interpreter: a diagnostic only. The worker's clock and the
            # run's cgroup are what the record's timing comes from.
            "main_seconds": main_seconds,
        }
        write_result(header, scores, kinds)
        return 0
    except BaseException as err:  # noqa: BLE001 - everything is reported to the worker
        payload = {"error": type(err).__name__, "message": str(err)[:2000], "traceback": traceback.format_exc()[-4000:]}
        try:
            write_result(payload)
        except BaseException:  # noqa: BLE001
            os.write(2, json.dumps(payload).encode())
        return 1


if __name__ == "__main__":
    # The staged packages sit next to this file (started with -I, which puts no script folder on sys.path). Only
    # when run as the sandbox's script: imported by the worker's tests, the folder of this module is
    # ``submissions/``, whose ``requests.py`` would then shadow the ``requests`` library for the whole process.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1]))
