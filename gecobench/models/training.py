"""Training one zoo model with Accelerate: data, loop, early stopping, evaluation, checkpoint and card.

Works as a plain process and under ``accelerate launch --multi_gpu --num_processes 2`` (or ``torchrun
--nproc_per_node 2``): without CUDA the Accelerator is created with ``cpu=True`` and runs CPU DDP over gloo.
(``accelerate launch --cpu --num_processes 2`` starts a single process unless an MPI hostfile is given.)
Batches are split across processes (``split_batches=True``): the loader yields the same global batches in
the same order whatever the number of processes, and DDP averages the gradients, so 1 and 2 processes
follow the same trajectory up to dropout noise and float summation order.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

import torch

from gecobench.domain import MODEL_INFO_FILE

#: Default learning rate per regime: a head-only model takes large steps, fine-tuning small ones. OLA's is the
#: authors' (``one_layer_attention.learning_rate`` in their config); the others are this package's CPU budget
#: (the authors': C 1e-2, CE 1e-4, CEf 1e-2, CEfAf 5e-6 over 20 epochs; see docs/models.md).
DEFAULT_LR: dict[str, float] = {"C": 2e-3, "CE": 1e-3, "CEf": 2e-4, "CEfAf": 5e-5, "OLA": 1e-2}
OPTIMIZERS: tuple[str, ...] = ("adamw", "adam")
LR_AFTER_WARMUP: tuple[str, ...] = ("linear", "constant")
#: The authors' trainer clips the gradient norm to this value (after the step; see ``authors_trainer_quirks``).
AUTHORS_MAX_GRAD_NORM = 1.0
INFO_FILE = MODEL_INFO_FILE
log = logging.getLogger("gecobench.models.training")


@dataclass
class TrainSchedule:
    """How long and how a model is trained. ``lr=None`` picks :data:`DEFAULT_LR` for the regime.

    ``head_lr`` gives the new classification head (pooler + classifier, see
    :func:`~gecobench.models.regimes.head_parameter_names`) its own learning rate in the regimes that put a head
    on a pretrained encoder (C, CE, CEf, CEfAf); ``None`` trains the head at ``lr`` like everything else.
    """

    epochs: int = 6
    batch_size: int = 32
    lr: float | None = None
    head_lr: float | None = None
    weight_decay: float = 0.01
    warmup_fraction: float = 0.06
    max_length: int = 128
    patience: int = 2
    val_fraction: float = 0.1
    evals_per_epoch: int = 1
    max_train_sentences: int | None = None
    max_eval_sentences: int | None = None
    dropout: bool = True
    optimizer: str = "adamw"
    adam_eps: float = 1e-8
    lr_after_warmup: str = "linear"
    authors_trainer_quirks: bool = False
    ola_attention_masking: str = "keys"

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "max_length", "patience", "evals_per_epoch"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"schedule field {name} must be >= 1, got {getattr(self, name)}")
        for name in ("lr", "head_lr"):
            value = getattr(self, name)
            if value is not None and not float(value) > 0:
                raise ValueError(f"schedule field {name} must be > 0, got {value}")
        if not float(self.adam_eps) > 0:
            raise ValueError(f"schedule field adam_eps must be > 0, got {self.adam_eps}")
        if not 0.0 <= float(self.warmup_fraction) < 1.0:
            raise ValueError(f"schedule field warmup_fraction must be in [0, 1), got {self.warmup_fraction}")
        from gecobench.models.ola import ATTENTION_MASKINGS

        for name, allowed in (("optimizer", OPTIMIZERS), ("lr_after_warmup", LR_AFTER_WARMUP),
                              ("ola_attention_masking", ATTENTION_MASKINGS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"schedule field {name} must be one of {allowed}, got {getattr(self, name)!r}")


#: Named schedules. ``demo`` (400 training sentences, 2 epochs) is what ``make demo`` uses; ``short`` is the same on
#: all training sentences; ``paper`` is closer to the paper's budget; ``tiny`` is for tests. ``ola_paper`` is the
#: authors' OLA training (``training/simple_model.py`` and the ``one_layer_attention`` entry of
#: ``configs/gender_no_sub_samp_project_config.json``): Adam, lr 0.01, weight decay 0.1, eps 1e-5, batch 64,
#: 200 epochs, no early stopping, the weights of the best validation loss kept; plus a 10 % linear warm-up
#: (issue #32's protocol; the authors' stored code holds the rate constant), constant afterwards.
SCHEDULES: dict[str, TrainSchedule] = {
    "default": TrainSchedule(),
    "demo": TrainSchedule(epochs=2, batch_size=32, max_length=64, patience=1, evals_per_epoch=2, max_train_sentences=400),
    "short": TrainSchedule(epochs=2, batch_size=32, max_length=64, patience=1, evals_per_epoch=2),
    "paper": TrainSchedule(epochs=15, batch_size=32, max_length=128, patience=3),
    "tiny": TrainSchedule(epochs=2, batch_size=8, max_length=32, patience=1, max_train_sentences=24, max_eval_sentences=12),
    "ola_paper": TrainSchedule(
        epochs=200, batch_size=64, lr=1e-2, weight_decay=0.1, optimizer="adam", adam_eps=1e-5, warmup_fraction=0.1,
        lr_after_warmup="constant", max_length=128, patience=200, dropout=False,
    ),
}
#: The preset a regime trains with when none is named: OLA the authors' schedule, every other regime ``default``.
REGIME_DEFAULT_SCHEDULES: dict[str, str] = {"OLA": "ola_paper"}


def default_schedule_for(regime: str) -> str:
    """The schedule preset ``regime`` trains with when none is given (:data:`REGIME_DEFAULT_SCHEDULES`)."""
    return REGIME_DEFAULT_SCHEDULES.get(regime, "default")


def make_schedule(preset: str | None = "default", **overrides: Any) -> TrainSchedule:
    """A schedule from a preset name plus field overrides (``None`` values are ignored)."""
    if preset not in SCHEDULES:
        raise ValueError(f"unknown schedule preset {preset!r}; choose one of {sorted(SCHEDULES)}")
    known = {f.name for f in fields(TrainSchedule)}
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"unknown schedule field(s) {sorted(unknown)}; known: {sorted(known)}")
    return replace(SCHEDULES[preset], **{k: v for k, v in overrides.items() if v is not None})


@dataclass
class EvalResult:
    loss: float
    accuracy: float
    n: int


@dataclass
class TrainReport:
    """What happened during training (goes into ``gecobench_model.json`` under ``training``)."""

    best_val_loss: float | None = None
    best_step: int | None = None
    steps: int = 0
    epochs_run: float = 0.0
    stopped_early: bool = False
    history: list[dict[str, float]] = field(default_factory=list)
    #: one entry per training run of this checkpoint (attempt, init_seed, val_accuracy, val_loss of the weights it
    #: kept): more than one when a run stayed at chance or missed its target and was restarted (:func:`restart_reason`)
    attempts: list[dict[str, Any]] = field(default_factory=list)


#: a run whose kept weights reach at most 1/K + this on the validation split (K classes) has not left chance
CHANCE_MARGIN = 0.05
#: the initialisation seed of restart ``a`` of seed ``s`` is ``s + a * RESTART_SEED_STRIDE``: far from the
#: reference's seeds (0-4), so a restart never repeats another seed's initialisation
RESTART_SEED_STRIDE = 1000


def restart_reason(val_accuracy: float, num_labels: int, restart_below: float | None = None) -> str | None:
    """Why a run whose kept weights reach ``val_accuracy`` on the validation split is trained again, or None: it
    stayed at chance (:func:`stayed_at_chance`), or it missed ``restart_below``."""
    if stayed_at_chance(val_accuracy, num_labels):
        return f"validation accuracy {val_accuracy:.3f} stayed at chance (1/{num_labels})"
    if restart_below is not None and val_accuracy < restart_below:
        return f"validation accuracy {val_accuracy:.3f} missed the target {restart_below:.2f}"
    return None


def stayed_at_chance(val_accuracy: float, num_labels: int) -> bool:
    """Whether a model's validation accuracy says it never left chance: at most ``1/num_labels`` +
    :data:`CHANCE_MARGIN` (GECO's splits are balanced: every source sentence in every gender variant, so a
    model that predicts one class scores exactly 1/K)."""
    return float(val_accuracy) <= 1.0 / int(num_labels) + CHANCE_MARGIN


def restart_init_seed(seed: int, attempt: int) -> int:
    """The initialisation (and shuffling) seed of training attempt ``attempt`` of seed ``seed``: the seed itself
    first, then ``seed + attempt * RESTART_SEED_STRIDE``."""
    if attempt < 0:
        raise ValueError(f"attempt must be >= 0, got {attempt}")
    return int(seed) + int(attempt) * RESTART_SEED_STRIDE


def _disable_dropout(model: torch.nn.Module) -> None:
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0


def _build_model(regime: str, base_model: str, tokenizer: Any, num_labels: int, schedule: TrainSchedule) -> torch.nn.Module:
    from gecobench.models.ola import build_ola
    from gecobench.models.regimes import apply_regime, load_base_classifier
    from gecobench.models.zero_shot import build_zero_shot

    if regime == "OLA":
        return build_ola(len(tokenizer), num_labels, pad_token_id=tokenizer.pad_token_id or 0,
                         attention_masking=schedule.ola_attention_masking)
    if regime == "ZS":
        return build_zero_shot(base_model, tokenizer, num_labels)
    return apply_regime(load_base_classifier(base_model, num_labels), regime)


def _head_lr(regime: str, lr: float, head_lr: float | None) -> float | None:
    """The head's learning rate: ``head_lr`` where the regime has a new head on a pretrained encoder, else ``lr``."""
    from gecobench.models.regimes import BASE_REGIMES

    if regime == "ZS":
        return None
    return head_lr if head_lr is not None and regime in BASE_REGIMES else lr


