"""Hostile: makes a nested user namespace (unshare, or clone with CLONE_NEWUSER) to mount a tmpfs of its own."""

import json
import os

from gecobench.explainers import Explainer

# Filled in by the test with the host's real paths (what an attacker who knows the host would aim at).
HOST = json.loads(r"""__HOST__""")
# libc is reached through ctypes.pythonapi (the interpreter's own handle): no dlopen, no audit event.
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
SYS_CLONE, SYS_UNSHARE = 56, 272


def _errno() -> int:
    import ctypes

    location = getattr(ctypes.pythonapi, "__errno_location")
    location.restype = ctypes.POINTER(ctypes.c_int)
    return location().contents.value


class NestedUserns(Explainer):
    name = "userns_nested_tmpfs"

    def explain(self, model, tokenizer, words, targets):
        import ctypes

        libc = ctypes.pythonapi
        child = libc.syscall(ctypes.c_long(SYS_CLONE), ctypes.c_long(CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD),
                             ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
        if child == 0:
            os._exit(0)  # never reached while the filter holds
        clone_error = _errno() if child < 0 else 0
        if child > 0:
            os.waitpid(child, 0)
            raise RuntimeError("clone(CLONE_NEWUSER) succeeded: nested user namespaces are possible")
        if libc.syscall(ctypes.c_long(SYS_UNSHARE), ctypes.c_long(CLONE_NEWUSER | CLONE_NEWNS)) == 0:
            # What the attack did next: its own tmpfs, written far past the work folder's cap.
            libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=4g")
            with open("/tmp/fill", "wb") as sink:
                sink.writelines(b"\0" * (1 << 20) for _ in range(1024))
            raise RuntimeError("unshare(CLONE_NEWUSER) succeeded: wrote 1024 MiB into a private tmpfs")
        error = _errno()
        raise PermissionError(error, f"unshare: {os.strerror(error)}; clone: {os.strerror(clone_error)}")
