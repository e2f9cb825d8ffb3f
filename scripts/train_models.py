#!/usr/bin/env python
"""Shim for old commands: `gecobench train` (logic: gecobench.cli.train; needs the package installed, `make setup`)."""
from gecobench.cli.train import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