def _parameter_groups(model: torch.nn.Module, regime: str, lr: float, head_lr: float | None) -> list[dict[str, Any]]:
    """AdamW parameter groups: the trainable parameters at ``lr``, the new head's at its own rate (see ``_head_lr``)."""
    from gecobench.models.regimes import head_parameter_names

    rate = _head_lr(regime, lr, head_lr)
    head = set(head_parameter_names(model)) if rate != lr else set()
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    groups = [
        {"params": [p for n, p in trainable if n not in head], "lr": lr},
        {"params": [p for n, p in trainable if n in head], "lr": rate},
    ]
    return [g for g in groups if g["params"]]


def _make_optimizer(groups: list[dict[str, Any]], schedule: TrainSchedule, lr: float) -> torch.optim.Optimizer:
    """Adam or AdamW over ``groups``; the fused kernel where torch has one (the same update, several times faster
    on CPU: OLA's dense 30522 x 64 embedding made the unfused per-tensor loop most of a step)."""
    optimizer_class = torch.optim.Adam if schedule.optimizer == "adam" else torch.optim.AdamW
    kwargs = {"lr": lr, "weight_decay": schedule.weight_decay, "eps": schedule.adam_eps}
    try:
        return optimizer_class(groups, fused=True, **kwargs)
    except (RuntimeError, TypeError, ValueError):  # a device or dtype without a fused kernel
        return optimizer_class(groups, **kwargs)


