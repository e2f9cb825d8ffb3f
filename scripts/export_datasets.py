#!/usr/bin/env python
"""Shim for old commands: `gecobench export datasets` (logic: gecobench.cli.export_datasets; needs the package installed, `make setup`)."""
from gecobench.cli.export_datasets import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
