"""BM25 search over the bilingual OOM guide.

Importing this package is cheap: jieba, rank-bm25 and numpy load only when a search
runs (and jieba only for text with Chinese in it).
"""

from assistant.search.engine import SearchHit, search, see_also
from assistant.search.output import format_hits_text, hits_to_json
from assistant.search.sections import Section, get_section, list_sections, section_title
from assistant.search.tokenize import detect_lang

__all__ = [
    "SearchHit",
    "Section",
    "detect_lang",
    "format_hits_text",
    "get_section",
    "hits_to_json",
    "list_sections",
    "search",
    "section_title",
    "see_also",
]
