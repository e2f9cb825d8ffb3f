#!/usr/bin/env python
"""Write `gecobench compare --pivot` on reference/store into docs/reproducing.md (maintainers, after a promoted seed),
and the reference zoo's accuracy table from reference/zoo_summary.json (after a seed's zoo).

It replaces the page's generated blocks: from the first "**binary_all** — median MA" line to the line before "What
we think explains the differences", and the text between the reference-zoo-table markers. tests/test_reference.py
checks that the page shows what the store and the zoo summary give.

  python scripts/maintainer/update_reproducing_page.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gecobench.models.zoo import REFERENCE_TABLE_END, REFERENCE_TABLE_START, reference_zoo_table, write_table_into
from gecobench.paper_comparison import compare_records
from gecobench.reference import REFERENCE_STORE, ZOO_SUMMARY
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
    zoo_rows = json.loads(ZOO_SUMMARY.read_text(encoding="utf-8"))
    write_table_into(PAGE, reference_zoo_table(zoo_rows), REFERENCE_TABLE_START, REFERENCE_TABLE_END)
    print(f"{PAGE}: comparison of {len(report.documents)} records and the zoo table of {len(zoo_rows)} checkpoints "
          "written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
