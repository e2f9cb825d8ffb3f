#!/usr/bin/env python
"""Shim for old commands: `gecobench reference` (logic: gecobench.cli.reference; needs the package installed, `make setup`)."""
from gecobench.cli.reference import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