def optimisation_step(model: torch.nn.Module, batch: dict[str, Any], optimizer: Any, lr_schedule: Any, accelerator: Any,
                      authors_trainer_quirks: bool = False) -> torch.Tensor:
    """One training step on ``batch``; returns the loss.

    Default: backward, step, schedule step, zero the gradients. With ``authors_trainer_quirks``, the authors'
    ``Trainer.train_epoch`` order: backward (adding to the gradients left from every earlier step), step, schedule
    step, then ``clip_grad_norm_(1.0)`` on that running sum, which is never zeroed.
    """
    loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()
    lr_schedule.step()
    if authors_trainer_quirks:
        accelerator.clip_grad_norm_(model.parameters(), AUTHORS_MAX_GRAD_NORM)
    else:
        optimizer.zero_grad()
    return loss


@torch.no_grad()
def evaluate_loader(model: torch.nn.Module, loader: Any, accelerator: Any) -> EvalResult:
    """Mean cross-entropy and accuracy over a (prepared) loader, gathered over all processes."""
    model.eval()
    losses, correct, total = [], 0, 0
    for batch in loader:
        labels = batch.pop("labels")
        logits = model(**batch).logits
        loss = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
        loss, preds, labels = accelerator.gather_for_metrics((loss, logits.argmax(-1), labels))
        losses.append(loss.float().cpu())
        correct += int((preds == labels).sum())
        total += int(labels.numel())
    if total == 0:
        raise ValueError("evaluation set is empty")
    return EvalResult(float(torch.cat(losses).mean()), correct / total, total)


