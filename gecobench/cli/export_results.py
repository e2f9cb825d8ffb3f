"""Turn a results store into a Hub dataset folder (parquet per record type + dataset card).

  gecobench export results --results reference/store --output /tmp/gecobench-results
  gecobench export results --results results --output /tmp/out --repo-id ORG/gecobench-results

Invalid stored files are skipped (and listed in the card and on stderr), never exported. Upload the folder with
`huggingface-cli upload ORG/gecobench-results /tmp/gecobench-results --repo-type dataset` or
`gecobench publish`.
"""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecobench export results", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", required=True, help="store: a folder or hf://<dataset repo id>")
    parser.add_argument("--output", required=True, help="folder to write (created; existing files replaced)")
    parser.add_argument("--repo-id", default="ORG/gecobench-results", help="repo id named in the card")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gecobench.results_export import export_store
    from gecobench.store import open_results_store

    store = open_results_store(args.results)
    report = store.read_all()
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    try:
        counts = export_store(report.documents, args.output, args.repo_id, args.results, report.warnings)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(", ".join(f"{n} {t}" for t, n in counts.items()) + f" records → {args.output}")
    return 0

