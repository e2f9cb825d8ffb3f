"""Publish the whole GECOBench hub under a Hub organisation: datasets, metric Spaces, zoo models, the results,
reference and requests datasets and the leaderboard Space — or, with --dry-run, write every repository folder
without network.

Examples:
    gecobench publish --org my-org --dry-run hub-preview --only metrics results reference requests \\
        space --package-source "git+https://github.com/OWNER/REPO@v0.2.1"
    gecobench publish --org my-org --zoo runs/zoo --results results   # needs HF_TOKEN

Logic: gecobench.hub_publish.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    from gecobench.hub_publish import PARTS

    parser = argparse.ArgumentParser(prog="gecobench publish", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--org", required=True, help="Hub user or organisation that owns the repositories")
    parser.add_argument("--dry-run", metavar="DIR", default=None,
                        help="write every repository folder (and manifest.json) into DIR; no network, no token")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="publish only these parts")
    parser.add_argument("--zoo", default="runs/zoo", help="folder of zoo checkpoints to publish (default runs/zoo)")
    parser.add_argument("--results", default="results", help="results store folder to publish (default results/)")
    parser.add_argument("--reference", default=None,
                        help="reference results store to publish as ORG/gecobench-reference, with the zoo_summary.json "
                        "beside it (default: the repository's reference/store, written by make reference)")
    parser.add_argument("--package-source", default=None,
                        help="how the Spaces install gecobench-hub, e.g. git+https://github.com/OWNER/REPO@v0.2.1 "
                        "(default: the wheel built here, uploaded with the leaderboard Space)")
    parser.add_argument("--geco-dir", default=None, help="local GECO files (default: shared folder or download)")
    parser.add_argument("--spanish-dir", default=None, help="local Spanish files (default: shared folder or download)")
    parser.add_argument("--token", default=None, help="Hub token with write access (default $HF_TOKEN)")
    parser.add_argument("--private", action="store_true", help="create the repositories private")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gecobench.hub_publish import plan_repositories, upload_repositories

    say = (lambda message: None) if args.quiet else (lambda message: print(f"· {message}", file=sys.stderr))
    try:
        if args.dry_run:
            out = Path(args.dry_run)
            repos = plan_repositories(args.org, out, args.only, Path(args.zoo), Path(args.results),
                                      args.package_source, args.geco_dir, args.spanish_dir, progress=say,
                                      reference=Path(args.reference) if args.reference else None)
            for repo in repos:
                print(f"{repo.repo_type:<8} {repo.repo_id:<48} {repo.folder}")
            print(f"{len(repos)} repositories written to {out} (manifest.json lists them); nothing was uploaded")
            return 0
        with tempfile.TemporaryDirectory(prefix="gecobench-publish-") as tmp:
            repos = plan_repositories(args.org, Path(tmp), args.only, Path(args.zoo), Path(args.results),
                                      args.package_source, args.geco_dir, args.spanish_dir, progress=say,
                                      reference=Path(args.reference) if args.reference else None)
            for url in upload_repositories(repos, token=args.token, private=args.private, progress=say):
                print(url)
        return 0
    except (ValueError, OSError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