class _Fitted(NamedTuple):
    """One training attempt: the (prepared) model with the weights of the best validation loss, its report, the
    prepared validation and test loaders, and the parameter counts."""

    model: Any
    report: TrainReport
    val_loader: Any
    test_loader: Any
    trainable: int
    total: int


def _fit(regime: str, base_model: str, tokenizer: Any, num_labels: int, schedule: TrainSchedule, lr: float,
         train_rows: Sequence[Any], val_rows: Sequence[Any], test_rows: Sequence[Any], accelerator: Any,
         init_seed: int, desc: str, show_progress: bool) -> _Fitted:
    """Build one model and train it (``ZS``: only build it). ``init_seed`` seeds the shuffling (the caller seeds
    the initialisation)."""
    from tqdm.auto import tqdm
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    from gecobench.models.data import WordsCollator
    from gecobench.models.regimes import trainable_parameter_count

    model = _build_model(regime, base_model, tokenizer, num_labels, schedule)
    if not schedule.dropout:
        _disable_dropout(model)
    trainable, total = trainable_parameter_count(model)
    collate = WordsCollator(tokenizer, schedule.max_length)
    loader_kw = {"batch_size": schedule.batch_size, "collate_fn": collate}
    val_loader = torch.utils.data.DataLoader(val_rows, shuffle=False, **loader_kw)
    test_loader = torch.utils.data.DataLoader(test_rows, shuffle=False, **loader_kw)
    report = TrainReport()

    if regime == "ZS":
        # nothing trains, so no DDP wrapper (DDP refuses a module without trainable parameters)
        model = model.to(accelerator.device)
        val_loader, test_loader = accelerator.prepare(val_loader, test_loader)
    else:
        generator = torch.Generator().manual_seed(init_seed)
        train_loader = torch.utils.data.DataLoader(train_rows, shuffle=True, generator=generator, **loader_kw)
        groups = _parameter_groups(model, regime, lr, schedule.head_lr)
        optimizer = _make_optimizer(groups, schedule, lr)
        total_steps = schedule.epochs * len(train_loader)
        warmup_steps = int(schedule.warmup_fraction * total_steps)
        if schedule.lr_after_warmup == "constant":
            lr_schedule = get_constant_schedule_with_warmup(optimizer, warmup_steps)
        else:
            lr_schedule = get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
        model, optimizer, train_loader, val_loader, test_loader, lr_schedule = accelerator.prepare(
            model, optimizer, train_loader, val_loader, test_loader, lr_schedule
        )
        steps_per_epoch = len(train_loader)
        eval_at = {round(steps_per_epoch * (i + 1) / schedule.evals_per_epoch) for i in range(schedule.evals_per_epoch)}
        best_state, bad_evals = None, 0
        quirks = schedule.authors_trainer_quirks
        validated = False  # the authors' quirk: once validated, the model is never put back in train mode
        progress = tqdm(total=total_steps, desc=desc, disable=not show_progress)
        for epoch in range(schedule.epochs):
            model.train(not (quirks and validated))
            for step_in_epoch, batch in enumerate(train_loader, start=1):
                loss = optimisation_step(model, batch, optimizer, lr_schedule, accelerator, quirks)
                report.steps += 1
                progress.update(1)
                progress.set_postfix(loss=f"{loss.item():.4f}", epoch=epoch + 1)
                if step_in_epoch in eval_at:
                    val = evaluate_loader(model, val_loader, accelerator)
                    validated = True
                    model.train(not quirks)
                    report.history.append({"step": report.steps, "epoch": round(epoch + step_in_epoch / steps_per_epoch, 3),
                                           "val_loss": val.loss, "val_accuracy": val.accuracy, "train_loss": float(loss.item())})
                    progress.set_postfix(loss=f"{loss.item():.4f}", val_loss=f"{val.loss:.4f}", val_acc=f"{val.accuracy:.3f}")
                    if report.best_val_loss is None or val.loss < report.best_val_loss:
                        report.best_val_loss, report.best_step, bad_evals = val.loss, report.steps, 0
                        best_state = copy.deepcopy({k: v.detach().cpu() for k, v in accelerator.unwrap_model(model).state_dict().items()})
                    else:
                        bad_evals += 1
            report.epochs_run = epoch + 1
            if bad_evals >= schedule.patience * schedule.evals_per_epoch:
                report.stopped_early = True
                break
        progress.close()
        if best_state is not None:
            accelerator.unwrap_model(model).load_state_dict(best_state)

    return _Fitted(model, report, val_loader, test_loader, trainable, total)


