#!/usr/bin/env python
"""Shim for old commands: `gecobench build-geco` (logic: gecobench.cli.build_geco; needs the package installed, `make setup`)."""
from gecobench.cli.build_geco import build_parser, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
