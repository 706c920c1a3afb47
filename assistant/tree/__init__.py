"""The decision tree: from a diagnosis to ranked fixes, questions and a config patch.

Public API:
  decide(report, config, answers, lang, use_defaults) -> Decision
  question_ids() -> list[str]; parse_answer(qid, raw) -> value (UserError when invalid)

``Decision.patch`` is the config change of ``recommendations[0]`` only (the fix to
try first; the guide's fixes are meant to be tried one at a time, best first). A
first fix that is not a config change (an environment variable, a code change,
stopping another process) gives an empty patch; every recommendation still carries
its own flat ``patch``.
"""

from assistant.tree.engine import decide
from assistant.tree.questions import choices_of, parse_answer, question_ids

__all__ = ["choices_of", "decide", "parse_answer", "question_ids"]
