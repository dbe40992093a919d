"""``utp prose-check``: calls found in ordinary documents, where there are none to find.

A parser that reads calls out of free text is only useful while it reads none
out of text that merely talks about code. This command parses whole documents
that hold no model output (by default what every machine with this project
has: Python's pydoc topics, the source of a few standard-library packages,
and every README, METADATA and Markdown file under the installed packages and
``/usr/share/doc``) three ways: with no tools; with tools named after common
words and taking no parameter; and with the same names, each taking one
string parameter, plus ``code``, ``answer``, ``sql``, ``shell``, ``bash`` and
``tool`` (a text element such as ``<search>q</search>`` is such a tool's
call). Every call found is printed with its document; the exit code is 1 when
there is one.
"""

from __future__ import annotations

import argparse
import site
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: tools named after words that ordinary prose and code use all the time
COMMON_WORD_TOOLS = ("print", "open", "search", "get", "read_file", "python", "run", "list", "help", "test",
                     "file", "name", "find", "write", "calculate")
#: names whose one-parameter tools a text element would call (``<code>…</code>``)
ELEMENT_WORD_TOOLS = ("code", "answer", "sql", "shell", "bash", "tool")
#: standard-library packages whose source is read as documents (docstrings, examples, markup)
STDLIB_PACKAGES = ("json", "email", "http", "urllib", "asyncio")
DOCUMENT_SUFFIXES = (".md", ".rst", ".txt")
DOCUMENT_NAMES = ("README", "METADATA")
#: documents above this size are skipped (generated tables, changelogs of decades)
MAX_DOCUMENT_BYTES = 2_000_000


@dataclass(frozen=True)
class Document:
    name: str
    text: str


@dataclass(frozen=True)
class Finding:
    document: str
    tool_set: str
    call: str
    excerpt: str


def tool_sets() -> dict[str, list[dict[str, Any]] | None]:
    one_parameter = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
    return {
        "no tools": None,
        "common words": [{"name": name} for name in COMMON_WORD_TOOLS],
        "common words, one parameter": [{"name": name, "parameters": one_parameter}
                                        for name in COMMON_WORD_TOOLS + ELEMENT_WORD_TOOLS],
    }


def _pydoc_topics() -> Iterator[Document]:
    try:
        from pydoc_data.topics import topics
    except ImportError:  # some distributions ship Python without pydoc_data
        return
    for key, text in sorted(topics.items()):
        yield Document(f"pydoc:{key}", text)


def _is_document(path: Path) -> bool:
    return path.suffix.lower() in DOCUMENT_SUFFIXES or path.name.split(".")[0].upper() in DOCUMENT_NAMES


def _files(root: Path, wanted: Any) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    if root.is_dir():
        yield from sorted(p for p in root.rglob("*") if p.is_file() and wanted(p))


def default_roots() -> list[tuple[Path, Any]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    roots: list[tuple[Path, Any]] = [(stdlib / name, lambda p: p.suffix == ".py") for name in STDLIB_PACKAGES]
    for packages in dict.fromkeys(site.getsitepackages() + [site.getusersitepackages()]):
        roots.append((Path(packages), _is_document))
    roots.append((Path("/usr/share/doc"), _is_document))
    return roots


def documents(paths: Sequence[Path]) -> Iterator[Document]:
    """The documents to parse: ``paths`` when given (every file under them), else the defaults."""
    roots = [(path, lambda p: True) for path in paths] if paths else default_roots()
    if not paths:
        yield from _pydoc_topics()
    seen: set[Path] = set()
    for root, wanted in roots:
        for file in _files(root, wanted):
            resolved = file.resolve()
            if resolved in seen or file.stat().st_size > MAX_DOCUMENT_BYTES:
                continue
            seen.add(resolved)
            try:
                yield Document(str(file), file.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, OSError):
                continue  # not text: nothing a model would have written


def findings_in(document: Document) -> Iterator[Finding]:
    from utp.parsers import parse_response

    for label, tools in tool_sets().items():
        for call in parse_response(document.text, tools=tools).tool_calls:
            if tools is not None and call.known is False:
                continue  # flagged unknown: refused before anything could run
            shown = f"{call.name}({call.arguments})"
            yield Finding(document.name, label, shown[:200], _excerpt(document.text, call.name))


def _excerpt(text: str, name: str) -> str:
    at = text.find(name)
    return " ".join(text[max(0, at - 80): at + 120].split()) if at >= 0 else ""


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="utp prose-check", description="Parse documents that hold no call and list every call found.")
    parser.add_argument("paths", nargs="*", type=Path, help="files or directories to read (default: pydoc topics, stdlib sources, installed documentation)")
    args = parser.parse_args(list(argv))
    missing = [path for path in args.paths if not path.exists()]
    if missing:
        print(f"utp: error: no such file or directory: {missing[0]}", file=sys.stderr)
        return 2
    count, size, found = 0, 0, []
    for document in documents(args.paths):
        count += 1
        size += len(document.text.encode("utf-8"))
        for finding in findings_in(document):
            found.append(finding)
            print(f"{finding.document} [{finding.tool_set}]: {finding.call}\n    {finding.excerpt}")
    print(f"{count} documents, {size / 1e6:.1f} MB, three tool sets: {len(found)} calls found")
    return 1 if found else 0
