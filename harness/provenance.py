"""Where a measurement came from: engine, model digest, options, hardware.

A tokens-per-second figure or a success rate means nothing without the exact
model build, the server version and the machine that produced it, so every
run record carries this, gathered once per model.
"""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path
from typing import Any

import utp


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware", "Processor", "cpu model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    except (ValueError, OSError, AttributeError):
        return None


def hardware_label() -> str:
    """``Linux x86_64, <CPU model>, 2 cores, 23 GiB RAM``: enough to tell two machines apart."""
    parts = [f"{platform.system()} {platform.machine()}".strip()]
    cpu = _cpu_model()
    if cpu:
        parts.append(cpu)
    parts.append(f"{os.cpu_count() or '?'} cores")
    ram = _ram_gib()
    if ram:
        parts.append(f"{ram:.0f} GiB RAM")
    return ", ".join(parts)


def utp_version() -> str:
    return getattr(utp, "__version__", "unknown")


def template_hash(template: str | None) -> str | None:
    if not template:
        return None
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


async def collect(backend: Any, model_name: str, *, spec: str, options: dict[str, Any], hardware: str,
                  cassette_dir: str | None) -> dict[str, Any]:
    """Ask the backend who it is; failures are recorded, not fatal (a run will show the real error)."""
    info: dict[str, Any] = {
        "backend": getattr(backend, "kind", None),
        "spec": spec,
        "server_version": None,
        "model": {"name": model_name},
        "options": dict(options),
        "hardware": hardware,
        "cassette": cassette_dir,
        "utp_version": utp_version(),
        "errors": [],
    }
    kinds: list[str] = []
    try:
        info["server_version"] = await backend.version()
    except Exception as exc:  # provenance must not stop the matrix; the error is kept
        info["errors"].append(f"version: {exc}")
        kinds.append(_kind(exc))
    try:
        model = await backend.show(model_name)
        data = model.to_dict()
        data.pop("template", None)  # long; its hash identifies it
        data["template_hash"] = template_hash(model.template)
        info["model"] = data
    except Exception as exc:
        info["errors"].append(f"show: {exc}")
        kinds.append(_kind(exc))
    if kinds:
        info["error_kinds"] = kinds
    return info


def _kind(exc: Exception) -> str:
    kind = getattr(exc, "kind", None)
    return str(getattr(kind, "value", kind) or type(exc).__name__)
