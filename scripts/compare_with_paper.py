#!/usr/bin/env python
"""Shim for old commands: `gecobench compare` (logic: gecobench.cli.compare; needs the package installed, `make setup`)."""
from gecobench.cli.compare import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
