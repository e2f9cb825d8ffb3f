#!/usr/bin/env python
"""Shim for old commands: `gecobench evaluate` (logic: gecobench.cli.evaluate; needs the package installed, `make setup`)."""
from gecobench.cli.evaluate import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
