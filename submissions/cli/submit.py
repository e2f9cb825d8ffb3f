"""Submit an explainer to the GECOBench Hub queue (code track or precomputed attributions), or show the queue.

Examples:
  gecobench submit example my_explainer.py     # write the example code submission (a gradient-norm explainer)
  gecobench submit code my_explainer.py --name gradient_norm \\
      --version 1.0.0 --authors "Ada" --description "gradient norm" --license MIT --contact ada@example.org
  gecobench submit precomputed my_attributions.jsonl --name my_method --version 1.0.0 ...
  gecobench submit status                      # the queue, with each finished request's Mass Accuracy
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from submissions import SubmissionError, submit_file
from submissions.hub_requests import open_requests_store

#: The example code submission, shipped inside the package (``submissions/examples/``).
EXAMPLE_SUBMISSION = ("examples", "gradient_norm_explainer.py")


def example_submission_text() -> str:
    """The example code submission's source, read from the installed package (a checkout or a wheel)."""
    return resources.files("submissions").joinpath(*EXAMPLE_SUBMISSION).read_text(encoding="utf-8")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench submit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    requests_help = ("requests store: a folder or hf://datasets/OWNER/NAME (default: $GECOBENCH_REQUESTS_REPO, "
                     "$GECOBENCH_REQUESTS or requests/)")
    parser.add_argument("--requests", default=None, help=requests_help)
    # accepted after the sub-command too (``gecobench submit status --requests X``); SUPPRESS keeps the value given
    # before it
    after = argparse.ArgumentParser(add_help=False)
    after.add_argument("--requests", default=argparse.SUPPRESS, help=requests_help)
    sub = parser.add_subparsers(dest="command", required=True)
    for track, help_text in (("code", "a Python file implementing the explainer contract"),
                             ("precomputed", "a JSONL or parquet file of word-level attributions (self-reported)")):
        p = sub.add_parser(track, help=help_text, parents=[after])
        p.add_argument("file", help="the file to submit")
        p.add_argument("--name", required=True, help="explainer name: lower-case letters, digits, underscores")
        p.add_argument("--version", required=True, help="version such as 1.0.0")
        p.add_argument("--authors", required=True)
        p.add_argument("--description", required=True)
        p.add_argument("--license", required=True, help="licence of the submitted code or data, e.g. MIT")
        p.add_argument("--contact", required=True, help="e-mail or URL")
        p.add_argument("--model-set", default=None, help="(precomputed) the published model set the file covers")
        p.add_argument("--submitter", default=None, help="who submits (needed to resubmit a FAILED request)")
    status = sub.add_parser("status", help="list the requests, their statuses and the finished ones' scores",
                            parents=[after])
    status.add_argument("--results", default=None,
                        help="results store the queue wrote the scores into: a folder or hf://datasets/REPO "
                             "(default: $GECOBENCH_RESULTS_REPO, $GECOBENCH_RESULTS or results/, as `gecobench queue`)")
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")
    example = sub.add_parser("example", help="write the example code submission (a template to start from)")
    example.add_argument("out", nargs="?", default=None, help="file to write (default: print it)")
    return parser


def request_scores(record_ids: list[str], records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per record a finished request produced: model, config, filter and Mass Accuracy with its interval
    (``missing`` when the record is not among ``records``, the results store's explainer records by id)."""
    rows = []
    for record_id in record_ids:
        record = records.get(record_id)
        if record is None:
            rows.append({"record_id": record_id, "missing": True})
            continue
        ma = record["metrics"]["mass_accuracy"]
        rows.append({"record_id": record_id, "model": record["model"].get("name"),
                     "config": record["dataset"].get("config"), "filter": record["protocol"].get("filter"),
                     "mass_accuracy": ma.get("value"), "ci_low": ma.get("ci_low"), "ci_high": ma.get("ci_high")})
    return rows


def _status(args: argparse.Namespace, store: Any) -> int:
    from gecobench.formatting import format_interval
    from gecobench.store import open_results_store

    rows = [view.summary() for view in store.list()]
    results, records = None, {}
    if any(row["result_record_ids"] for row in rows):  # read the store only when some request has scores
        results = open_results_store(args.results)
        records = {r["record_id"]: r for r in results.read_all("explainer_score").documents}
    for row in rows:
        row["scores"] = request_scores(row["result_record_ids"], records)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no requests in {store.root}")
    for row in rows:
        line = f"{row['request_id'][:8]}  {row['status']:<8}  {row['name']} {row['version']} ({row['track']})"
        print(line + (f"  — {row['reason']}" if row["reason"] else ""))
        for score in row["scores"]:
            if score.get("missing"):
                print(f"    record {score['record_id']}: not in {results} (pass --results)")
                continue
            interval = format_interval(score["mass_accuracy"], score["ci_low"], score["ci_high"])
            print(f"    MA {interval}  {score['model']}  {score['config']}  filter: {score['filter']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "example":
        text = example_submission_text()
        if args.out is None:
            sys.stdout.write(text)
        else:
            Path(args.out).write_text(text, encoding="utf-8")
            print(f"wrote {args.out}; edit it, then: gecobench submit code {args.out} --name ... (see --help)")
        return 0
    store = open_requests_store(args.requests)
    if args.command == "status":
        return _status(args, store)
    metadata = {key: getattr(args, key) for key in ("name", "version", "authors", "description", "license", "contact")}
    if args.model_set:
        metadata["model_set"] = args.model_set
    try:
        view = submit_file(store, args.command, metadata, args.file, submitter=args.submitter)
    except SubmissionError as err:
        print(f"submission refused: {err}", file=sys.stderr)
        return 2
    print(f"submitted {view.request['metadata']['name']} {view.request['metadata']['version']}: request "
          f"{view.request_id} is {view.status}; run `gecobench queue` to process the queue")
    return 0
