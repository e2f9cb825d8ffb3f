"""Process the submission queue: run PENDING requests (sandboxed) and score them into the results store.

Code submissions run in a bubblewrap sandbox (Debian package `bubblewrap`). At start the worker runs a trivial
explainer through the real sandbox; when that fails it refuses to start and says why, unless started with
--unsafe-no-sandbox (local testing only: no OS isolation). The worker drops every
token-like variable from its environment at start: publishing to the Hub is a separate step.

RMA compares a model's mass accuracy with the submission's own on the zero-shot (ZS) model of the same base, so
the submission is also run on that ZS checkpoint (one model per sandbox run, like the others). By default it is
found as the evaluation finds it (the model set, next to a model, the zoo layout's <config>/ZS/seed*); none
found: the record says RMA was not computed. --zero-shot-reference names the checkpoint; --published-reference
(a bundle, a reference dataset folder or its Hub id) names the ZS model the published reference compares with:
the checkpoint found must match its fingerprint, else the worker refuses to start. A published bundle's
attributions are never a submission's reference: they are the built-ins' on the ZS model.

Examples:
  gecobench queue                       # once, on every checkpoint under runs/models (`gecobench demo` writes them)
  gecobench queue --loop --poll 30      # keep polling
  gecobench queue --models runs/models/OLA-binary_all-s0-ola_paper-epochs20 --configs binary_all
  gecobench queue --models zoo/binary_all/CE/seed0 --published-reference reference   # RMA vs the published ZS model
  gecobench queue --models zoo/*/*/seed0 --list-models   # each model's id (a precomputed file's `model`)

A model's id is <config>/<regime>/seed<k> from its gecobench_model.json (binary_all/CE/seed0), else its folder
name; two models of the set with one id are refused.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from gecobench.cli import GECO_DIR_HELP
from gecobench.domain import MODEL_INFO_FILE
from submissions.hub_requests import open_requests_store
from submissions.sandbox import (
    SandboxLimits,
    drop_secrets_from_environment,
    sandbox_status,
)
from submissions.worker import (
    ModelSetError,
    WorkerConfig,
    ZeroShotReferenceError,
    check_zero_shot_references,
    model_ids,
    process_queue,
)

DEFAULT_MODEL_ROOT = Path("runs/models")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench queue", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", default=None, help="requests store: a folder or hf://datasets/OWNER/NAME (default: $GECOBENCH_REQUESTS_REPO, $GECOBENCH_REQUESTS or requests/)")
    parser.add_argument("--results", default=None, help="results store: folder or hf://datasets/REPO (default: results/)")
    parser.add_argument("--models", nargs="*", default=None,
                        help=f"zoo checkpoint folders of the model set (default: every checkpoint under {DEFAULT_MODEL_ROOT})")
    parser.add_argument("--configs", nargs="+", default=["binary_all"], help="GECO configs (default: binary_all)")
    parser.add_argument("--data-dir", default=None, help=GECO_DIR_HELP)
    parser.add_argument("--max-groups", type=int, default=None, help="score only the first N test sentence groups")
    parser.add_argument("--filter-subset", default=None, metavar="PATH",
                        help="the paper's filter: the shared subsets to score submissions on (a filters/<config>.json "
                             "file, a folder of them or a reference folder; default: the committed reference's when "
                             "the model set is the reference's, else computed from the model set)")
    parser.add_argument("--no-properties", action="store_true", help="skip every property and ranking metric (MRC, SNC, LD, DMA, SP, CVR, rank accuracy, AUPRC): "
                        "records then hold MA, RMA and the gender gap only")
    parser.add_argument("--memory-gb", type=float, default=6.0, help="sandbox memory limit (GiB)")
    parser.add_argument("--cpu-seconds", type=int, default=900, help="sandbox CPU-time limit per run")
    parser.add_argument("--wall-seconds", type=float, default=900.0, help="sandbox wall-clock limit per run")
    parser.add_argument("--max-processes", type=int, default=64, help="sandbox limit on processes per run")
    parser.add_argument("--disk-mb", type=int, default=512, help="size of the sandbox's writable work folder (MiB)")
    parser.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="run code submissions WITHOUT the OS sandbox: for local testing of your own code only")
    parser.add_argument("--controls", default=None, metavar="DIR",
                        help="private folder of the hidden control models (`gecobench controls train`; default: "
                             "$GECOBENCH_CONTROL_DIR; none: no control scores)")
    parser.add_argument("--zero-shot-reference", default=None, metavar="DIR",
                        help="the zero-shot (ZS) checkpoint the submission is also run on for the RMA of the models "
                             "of its base (default: found in the model set, next to a model or in the zoo layout)")
    parser.add_argument("--published-reference", default=None, metavar="LOCATION",
                        help="a published zero-shot reference (a bundle, a folder of bundles, a reference dataset "
                             "folder or its Hub id): every model's ZS checkpoint must be the one it names for the "
                             "config and base (same function fingerprint), else the worker refuses to start; its "
                             "attributions are not used (they are the built-ins', not the submission's)")
    parser.add_argument("--list-models", action="store_true",
                        help="print each model's id (the `model` of a precomputed file's rows: "
                             "<config>/<regime>/seed<k> from its gecobench_model.json) and folder, then exit")
    parser.add_argument("--loop", action="store_true", help="keep polling for new requests")
    parser.add_argument("--poll", type=float, default=10.0, help="seconds between polls with --loop")
    return parser


def main(argv: list[str] | None = None) -> int:
    from gecobench.evaluation.runner import EvaluationSettings

    args = build_parser().parse_args(argv)
    # The process that starts sandboxes holds no token (a last line of defence: sandboxes never see it anyway).
    dropped = drop_secrets_from_environment()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    models = args.models
    if models is None:
        models = sorted(str(p) for p in DEFAULT_MODEL_ROOT.glob("*") if (p / MODEL_INFO_FILE).is_file())
    if not models:
        print(f"no model set: pass --models, or run `gecobench demo` first to train models under {DEFAULT_MODEL_ROOT}",
              file=sys.stderr)
        return 2
    try:
        ids = model_ids(models)
    except ModelSetError as err:
        print(f"refusing to start: {err}", file=sys.stderr)
        return 2
    if args.list_models:
        for name, path in sorted(ids.items()):
            print(f"{name}\t{path}")
        return 0
    settings = EvaluationSettings(data_dir=args.data_dir, max_groups=args.max_groups, properties=not args.no_properties)
    limits = SandboxLimits(memory_bytes=int(args.memory_gb * 2**30), cpu_seconds=args.cpu_seconds,
                           wall_seconds=args.wall_seconds, max_processes=args.max_processes,
                           max_disk_bytes=args.disk_mb << 20)
    config = WorkerConfig(model_paths=models, configs=args.configs, results_location=args.results,
                          data_dir=args.data_dir, settings=settings, limits=limits,
                          unsafe_no_sandbox=args.unsafe_no_sandbox, filter_subsets=args.filter_subset,
                          zero_shot=args.zero_shot_reference, published_reference=args.published_reference,
                          **({"control_dir": args.controls} if args.controls else {}))
    if dropped:
        print(f"dropped {len(dropped)} secret-looking environment variable(s) ({', '.join(dropped)}): the worker "
              "holds no token; publish results to the Hub as a separate step")
    available, how = sandbox_status()
    if available:
        print(f"sandbox: {how}")
    elif args.unsafe_no_sandbox:
        print(f"WARNING: --unsafe-no-sandbox: code submissions run WITHOUT OS isolation ({how})", file=sys.stderr)
    else:
        # The start-up check ran a trivial explainer through the real sandbox and it failed: a worker that
        # started anyway would fail (or leave PENDING) every code submission.
        print(f"refusing to start: the sandbox cannot run code submissions here: {how}\n"
              "(--unsafe-no-sandbox runs them without OS isolation, for local testing only)", file=sys.stderr)
        return 2
    try:
        # Before any request is claimed: a reference that cannot be had would fail every request alike.
        references = check_zero_shot_references(config)
    except (ZeroShotReferenceError, ModelSetError) as err:
        print(f"refusing to start: {err}", file=sys.stderr)
        return 2
    for line in references:
        print(line)
    outcomes = process_queue(open_requests_store(args.requests), config, loop=args.loop, poll_seconds=args.poll)
    for request_id, status in outcomes.items():
        print(f"{request_id}  {status}")
    if not outcomes:
        print("no PENDING requests")
    return 0

