"""Check once, in a child process, that this CPU can run the installed llama.cpp.

llama.cpp built with native CPU flags on one machine (AVX-512, AMX…) dies
with SIGILL on a CPU without them, and it dies in the middle of whatever
process loaded it: an evaluation would end in a core dump. So before the
first model load, a child process loads the model and evaluates a few
tokens; if the child is killed by a signal, the load is refused with one
line saying what happened and how to rebuild. The verdict is remembered
per llama.cpp build and CPU, so the check costs a second once, not per run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from utp.backends.base import BackendError, BackendErrorKind
from utp.fileio import write_text_atomic

PORTABLE_REBUILD = (
    "rebuild it for any x86-64/ARM CPU: CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" .venv/bin/pip install --force-reinstall"
    " --no-cache-dir --no-deps --no-binary llama-cpp-python llama-cpp-python (what `make local-models` does)"
)

_PROBE = (
    "import sys, llama_cpp\n"
    "llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_threads=1, verbose=False)\n"
    "llm.eval(llm.tokenize(b'Hello, world', add_bos=True))\n"
)
PROBE_TIMEOUT_S = 300

_checked: set[str] = set()


def probe_command(model_path: Path) -> list[str]:
    return [sys.executable, "-c", _PROBE, str(model_path)]


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor()


def build_key() -> str:
    """Which llama.cpp build on which CPU: the native libraries' sizes and mtimes plus the CPU's flags."""
    spec = importlib.util.find_spec("llama_cpp")
    parts = [platform.machine(), _cpu_flags()]
    for location in (spec.submodule_search_locations or []) if spec else []:
        for lib in sorted(Path(location).rglob("*.so*")) + sorted(Path(location).rglob("*.dylib")):
            stat = lib.stat()
            parts.append(f"{lib.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _verdict_file() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "utp" / "engine-probe.json"


def _load_verdicts(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def crash_message(signal_name: str) -> str:
    what = "Illegal instruction: it was built for another CPU's instruction set" if signal_name == "SIGILL" else "crashed"
    return f"the embedded llama.cpp dies on this machine ({signal_name}, {what}); {PORTABLE_REBUILD}"


def ensure_engine_runs(model_path: Path, *, command: Sequence[str] | None = None, verdicts: Path | None = None) -> None:
    """Return when a child process could load ``model_path``; raise NOT_INSTALLED when it was killed by a signal.

    A child that fails without a signal (a bad file, a missing module) is not
    a verdict on the build: the in-process load reports that error itself.
    """
    key = build_key()
    if key in _checked:
        return
    verdicts = verdicts or _verdict_file()
    known = _load_verdicts(verdicts)
    if known.get(key) == "ok":
        _checked.add(key)
        return
    if key in known:
        raise BackendError(BackendErrorKind.NOT_INSTALLED, crash_message(known[key]))
    try:
        done = subprocess.run(list(command or probe_command(model_path)), capture_output=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return  # a slow machine is no verdict; the real load follows
    if done.returncode < 0:
        verdict = _signal_name(done.returncode)
    elif done.returncode == 0:
        verdict = "ok"
    else:
        return
    known[key] = verdict
    try:
        write_text_atomic(verdicts, json.dumps(known, indent=1, sort_keys=True))
    except OSError:
        pass  # only costs another probe next time
    if verdict != "ok":
        raise BackendError(BackendErrorKind.NOT_INSTALLED, crash_message(verdict))
    _checked.add(key)
