#!/usr/bin/env python
"""Shim for old commands: `gecobench export results` (logic: gecobench.cli.export_results; needs the package installed, `make setup`)."""
from gecobench.cli.export_results import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
