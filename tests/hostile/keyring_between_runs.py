"""Hostile: leaves the gender variant it saw in the user keyring for the next run, and reads what the last one left.

The run that did this scored MA 1.000: a key in the run uid's user keyring outlived the run.
"""

import json
import os

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SEARCH = 10


def _errno() -> int:
    import ctypes

    location = getattr(ctypes.pythonapi, "__errno_location")
    location.restype = ctypes.POINTER(ctypes.c_int)
    return location().contents.value


class KeyringChannel(Explainer):
    name = "keyring_between_runs"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        libc = ctypes.pythonapi
        found = libc.syscall(ctypes.c_long(250), ctypes.c_long(KEYCTL_SEARCH), ctypes.c_long(KEY_SPEC_USER_KEYRING),
                             b"user", b"gecobench-hostile-variants", ctypes.c_long(0))
        if found >= 0:
            raise RuntimeError("keyring channel open: read a key an earlier run left")
        search_error = _errno()
        payload = json.dumps(words).encode()
        added = libc.syscall(ctypes.c_long(248), b"user", b"gecobench-hostile-variants", payload,
                             ctypes.c_long(len(payload)), ctypes.c_long(KEY_SPEC_USER_KEYRING))
        if added >= 0:
            raise RuntimeError("keyring channel open: added a key for the next run")
        error = _errno()
        raise PermissionError(error, f"add_key: {os.strerror(error)} (keyctl search: {os.strerror(search_error)})")
