"""Memory arithmetic: model facts, formulas, the failed allocation, and `estimate`.

  facts       ModelFacts from a config.json or knowledge/models.yaml; parameter counts
  formulas    bytes of each tensor family, each derived from the code that allocates it
  sizes       "80GiB", "141GB", "24576MiB" -> bytes
  allocation  which tensor a failed request was (rules in knowledge/memory.yaml)
  estimate    per-GPU memory of each engine a config runs, before launching
  fit         values that fit (micro-batch, tensor parallel size, concurrency)

Nothing here imports torch, and the package is imported lazily by the stages that use it.
"""
