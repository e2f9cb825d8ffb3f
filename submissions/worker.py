"""The queue worker: PENDING requests → RUNNING → FINISHED (records written) | FAILED (reason + log excerpt).

Both tracks end in the evaluation runner, the same path as built-in explainers:

* **code** — the submitted file runs in the sandbox (:mod:`submissions.sandbox`) once per (model, config),
  on the test sentences' words and target classes only; its scores (the model's, a re-initialised copy's for
  the model-randomisation check, and the other property inputs) come back, are validated, and are scored by
  :func:`gecobench.evaluation.runner.run_evaluation` through a
  :class:`~gecobench.evaluation.precomputed.PrecomputedExplainer`;
* **precomputed** — the file must cover every (model, config, test sentence) of the model set; it is scored
  the same way and labelled ``self-reported`` (the GECO ground truth is public).

A request that fails for any reason ends FAILED with a human-readable reason; the worker goes on with the
next one, and no other request or result changes.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from submissions.requests import RequestStore, RequestView, TransitionError
from submissions.sandbox import SandboxLimits, run_submission
from submissions.validation import iter_precomputed_rows

log = logging.getLogger("gecobench.submissions")


@dataclass
class WorkerConfig:
    """What the worker evaluates submissions on, and where it writes."""

    model_paths: list[str]
    configs: list[str] = field(default_factory=lambda: ["binary_all"])
    results_location: str | None = None
    data_dir: str | None = None
    settings: Any = None  # gecobench.evaluation.runner.EvaluationSettings
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    checkpoint_dir: str = "runs/submission_checkpoints"
    extra_protected_paths: list[str] = field(default_factory=list)

    def model_set_name(self) -> str:
        return ",".join(sorted(model_id(p) for p in self.model_paths))


def model_id(path: str | os.PathLike[str]) -> str:
    """The name a model has in a model set (and in precomputed files): its checkpoint folder's name."""
    return Path(path).resolve().name


def protected_paths(config: WorkerConfig, requests: RequestStore) -> list[str]:
    """Everything a submission must not read: GECO data (ground truth), results, requests, dataset caches."""
    from geco_dataset import default_geco_dir, default_spanish_dir
    from gecobench.store import open_results_store

    paths = [str(requests.root.resolve())]
    for folder in (default_geco_dir(), default_spanish_dir()):
        if folder:
            paths.append(str(Path(folder).resolve()))
    if config.data_dir:
        paths.append(str(Path(config.data_dir).resolve()))
    for env in ("GECOBENCH_GECO_DIR", "GECOBENCH_SHARED_DATA"):
        if os.environ.get(env):
            paths.append(str(Path(os.environ[env]).resolve()))
    import datasets  # the prepared GECO arrow files (with ground truth) live in its cache

    paths.append(str(Path(datasets.config.HF_DATASETS_CACHE).resolve()))
    store = open_results_store(config.results_location)
    if hasattr(store, "root"):
        paths.append(str(Path(store.root).resolve()))
    paths.extend(config.extra_protected_paths)
    return sorted(set(paths))


def _settings(config: WorkerConfig):
    from gecobench.evaluation.runner import EvaluationSettings

    return config.settings or EvaluationSettings(data_dir=config.data_dir)


def _rows_to_explain(config: WorkerConfig, geco_config: str):
    from gecobench.evaluation.data import load_split, scorable

    settings = _settings(config)
    split = load_split(geco_config, settings.split, config.data_dir)
    groups = split.groups[: settings.max_groups] if settings.max_groups else split.groups
    rows = [split.rows[i] for group in groups for i in group if scorable(split.rows[i])]
    train = load_split(geco_config, "train", config.data_dir)
    train_rows = [r for r in train.rows if scorable(r)]
    return rows, train_rows


def _score(config: WorkerConfig, explainer, model_path: str, geco_config: str) -> list[str]:
    from gecobench.evaluation.runner import ExplainerSpec, run_evaluation

    summary = run_evaluation(
        [ExplainerSpec(explainer.name, explainer.params())], [model_path], [geco_config], settings=_settings(config),
        store_location=config.results_location, checkpoint_dir=config.checkpoint_dir, progress=False,
        instances=[explainer],
    )
    return summary.written + summary.existing


