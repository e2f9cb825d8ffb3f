"""The sandbox's seccomp filter: every denied call answers EPERM inside the real sandbox, the rest still works."""

from __future__ import annotations

import json
import struct

import pytest

from submissions import seccomp
from submissions.sandbox import SandboxLimits, run_submission, sandbox_status

needs_sandbox = pytest.mark.skipif(not sandbox_status()[0], reason=f"no sandbox here: {sandbox_status()[1]}")

DENIED = seccomp.denied_syscalls()
# The calls a submission could use to leave the sandbox or attack the kernel (namespaces, keyrings, tracing, BPF,
# mounts): each must be in the list.
REQUIRED = ("add_key", "request_key", "keyctl", "unshare", "setns", "ptrace", "bpf", "perf_event_open", "mount",
            "umount2", "pivot_root", "kexec_load", "kexec_file_load", "init_module", "finit_module",
            "delete_module", "swapon", "swapoff", "reboot", "userfaultfd", "process_vm_readv",
            "process_vm_writev", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm")

# Inside the sandbox: every denied call made straight through libc's syscall() (the interpreter's own handle:
# no audit event), with arguments that would be harmless if the call were allowed; then the clone variants.
PROBE = '''
import ctypes, json, os
import numpy as np
from gecobench.explainers import Explainer

DENIED = __DENIED__
FLAGS = __FLAGS__
ORDER = __ORDER__


def _call(number, *args):
    libc = ctypes.pythonapi
    location = getattr(libc, "__errno_location")
    location.restype = ctypes.POINTER(ctypes.c_int)
    location().contents.value = 0
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    return result, location().contents.value


class SyscallProbe(Explainer):
    name = "syscall_probe"

    def explain(self, model, tokenizer, words, targets):
        seen = {}
        for name, number in DENIED.items():
            if name == "reboot":  # wrong magic numbers: EINVAL if it were allowed, never a reboot
                seen[name] = _call(number, 0, 0, 0, 0)
            else:
                seen[name] = _call(number, 0, 0, 0, 0, 0, 0)
        for flag, value in FLAGS.items():
            result, error = _call(56, value | 17, 0, 0, 0, 0)
            if result == 0:
                os._exit(0)  # a child that got through: gone at once (the parent reports it)
            seen["clone " + flag] = (result, error)
        seen["clone3"] = _call(435, 0, 0)
        child, error = _call(56, 17, 0, 0, 0, 0)  # clone without namespace flags (a fork) keeps working
        if child == 0:
            os._exit(7)
        seen["fork"] = (os.waitpid(child, 0)[1] >> 8 if child > 0 else child, error)
        seen["getpid"] = _call(39)
        # Reported through the scores: two numbers (return value, errno) per probed call, in ORDER.
        return [np.array([float(v) for name in ORDER for v in seen[name]])]
'''


@pytest.fixture(scope="module")
def inside(tmp_path_factory, bert_tokenizer) -> dict[str, tuple[int, int]]:
    """Each probed call's (return value, errno) as seen inside one real sandbox run."""
    from tests.test_submissions_sandbox import save_tiny_checkpoint

    folder = tmp_path_factory.mktemp("seccomp")
    checkpoint = save_tiny_checkpoint(folder / "TINY-binary_all-s0", bert_tokenizer)
    probe = folder / "probe.py"
    order = [*DENIED, *(f"clone {flag}" for flag in seccomp.CLONE_NAMESPACE_FLAGS), "clone3", "fork", "getpid"]
    probe.write_text(PROBE.replace("__DENIED__", repr(DENIED)).replace("__ORDER__", repr(order))
                     .replace("__FLAGS__", repr(seccomp.CLONE_NAMESPACE_FLAGS)))
    result = run_submission(probe, checkpoint, [["w"] * (2 * len(order))], [0], kinds=("main",),
                            limits=SandboxLimits(memory_bytes=3 << 30, cpu_seconds=60, wall_seconds=120))
    assert result.ok, (result.reason, result.log_excerpt)
    values = [int(v) for v in result.outputs["scores"]["main"][0]]
    return {name: (values[2 * i], values[2 * i + 1]) for i, name in enumerate(order)}


def test_the_deny_list_holds_every_namespace_key_trace_and_mount_call():
    assert set(REQUIRED) <= set(DENIED)
    assert len(set(DENIED.values())) == len(DENIED)  # no number listed twice under two names


def test_the_filter_is_a_well_formed_bpf_program():
    program = seccomp.build_filter("x86_64")
    assert len(program) % 8 == 0 and len(program) // 8 < 4096  # BPF_MAXINSNS
    ops = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    # It starts by checking the ABI, and every path ends in a return (the last two: allow, EPERM).
    assert ops[0] == (0x20, 0, 0, seccomp.OFFSET_ARCH) and ops[1][3] == seccomp.AUDIT_ARCH_X86_64
    assert ops[-2][3] == seccomp.SECCOMP_RET_ALLOW and ops[-1][3] == seccomp.SECCOMP_RET_ERRNO | 1
    for index, (code, jt, jf, _) in enumerate(ops):
        if code & 0x07 == 0x05:  # a jump: both targets inside the program
            assert index + 1 + max(jt, jf) < len(ops)
    with pytest.raises(seccomp.SeccompUnsupported, match="aarch64"):
        seccomp.build_filter("aarch64")


@needs_sandbox
@pytest.mark.parametrize("name", sorted(DENIED))
def test_a_denied_call_answers_eperm_inside_the_sandbox(inside, name):
    assert inside[name] == (-1, 1), f"{name} returned {inside[name]} (expected -1 with EPERM)"


@needs_sandbox
@pytest.mark.parametrize("flag", sorted(seccomp.CLONE_NAMESPACE_FLAGS))
def test_clone_with_a_namespace_flag_answers_eperm(inside, flag):
    assert inside[f"clone {flag}"] == (-1, 1)


@needs_sandbox
def test_clone3_falls_back_and_ordinary_calls_still_work(inside):
    assert inside["clone3"] == (-1, 38)  # ENOSYS: glibc falls back to clone, whose flags the filter reads
    assert inside["fork"] == (7, 0)
    assert inside["getpid"][0] > 0


KEYRING = '''
import ctypes, json, os
import numpy as np
from gecobench.explainers import Explainer


def _call(number, *args):
    libc = ctypes.pythonapi
    location = getattr(libc, "__errno_location")
    location.restype = ctypes.POINTER(ctypes.c_int)
    result = libc.syscall(ctypes.c_long(number), *args)
    return result, location().contents.value


class Keyring(Explainer):
    name = "keyring"

    def explain(self, model, tokenizer, words, targets):
        payload = json.dumps(words).encode()
        found = _call(250, ctypes.c_long(10), ctypes.c_long(-4), b"user", b"gecobench-test-variants", ctypes.c_long(0))
        added = _call(248, b"user", b"gecobench-test-variants", payload, ctypes.c_long(len(payload)), ctypes.c_long(-4))
        raise RuntimeError("KEYRING " + json.dumps({"found": found, "added": added}))
'''


@needs_sandbox
def test_a_key_added_in_one_run_cannot_be_read_in_the_next(tmp_path, bert_tokenizer):
    from tests.test_submissions_sandbox import save_tiny_checkpoint

    checkpoint = save_tiny_checkpoint(tmp_path / "TINY-binary_all-s0", bert_tokenizer)
    probe = tmp_path / "keyring.py"
    probe.write_text(KEYRING)
    seen = []
    for variant in (["She", "sings"], ["He", "sings"]):  # the two gender variants, one per run
        result = run_submission(probe, checkpoint, [variant], [0], kinds=("main",),
                                limits=SandboxLimits(memory_bytes=3 << 30, cpu_seconds=60, wall_seconds=120))
        assert "KEYRING " in result.reason, (result.reason, result.log_excerpt)
        seen.append(json.loads(result.reason.split("KEYRING ", 1)[1]))
    for run in seen:
        assert run["added"] == [-1, 1] and run["found"] == [-1, 1]  # EPERM: no key written, none read
