#!/usr/bin/env python
"""Write `gecobench compare --pivot` on reference/store into docs/reproducing.md (maintainers, after a promoted seed).

It replaces the page's generated block: from the first "**binary_all** — median MA" line to the line before "What
we think explains the differences". tests/test_reference.py checks that the page shows what the store gives.

  python scripts/maintainer/update_reproducing_page.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gecobench.paper_comparison import compare_records
from gecobench.reference import REFERENCE_STORE
from gecobench.store import LocalStore

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reproducing.md"
START = "**binary_all** — median MA"
END = "What we think explains the differences"


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    start, end = page.find(START), page.find(END)
    if start < 0 or end < start:
        print(f"{PAGE}: no block from {START!r} to {END!r}", file=sys.stderr)
        return 1
    report = LocalStore(REFERENCE_STORE).read_all("explainer_score")
    if report.warnings:
        print(f"{REFERENCE_STORE}: {len(report.warnings)} records do not read: {report.warnings[:3]}", file=sys.stderr)
        return 1
    block = compare_records(report.documents, pivot=True).strip()
    PAGE.write_text(page[:start] + block + "\n\n" + page[end:], encoding="utf-8")
    print(f"{PAGE}: comparison of {len(report.documents)} records written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