def train_regime(
    regime: str,
    config: str,
    seed: int,
    output_dir: str | Path,
    base_model: str | None = None,
    data_dir: str | Path | None = None,
    schedule: str | TrainSchedule | None = None,
    push_to_hub: str | None = None,
    hub_token: str | None = None,
    show_progress: bool = True,
    rows: Mapping[str, Sequence[Any]] | None = None,
    max_restarts: int = 0,
    restart_below: float | None = None,
    **schedule_overrides: Any,
) -> Path:
    """Train (or, for ``ZS``, just build and evaluate) one zoo model and save it to ``output_dir``.

    Args:
        regime: one of :data:`gecobench.models.REGIMES`.
        config: a GECO config (``binary_all``, ``binary_subject``, ``nonbinary_all``, ``nonbinary_subject``).
        seed: seeds the validation split, initialisation, shuffling and dropout.
        output_dir: the checkpoint folder (created; must not hold another checkpoint of a different run).
        base_model: Hub id or local folder; default :func:`gecobench.models.default_base_model`. ``OLA`` uses
            only its tokenizer.
        data_dir: GECO data folder (default: ``../shared/data/geco`` or ``GECOBENCH_GECO_DIR``).
        schedule: a preset name from :data:`SCHEDULES` or a :class:`TrainSchedule`; ``None``: the regime's own
            (:func:`default_schedule_for`: ``ola_paper`` for OLA, ``default`` otherwise). ``schedule_overrides``
            replace single fields (``epochs=1``, ``lr=1e-4``...).
        push_to_hub: a Hub repo id to upload the folder to afterwards (needs a token or a login).
        rows: ``{"train": [...], "test": [...]}`` rows (as :func:`gecobench.models.data.load_rows` returns) to
            train and test on instead of the config's GECO files: the hub's hidden control models train on GECO
            sentences relabelled by a secret rule (:mod:`gecobench.controls`). The model info then says
            ``"training_rows": "given"``.
        max_restarts: how often a run whose kept weights stay at chance on the validation split
            (:func:`stayed_at_chance`) is trained again from a derived initialisation seed
            (:func:`restart_init_seed`; the data split stays the seed's). 0 (default): never, a warning says so; the
            reference zoo restarts up to :data:`gecobench.reference.ZOO_MAX_RESTARTS` times. The model info records
            every attempt (``training.attempts``) and the initialisation seed of the weights kept (``init_seed``): the
            first attempt's that needs no restart, else the best attempt's (validation accuracy).
        restart_below: with ``max_restarts``, a run whose kept weights score under this validation accuracy is
            restarted too (the reference zoo: 70 %, far under the paper's 80 %, except in the cells measured under 80 % on every
            schedule, :data:`gecobench.reference.BELOW_ACCURACY_TARGET`).

    Returns:
        The checkpoint folder: ``save_pretrained`` weights and config, the tokenizer, ``gecobench_model.json``
        and a ``README.md`` model card.
    """
    from accelerate import Accelerator, DataLoaderConfiguration
    from accelerate.utils import set_seed

    import gecobench
    from gecobench.models.base_models import (
        base_model_identity,
        default_base_model,
        load_tokenizer,
    )
    from gecobench.models.card import write_model_card
    from gecobench.models.data import (
        load_rows,
        num_labels_of,
        split_by_sentence,
        subsample_sentences,
    )
    from gecobench.models.regimes import (
        REGIME_DESCRIPTIONS,
        check_regime,
    )
    from gecobench.provenance import base_provenance

    check_regime(regime)
    if int(max_restarts) < 0:
        raise ValueError(f"max_restarts must be >= 0, got {max_restarts}")
    if restart_below is not None and not 0.0 < float(restart_below) <= 1.0:
        raise ValueError(f"restart_below must be in (0, 1], got {restart_below}")
    num_labels = num_labels_of(config)
    if schedule is None:
        schedule = default_schedule_for(regime)
    if isinstance(schedule, str):
        schedule = make_schedule(schedule, **schedule_overrides)
    elif schedule_overrides:
        schedule = replace(schedule, **{k: v for k, v in schedule_overrides.items() if v is not None})
    lr = schedule.lr if schedule.lr is not None else DEFAULT_LR.get(regime, 0.0)
    output_dir = Path(output_dir)
    base_model = base_model or default_base_model()
    started = time.perf_counter()

    # cpu=True without CUDA: accelerate only picks CPU DDP (gloo) over torchrun when told it is on CPU.
    accelerator = Accelerator(
        cpu=not torch.cuda.is_available(), dataloader_config=DataLoaderConfiguration(split_batches=True)
    )
    if schedule.batch_size % accelerator.num_processes:
        raise ValueError(
            f"batch_size {schedule.batch_size} must be divisible by the number of processes ({accelerator.num_processes})"
        )
    main = accelerator.is_main_process
    set_seed(seed)

    tokenizer = load_tokenizer(base_model)
    if rows is not None and set(rows) != {"train", "test"}:
        raise ValueError(f"rows must hold exactly a 'train' and a 'test' list, got {sorted(rows)}")
    train_all = list(rows["train"]) if rows is not None else load_rows(config, "train", data_dir)
    test_all = list(rows["test"]) if rows is not None else load_rows(config, "test", data_dir)
    test_rows = subsample_sentences(test_all, schedule.max_eval_sentences, seed)
    train_rows, val_rows = split_by_sentence(train_all, schedule.val_fraction, seed)
    train_rows = subsample_sentences(train_rows, schedule.max_train_sentences, seed)
    val_rows = subsample_sentences(val_rows, schedule.max_eval_sentences, seed)

    attempts: list[dict[str, Any]] = []
    kept: tuple[int, _Fitted, EvalResult] | None = None  # the attempt, its model, its validation result
    # A run that never leaves chance (seed 2's OLA on nonbinary_subject: loss at ln 3 for all 200 epochs, one
    # class predicted) says nothing about its regime; it is restarted from a derived initialisation seed, with the
    # same data split (the seed's), and every attempt is recorded (``training.attempts``, ``init_seed``). With
    # ``restart_below``, so is a run whose kept weights miss that validation accuracy (a failed run, far under the
    # paper's 80 %). The weights kept are the first attempt's that needs no restart, else the best attempt's.
    for attempt in range(max_restarts + 1):
        init_seed = restart_init_seed(seed, attempt)
        if attempt:
            set_seed(init_seed)  # attempt 0 keeps the RNG stream of a run without restarts, bit for bit
        fitted = _fit(regime, base_model, tokenizer, num_labels, schedule, lr, train_rows, val_rows, test_rows,
                      accelerator, init_seed, desc=f"{regime}/{config}/seed{seed}", show_progress=main and show_progress)
        val = evaluate_loader(fitted.model, fitted.val_loader, accelerator)
        attempts.append({"attempt": attempt, "init_seed": init_seed, "val_accuracy": val.accuracy,
                         "val_loss": val.loss})
        if kept is None or val.accuracy > kept[2].accuracy:
            kept = (attempt, fitted, val)
        why = None if regime == "ZS" else restart_reason(val.accuracy, num_labels, restart_below)
        if why is None:
            break
        if main:
            log.warning("%s/%s/seed%d (init seed %d): %s%s", regime, config, seed, init_seed, why,
                        "; restarting from a derived initialisation seed" if attempt < max_restarts else
                        f"; no restart left (max_restarts={max_restarts}): the best attempt's weights are kept")
    assert kept is not None
    kept_attempt, (model, report, _, test_loader, trainable, total), val = kept  # its validation pass reused
    init_seed = attempts[kept_attempt]["init_seed"]
    report.attempts = attempts

    test = evaluate_loader(model, test_loader, accelerator)
    elapsed = time.perf_counter() - started
    accelerator.wait_for_everyone()

    if main:
        from gecobench.models.zero_shot import ZeroShotClassifier

        unwrapped = accelerator.unwrap_model(model)
        unwrapped.eval()
        base_name, base_revision = base_model_identity(base_model)
        output_dir.mkdir(parents=True, exist_ok=True)
        unwrapped.config.id2label = {i: n for i, n in enumerate(("female", "male", "non-binary")[:num_labels])}
        unwrapped.config.label2id = {n: i for i, n in unwrapped.config.id2label.items()}
        unwrapped.save_pretrained(output_dir)
        tokenizer.save_pretrained(output_dir)
        info = {
            "regime": regime,
            "regime_description": REGIME_DESCRIPTIONS[regime],
            "base_model": base_name,
            "base_model_path": str(base_model),
            "base_revision": base_revision,
            "architecture": type(unwrapped).__name__,
            "geco_config": config,
            "training_rows": "given" if rows is not None else "geco",
            "seed": seed,
            "init_seed": init_seed,
            "num_labels": num_labels,
            "labels": list(unwrapped.config.id2label.values()),
            "val_accuracy": val.accuracy,
            "val_loss": val.loss,
            "test_accuracy": test.accuracy,
            "test_loss": test.loss,
            "n_train": len(train_rows),
            "n_val": val.n,
            "n_test": test.n,
            "zero_shot_method": unwrapped.config.method if isinstance(unwrapped, ZeroShotClassifier) else None,
            "trainable_parameters": trainable,
            "total_parameters": total,
            "learning_rate": lr if regime != "ZS" else None,
            "head_learning_rate": _head_lr(regime, lr, schedule.head_lr),
            "schedule": asdict(schedule),
            "num_processes": accelerator.num_processes,
            "training": asdict(report),
            "training_time_s": round(elapsed, 2),
            "package_version": gecobench.__version__,
            "provenance": base_provenance(seed),
        }
        (output_dir / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        write_model_card(output_dir, info)
        if push_to_hub:
            from gecobench.models.loading import push_checkpoint_to_hub

            push_checkpoint_to_hub(output_dir, push_to_hub, token=hub_token)
    accelerator.wait_for_everyone()
    return output_dir
