#!/usr/bin/env python
"""Shim for old commands: `gecobench zoo` (logic: gecobench.cli.zoo; needs the package installed, `make setup`)."""
from gecobench.cli.zoo import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
