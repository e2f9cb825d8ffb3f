#!/usr/bin/env python
"""Submit an explainer to the GECOBench Hub queue (code track or precomputed attributions).

Examples:
  python scripts/submit.py code submissions/examples/gradient_norm_explainer.py --name gradient_norm \\
      --version 1.0.0 --authors "Ada" --description "gradient norm" --license MIT --contact ada@example.org
  python scripts/submit.py precomputed my_attributions.jsonl --name my_method --version 1.0.0 ...
  python scripts/submit.py status            # the queue
"""

from __future__ import annotations

import argparse
import json
import sys

from submissions import SubmissionError, submit_file
from submissions.hub_requests import open_requests_store


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    requests_help = ("requests store: a folder or hf://datasets/OWNER/NAME (default: $GECOBENCH_REQUESTS_REPO, "
                     "$GECOBENCH_REQUESTS or requests/)")
    parser.add_argument("--requests", default=None, help=requests_help)
    # accepted after the sub-command too (``submit.py status --requests X``); SUPPRESS keeps the value given before
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
    status = sub.add_parser("status", help="list the requests and their statuses", parents=[after])
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = open_requests_store(args.requests)
    if args.command == "status":
        rows = [view.summary() for view in store.list()]
        if args.json:
            print(json.dumps(rows, indent=2))
        elif not rows:
            print(f"no requests in {store.root}")
        for row in rows if not args.json else []:
            line = f"{row['request_id'][:8]}  {row['status']:<8}  {row['name']} {row['version']} ({row['track']})"
            print(line + (f"  — {row['reason']}" if row["reason"] else ""))
        return 0
    metadata = {key: getattr(args, key) for key in ("name", "version", "authors", "description", "license", "contact")}
    if args.model_set:
        metadata["model_set"] = args.model_set
    try:
        view = submit_file(store, args.command, metadata, args.file, submitter=args.submitter)
    except SubmissionError as err:
        print(f"submission refused: {err}", file=sys.stderr)
        return 2
    print(f"submitted {view.request['metadata']['name']} {view.request['metadata']['version']}: request "
          f"{view.request_id} is {view.status}; run `python scripts/process_queue.py` to process the queue")
    return 0


if __name__ == "__main__":
    sys.exit(main())
