"""The OOM guide as data: one Markdown file per section and language.

``knowledge/guide/<lang>/<id>.md`` starts with a YAML front matter block (id, lang,
title, heading_path, keys, phase) followed by the section's Markdown body. Ids come
from docs/CONTRACT.md; ids starting with ``x-`` are knowledge areal-doctor adds.

A diagnosis names guide sections by title, so the parsed sections of each language are
kept in the one cache (``assistant/cache.py``, whose key changes with every guide file):
a warm run reads them back without PyYAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from assistant.errors import KnowledgeError
from assistant.knowledge import knowledge_path, safe_loader

LANGS = ("zh", "en")
PHASES = ("generation", "training", "weight_update", "model_loading", "host_memory", "any")
EXTRA_PREFIX = "x-"
FRONT_MATTER_KEYS = ("id", "lang", "title", "heading_path", "keys", "phase")
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)


@dataclass(frozen=True)
class Section:
    id: str
    lang: str
    title: str
    heading_path: list[str] = field(default_factory=list)
    body: str = ""
    keys: list[str] = field(default_factory=list)
    phase: str = "any"

    @property
    def is_extra(self) -> bool:
        """True for areal-doctor's own sections (``x-`` ids), False for the guide's."""
        return self.id.startswith(EXTRA_PREFIX)


def guide_files(lang: str) -> list[Path]:
    """The section files of one language, sorted by name."""
    return sorted(knowledge_path("guide", _checked_lang(lang)).glob("*.md"))


def list_sections(lang: str) -> list[Section]:
    """Every section of the guide in ``lang`` (guide sections first, then ``x-`` ones)."""
    return list(_sections(_checked_lang(lang)).values())


def get_section(section_id: str, lang: str) -> Section:
    """The section ``section_id`` in ``lang``; KnowledgeError when there is none."""
    sections = _sections(_checked_lang(lang))
    try:
        return sections[section_id]
    except KeyError:
        raise KnowledgeError(f"no guide section {section_id!r} in {lang}") from None


def section_title(section_id: str, lang: str) -> str:
    return get_section(section_id, lang).title


def _checked_lang(lang: str) -> str:
    if lang not in LANGS:
        raise KnowledgeError(f"guide language must be one of {', '.join(LANGS)}, not {lang!r}")
    return lang


@cache
def _sections(lang: str) -> dict[str, Section]:
    parsed = _cached_sections(lang)
    if parsed is None:
        parsed = [parse_section_file(path, lang) for path in guide_files(lang)]
        parsed.sort(key=lambda section: (section.is_extra, section.id))
        _cache_sections(lang, parsed)
    return {section.id: section for section in parsed}


_FIELDS = ("id", "lang", "title", "heading_path", "body", "keys", "phase")
_LISTS = frozenset(("heading_path", "keys"))


def _cache_name(lang: str) -> str:
    return f"guide-sections-{lang}.marshal"


def _cached_sections(lang: str) -> list[Section] | None:
    """The sections parsed before (validated then), or None when absent or not the
    plain strings and lists of strings ``_cache_sections`` wrote."""
    from assistant.cache import read_marshal

    rows = read_marshal(_cache_name(lang))
    if not (type(rows) is list and all(_is_row(row) for row in rows)):
        return None
    return [Section(**dict(zip(_FIELDS, row, strict=True))) for row in rows]


def _is_row(row: Any) -> bool:
    def plain(name: str, value: Any) -> bool:
        if name in _LISTS:
            return type(value) is list and all(type(item) is str for item in value)
        return type(value) is str

    return type(row) is list and len(row) == len(_FIELDS) and all(map(plain, _FIELDS, row))


def _cache_sections(lang: str, sections: list[Section]) -> None:
    from assistant.cache import write_marshal

    write_marshal(_cache_name(lang), [[getattr(s, name) for name in _FIELDS] for s in sections])


def clear_section_cache() -> None:
    _sections.cache_clear()


def parse_section_file(path: Path, lang: str) -> Section:
    """Read one section file and check its front matter against its place on disk."""
    text = path.read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if match is None:
        raise KnowledgeError(f"{path.name}: missing YAML front matter")
    meta = _load_front_matter(match.group(1), path)
    unknown = sorted(set(meta) - set(FRONT_MATTER_KEYS))
    if unknown:
        raise KnowledgeError(
            f"{path}: unknown front matter key '{unknown[0]}' "
            f"(allowed: {', '.join(FRONT_MATTER_KEYS)})"
        )
    section = Section(
        id=str(meta.get("id", "")),
        lang=str(meta.get("lang", "")),
        title=str(meta.get("title", "")).strip(),
        heading_path=[str(item) for item in meta.get("heading_path") or []],
        body=match.group(2).strip(),
        keys=[str(item) for item in meta.get("keys") or []],
        phase=str(meta.get("phase", "any")),
    )
    _validate(section, path, lang)
    return section


def _load_front_matter(block: str, path: Path) -> dict[str, Any]:
    import yaml

    try:
        meta = yaml.load(block, Loader=safe_loader())  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"{path.name}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise KnowledgeError(f"{path.name}: front matter must be a mapping")
    return meta


def _validate(section: Section, path: Path, lang: str) -> None:
    problems = []
    if section.id != path.stem:
        problems.append(f"id {section.id!r} differs from the file name")
    if section.lang != lang:
        problems.append(f"lang {section.lang!r} differs from the folder {lang!r}")
    if not section.title or not section.body:
        problems.append("title and body must not be empty")
    if section.phase not in PHASES:
        problems.append(f"phase {section.phase!r} is not one of {', '.join(PHASES)}")
    if problems:
        raise KnowledgeError(f"{path}: " + "; ".join(problems))