def _run_code(view: RequestView, requests: RequestStore, config: WorkerConfig) -> tuple[list[str], dict[str, Any]]:
    from gecobench.evaluation.modelling import LoadedModel
    from gecobench.evaluation.precomputed import PrecomputedExplainer
    from gecobench.evaluation.runner import find_zero_shot_reference
    from gecobench.models import read_model_info

    settings = _settings(config)
    meta = view.request["metadata"]
    payload = requests.payload_path(view.request_id)
    forbidden = protected_paths(config, requests)
    record_ids: list[str] = []
    isolation: dict[str, Any] = {}
    for geco_config in config.configs:
        rows, train_rows = _rows_to_explain(config, geco_config)
        for model_path in config.model_paths:
            kinds = ["main", "randomised"]
            if settings.properties:
                kinds += ["noisy", "other_target"]
            # Only the checkpoint's facts are needed to find its zero-shot reference, not its weights.
            facts = LoadedModel(model=None, tokenizer=None, info=read_model_info(model_path), path=str(model_path))
            reference_path, _ = find_zero_shot_reference(facts, config.model_paths)
            if reference_path:
                kinds.append("reference")
            result = run_submission(
                payload, model_path, [list(r.words) for r in rows], [r.label for r in rows], forbidden,
                limits=config.limits, seed=settings.seed, kinds=tuple(kinds),
                randomisation_seed=settings.randomisation_seed, noise_std=settings.noise_std,
                reference_model_path=reference_path,
                train_words=[list(r.words) for r in train_rows], train_labels=[r.label for r in train_rows],
            )
            isolation = result.isolation
            if not result.ok:
                raise SubmissionRunError(result.reason, result.log_excerpt, isolation)
            scores = {
                kind: {(r.sentence_id, r.label): s for r, s in zip(rows, values)}
                for kind, values in result.outputs["scores"].items()
            }
            reported = result.outputs.get("explainer", {})
            explainer = PrecomputedExplainer(
                meta["name"], meta["version"], scores, source="submission", submission_id=view.request_id,
                model_independent=bool(reported.get("model_independent", False)), params=reported.get("params") or {},
                seconds_per_row=result.outputs.get("main_seconds", 0.0) / max(len(rows), 1),
            )
            record_ids += _score(config, explainer, model_path, geco_config)
    return record_ids, isolation


def _run_precomputed(view: RequestView, requests: RequestStore, config: WorkerConfig) -> list[str]:
    from gecobench.evaluation.precomputed import PrecomputedExplainer

    meta = view.request["metadata"]
    payload_path = requests.payload_path(view.request_id)
    table: dict[tuple[str, str], dict[tuple[int, int], list[float]]] = defaultdict(dict)
    for row in iter_precomputed_rows(payload_path.read_bytes(), payload_path.name):
        table[(row["model"], row["config"])][(row["sentence_id"], row["label"])] = row["attributions"]
    record_ids: list[str] = []
    for geco_config in config.configs:
        rows, _ = _rows_to_explain(config, geco_config)
        for model_path in config.model_paths:
            name = model_id(model_path)
            scores = table.get((name, geco_config), {})
            missing = [r for r in rows if (r.sentence_id, r.label) not in scores]
            if missing:
                example = missing[0]
                raise SubmissionRunError(
                    f"the file does not cover model {name!r} on {geco_config}: {len(missing)} of {len(rows)} test "
                    f"sentences missing (e.g. sentence_id {example.sentence_id}, label {example.label}); the model set "
                    f"is {config.model_set_name()}", "", {},
                )
            explainer = PrecomputedExplainer(
                meta["name"], meta["version"], {"main": scores}, source="self-reported", submission_id=view.request_id,
                missing_reason="self-reported attributions: no code to re-run on perturbed models",
            )
            record_ids += _score(config, explainer, model_path, geco_config)
    return record_ids


class SubmissionRunError(RuntimeError):
    """A request that cannot finish; carries the reason, a log excerpt and the isolation report."""

    def __init__(self, reason: str, log_excerpt: str, isolation: dict[str, Any]) -> None:
        super().__init__(reason)
        self.reason, self.log_excerpt, self.isolation = reason, log_excerpt, isolation


def process_request(view: RequestView, requests: RequestStore, config: WorkerConfig) -> str:
    """Claim and run one PENDING request; return its final status (or ``"SKIPPED"`` if another worker has it)."""
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        requests.transition(view.request_id, "RUNNING", worker=worker)
    except TransitionError:
        return "SKIPPED"
    try:
        if view.request["track"] == "code":
            record_ids, isolation = _run_code(view, requests, config)
        else:
            record_ids, isolation = _run_precomputed(view, requests, config), None
    except SubmissionRunError as err:
        requests.transition(view.request_id, "FAILED", reason=err.reason, log_excerpt=err.log_excerpt[-2000:] or None,
                            worker=worker, isolation=err.isolation or None)
        return "FAILED"
    except Exception as err:  # noqa: BLE001 - any failure ends the request, never the worker
        requests.transition(view.request_id, "FAILED", reason=f"evaluation failed: {type(err).__name__}: {err}"[:1000],
                            log_excerpt=traceback.format_exc()[-2000:], worker=worker)
        return "FAILED"
    requests.transition(view.request_id, "FINISHED", result_record_ids=sorted(set(record_ids)), worker=worker,
                        isolation=isolation)
    return "FINISHED"


def process_queue(
    requests: RequestStore, config: WorkerConfig, loop: bool = False, poll_seconds: float = 10.0,
    max_requests: int | None = None,
) -> dict[str, str]:
    """Process PENDING requests oldest first; with ``loop`` keep polling. Returns request id → final status."""
    outcomes: dict[str, str] = {}
    while True:
        pending = requests.list("PENDING")
        for view in pending:
            if max_requests is not None and len(outcomes) >= max_requests:
                return outcomes
            status = process_request(view, requests, config)
            outcomes[view.request_id] = status
            log.info("request %s (%s %s): %s", view.request_id, view.request["metadata"]["name"],
                     view.request["metadata"]["version"], status)
        if not loop:
            return outcomes
        time.sleep(poll_seconds)
