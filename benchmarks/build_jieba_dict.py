"""Regenerate knowledge/jieba/dict.txt, the small jieba dictionary used by search.

jieba's default dictionary (349k words) costs about a second to load in every new
process. Search only needs the words that occur in the guide and the glossary plus the
most common words of the language (so unseen questions segment sensibly):

* every default-dictionary word found in the Chinese guide sections and glossary terms
  (jieba's full mode lists all of them, so the guide segments as it would with the full
  dictionary);
* the ``--common`` most frequent words of the default dictionary.

Frequencies and tags are copied from the default dictionary; no new compound words are
invented (adding compounds to the dictionary lowered recall in our measurements).

    .venv/bin/python benchmarks/build_jieba_dict.py [--common 20000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_COMMON = 20000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--common", type=int, default=DEFAULT_COMMON, help="most frequent words")
    parser.add_argument("--out", type=Path, default=ROOT / "knowledge" / "jieba" / "dict.txt")
    args = parser.parse_args()

    import jieba

    default = load_default_dictionary(Path(jieba.__file__).with_name("dict.txt"))
    chosen = set(most_common(default, args.common))
    chosen |= guide_vocabulary(set(default))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for word in sorted(chosen):
            freq, tag = default[word]
            handle.write(f"{word} {freq} {tag}\n" if tag else f"{word} {freq}\n")
    print(f"{len(chosen)} words -> {args.out.relative_to(ROOT)}")
    return 0


def load_default_dictionary(path: Path) -> dict[str, tuple[int, str]]:
    entries: dict[str, tuple[int, str]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 2:
                entries[parts[0]] = (int(parts[1]), parts[2] if len(parts) > 2 else "")
    return entries


def most_common(default: dict[str, tuple[int, str]], count: int) -> list[str]:
    ranked = sorted(default, key=lambda word: (-default[word][0], word))
    return ranked[:count]


def guide_vocabulary(known: set[str]) -> set[str]:
    """Default-dictionary words occurring in the Chinese guide and the glossary."""
    import jieba

    words: set[str] = set()
    for text in chinese_texts():
        words.update(w for w in jieba.cut(text, cut_all=True) if w in known)
        words.update(w for w in jieba.cut(text, HMM=False) if w in known)
    return words


def chinese_texts() -> list[str]:
    from assistant.knowledge import load_yaml
    from assistant.search.sections import list_sections

    texts = []
    for section in list_sections("zh"):
        texts.append(" ".join([section.title, *section.heading_path, section.body]))
    for entry in load_yaml("glossary.yaml") or []:
        texts.extend(str(term) for term in entry.get("zh") or [])
    return texts


if __name__ == "__main__":
    raise SystemExit(main())
