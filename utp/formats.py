"""A *format* is four choices made together, and the named presets the harness compares.

How definitions reach the model (native ``tools`` array, Anthropic shape,
instructions in the system prompt, or instructions plus a reply schema the
server enforces), which parser reads its answer, how results
go back, and how the prompt teaches it (nothing, instructions, or few-shot
demonstrations). Measuring a model means measuring these bundles, and tuning
means picking one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

#: definition formats whose replies a server-enforced schema shapes (the answer as its own key, or as a call)
CONSTRAINED_DEFINITIONS = ("constrained", "constrained_call")
DEFINITION_FORMATS = ("openai", "ollama", "anthropic", "prompt", "none", *CONSTRAINED_DEFINITIONS)
RESULT_FORMATS = ("openai", "ollama", "anthropic", "text", *CONSTRAINED_DEFINITIONS)
PROMPT_STYLES = ("none", "instructions", "few_shot")


@dataclass(frozen=True)
class FormatBundle:
    definition_format: str = "ollama"
    call_parser: str = "auto"
    result_format: str = "ollama"
    prompt_style: str = "none"
    #: the call family the system prompt teaches (prompt styles other than "none")
    prompt_family: str | None = None

    def __post_init__(self) -> None:
        if self.definition_format not in DEFINITION_FORMATS:
            raise ValueError(f"definition_format {self.definition_format!r}: expected one of {DEFINITION_FORMATS}")
        if self.result_format not in RESULT_FORMATS:
            raise ValueError(f"result_format {self.result_format!r}: expected one of {RESULT_FORMATS}")
        if self.prompt_style not in PROMPT_STYLES:
            raise ValueError(f"prompt_style {self.prompt_style!r}: expected one of {PROMPT_STYLES}")
        if self.prompt_style != "none" and not self.prompt_family:
            raise ValueError(f"prompt_style {self.prompt_style!r} needs a prompt_family")

    @property
    def is_constrained(self) -> bool:
        """Whether the server is asked to force the reply's shape."""
        return self.definition_format in CONSTRAINED_DEFINITIONS

    @property
    def sends_native_tools(self) -> bool:
        return self.definition_format in ("openai", "ollama", "anthropic")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "FormatBundle":
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)

    def with_parser(self, call_parser: str) -> "FormatBundle":
        return replace(self, call_parser=call_parser)


def _prompted(family: str, style: str) -> FormatBundle:
    return FormatBundle(
        definition_format="prompt",
        call_parser="auto",
        result_format="text",
        prompt_style=style,
        prompt_family=family,
    )


#: The formats `make eval` compares. Prompted presets parse with "auto" so a
#: call written in another family still counts as parsed; format adherence is
#: scored separately against ``prompt_family``.
PRESETS: dict[str, FormatBundle] = {
    "native": FormatBundle("ollama", "auto", "ollama"),
    "native-openai": FormatBundle("openai", "auto", "openai"),
    "prompt-hermes": _prompted("hermes", "instructions"),
    "prompt-json": _prompted("json", "instructions"),
    "prompt-pythonic": _prompted("pythonic", "instructions"),
    "prompt-mistral": _prompted("mistral", "instructions"),
    "prompt-qwen3-coder": _prompted("qwen3_coder", "instructions"),
    "prompt-anthropic-xml": _prompted("anthropic_xml", "instructions"),
    "fewshot-hermes": _prompted("hermes", "few_shot"),
    "fewshot-json": _prompted("json", "few_shot"),
    "fewshot-pythonic": _prompted("pythonic", "few_shot"),
    # The reply's shape forced by a JSON Schema the server enforces (Ollama
    # ``format``, llama.cpp ``json_schema``, an embedded grammar); calls in the
    # json family's syntax, so "auto" reads them and adherence is scored as json.
    "constrained-json": FormatBundle("constrained", "auto", "constrained", "instructions", "json"),
    # The same, with the text answer written as a call to a reserved ``answer``
    # tool, so every reply starts ``{"name": "`` and a grammar's first choice
    # is between tool names (docs/constrained.md).
    "constrained-call": FormatBundle("constrained_call", "auto", "constrained_call", "instructions", "json"),
}


def get_preset(name: str) -> FormatBundle:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown format preset {name!r}; known: {', '.join(PRESETS)}") from None


def preset_name(bundle: FormatBundle) -> str | None:
    """The preset a bundle equals, if any (for reports and tuned profiles)."""
    for name, preset in PRESETS.items():
        if preset == bundle:
            return name
    return None
