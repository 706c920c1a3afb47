"""Hold the memory arithmetic to PyTorch itself: what autograd saves, what tensors weigh.

    .venv/bin/python benchmarks/validate_memory_torch.py [--tokens 64] [--layers 2]
        [--venv ~/.cache/areal-doctor-bench/venv] [--json out.json]

Outside the test suite (it installs torch). The first run makes its own virtual
environment (cached, default ~/.cache/areal-doctor-bench/venv) and installs
``torch==2.13.0`` (on this project's machines a local CPU wheel) and ``transformers``
from PyPI into it; the project's own venv never gets torch.

For two model families from knowledge/models.yaml (Qwen2.5-7B and Llama-3.1-8B), a
model of real width and small depth (``--layers``) is built on the CPU from a config
written by hand from the table's numbers (no hub download), in bf16, and then:

- per decoder layer: the bytes autograd saves for the backward pass during that
  layer's forward (``torch.autograd.graph.saved_tensors_hooks``, each storage counted
  once, parameters left out) against ``formulas.layer_activation_bytes``;
- logits: what the lm_head output and AReaL's log-probabilities
  (``log_softmax(logits.float() / temperature)``, areal/utils/functional) save,
  against ``formulas.logits_peak_bytes``;
- parameters: the model's own tensors (``numel``) against ``ModelFacts.params`` for the
  same depth;
- optimizer states: one real-width decoder layer, one ``torch.optim.AdamW`` step, the
  bytes of its states per parameter in fp32 storage (the guide: 8) and in bf16 storage
  (the 2026-05 code: 4), against knowledge/memory.yaml ``storage``.

Each term prints tool / torch and the ratio; the goal is every ratio within 15%, or a
stated reason. No GPU here: ``torch.cuda.max_memory_allocated`` of a training step is
left for a machine that has one (``--cuda`` runs it when CUDA is available).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / (
    "areal-doctor-bench/venv"
)
FAMILIES = {
    # family: (models.yaml id, transformers config class, model class)
    "qwen2": ("Qwen/Qwen2.5-7B-Instruct", "Qwen2Config", "Qwen2ForCausalLM"),
    "llama": ("meta-llama/Llama-3.1-8B-Instruct", "LlamaConfig", "LlamaForCausalLM"),
}
GOAL = 0.15


# --- the outer process: the project's venv, no torch ---------------------------------


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} (once; torch and transformers from PyPI)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run(
        [str(python), "-c", "import torch, transformers"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "torch==2.13.0"], check=True)
        subprocess.run([*pip, "transformers"], check=True)
    return python


def tool_figures(family: str, layers: int, tokens: int) -> dict[str, Any]:
    """What the project's arithmetic says for this family at this depth and length."""
    sys.path.insert(0, str(ROOT))
    from dataclasses import replace

    from assistant.memory import formulas, storage
    from assistant.memory.facts import table_entry

    ident = FAMILIES[family][0]
    full = table_entry(ident)
    assert full is not None, ident
    m = replace(full, layers=layers)
    fp32 = storage.bytes_per_param("fsdp", "adam", "bfloat16", "float32", "guide")
    bf16 = storage.bytes_per_param("fsdp", "adam", "bfloat16", None, "code-2026-05")
    return {
        "family": family,
        "model": ident,
        "config": {
            "vocab_size": m.vocab_size,
            "hidden_size": m.hidden_size,
            "intermediate_size": m.intermediate_size,
            "num_hidden_layers": layers,
            "num_attention_heads": m.heads,
            "num_key_value_heads": m.kv_heads,
            "head_dim": m.head_dim,
            "tie_word_embeddings": m.tie_embeddings,
            "attention_bias": m.qkv_bias,
        },
        "tokens": tokens,
        "tool": {
            "layer_activation_bytes": formulas.layer_activation_bytes(m, tokens, 2),
            "logits_bytes": formulas.logits_peak_bytes(tokens, m.vocab_size, 1, 2),
            "params": m.params,
            "layer_params": m.layer_params,
            "adam_states_per_param_fp32": fp32.optimizer_states,
            "adam_states_per_param_bf16": bf16.optimizer_states,
        },
    }


def compare(result: dict[str, Any]) -> list[tuple[str, float, float, float, str]]:
    tool, torch_ = result["tool"], result["torch"]
    rows = []
    reasons = result.get("reasons", {})
    for i, measured in enumerate(torch_["layer_activation_bytes"]):
        rows.append((f"activations, layer {i}", tool["layer_activation_bytes"], measured))
    rows.append(("logits (lm_head + fp32 log-softmax)", tool["logits_bytes"], torch_["logits"]))
    rows.append(("parameters (count)", tool["params"], torch_["params"]))
    rows.append(("decoder layer parameters", tool["layer_params"], torch_["layer_params"]))
    rows.append(
        (
            "AdamW states, bytes/param, fp32 storage",
            tool["adam_states_per_param_fp32"],
            torch_["adam_states_per_param_fp32"],
        )
    )
    rows.append(
        (
            "AdamW states, bytes/param, bf16 storage",
            tool["adam_states_per_param_bf16"],
            torch_["adam_states_per_param_bf16"],
        )
    )
    out = []
    for name, ours, theirs in rows:
        ratio = ours / theirs if theirs else float("inf")
        out.append((name, float(ours), float(theirs), ratio, reasons.get(name.split(",")[0], "")))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # bf16 matrix products are slow on a CPU without bf16 units (minutes per lm_head at
    # 1024 tokens here); every term is linear in the tokens (no [seq, seq] scores)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--cuda", action="store_true", help="also one step on a GPU")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(args)
    python = ensure_venv(args.venv.expanduser())
    results = []
    worst = 0.0
    for family in args.family or sorted(FAMILIES):
        job = tool_figures(family, args.layers, args.tokens)
        done = subprocess.run(
            [str(python), __file__, "--inner", *(["--cuda"] if args.cuda else [])],
            input=json.dumps(job),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 2
        job["torch"] = json.loads(done.stdout.strip().splitlines()[-1])
        results.append(job)
        print(
            f"\n{job['model']} ({family}): {args.layers} layers of real width, "
            f"{args.tokens} tokens, bf16, CPU, torch {job['torch']['versions']}"
        )
        print(f"  {'term':44} {'tool':>16} {'torch':>16} {'tool/torch':>10}")
        for name, ours, theirs, ratio, _ in compare(job):
            worst = max(worst, abs(ratio - 1))
            mark = "" if abs(ratio - 1) <= GOAL else "  <-- outside 15%"
            print(f"  {name:44} {ours:16,.0f} {theirs:16,.0f} {ratio:10.3f}{mark}")
        for line in job["torch"].get("notes", []):
            print(f"  note: {line}")
    print(f"\nworst |tool/torch - 1|: {worst:.3f} (goal <= {GOAL})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if worst <= GOAL else 1


# --- the inner process: the cached venv with torch -----------------------------------


def inner(args: argparse.Namespace) -> int:  # pragma: no cover - runs under torch
    import torch
    import transformers

    job = json.loads(sys.stdin.read())
    family = job["family"]
    _, config_name, model_name = FAMILIES[family]
    torch.manual_seed(0)
    cfg_kwargs = dict(job["config"])
    cfg_kwargs.update(max_position_embeddings=max(4096, job["tokens"]), use_cache=False)
    config = getattr(transformers, config_name)(**cfg_kwargs)
    config._attn_implementation = "sdpa"  # flash-style: no [seq, seq] scores kept
    # built on the meta device (no initialisation of a billion weights on two CPU
    # cores), then given real, zeroed bf16 storage: sizes do not depend on values
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("meta"):
        model = getattr(transformers, model_name)(config)
    model = model.to_empty(device="cpu")
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    torch.set_default_dtype(torch.float32)
    model.train()
    notes: list[str] = []
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    params |= {b.untyped_storage().data_ptr() for b in model.buffers()}
    scope = {"name": None}
    saved: dict[str, dict[int, int]] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        name = scope["name"]
        if name is not None:
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr not in params:
                saved.setdefault(name, {})[ptr] = storage.nbytes()
        return t

    def enter(name: str):
        def hook(*_: Any) -> None:
            scope["name"] = name

        return hook

    def leave(*_: Any) -> None:
        scope["name"] = None

    layers = model.model.layers
    for i, layer in enumerate(layers):
        layer.register_forward_pre_hook(enter(f"layer{i}"))
        layer.register_forward_hook(leave)
    tokens = job["tokens"]
    ids = torch.randint(0, config.vocab_size, (1, tokens))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        hidden = model.model(input_ids=ids).last_hidden_state
        scope["name"] = "logits"
        logits = model.lm_head(hidden)
        # AReaL's gather_logprobs: log_softmax of the float32 logits over the temperature
        logprobs = torch.log_softmax(logits.float() / 1.0, dim=-1)
        picked = logprobs.gather(-1, ids.unsqueeze(-1))
        scope["name"] = None
    layer_bytes = [sum(saved.get(f"layer{i}", {}).values()) for i in range(len(layers))]
    # the bf16 lm_head output is not saved by autograd (float() saves nothing) but it is
    # alive as the model's output while the fp32 log-softmax exists: both are the peak
    logits_saved = sum(saved.get("logits", {}).values())
    logits_bytes = logits_saved + logits.untyped_storage().nbytes()
    notes.append(
        f"logits: autograd saves {logits_saved:,} bytes (the fp32 log-softmax and the "
        f"lm_head input); the bf16 lm_head output ({logits.untyped_storage().nbytes():,} "
        "bytes) is alive beside it as the model's output, so both are counted"
    )
    counts = {
        "params": sum(p.numel() for p in model.parameters()),
        "layer_params": sum(p.numel() for p in layers[0].parameters()),
    }
    del picked, logprobs, logits, hidden, model, layers

    layer_class = getattr(getattr(transformers.models, family), f"modeling_{family}").__dict__[
        model_name.replace("ForCausalLM", "DecoderLayer")
    ]

    def states_per_param(dtype: torch.dtype) -> float:
        """One real-width decoder layer, one AdamW step: its states' bytes per parameter."""
        with torch.device("meta"):
            block = layer_class(config, 0)
        block = block.to_empty(device="cpu").to(dtype)
        for p in block.parameters():
            p.grad = torch.zeros_like(p)
        opt = torch.optim.AdamW(block.parameters(), lr=1e-6, foreach=False)
        opt.step()
        state = sum(
            v.untyped_storage().nbytes()
            for s in opt.state.values()
            for k, v in s.items()
            if torch.is_tensor(v) and k != "step"
        )
        count = sum(p.numel() for p in block.parameters())
        return state / count

    result = {
        "versions": f"{torch.__version__}, transformers {transformers.__version__}",
        "layer_activation_bytes": layer_bytes,
        "logits": logits_bytes,
        **counts,
        "adam_states_per_param_fp32": states_per_param(torch.float32),
        "adam_states_per_param_bf16": states_per_param(torch.bfloat16),
        "notes": notes,
    }
    if args.cuda and torch.cuda.is_available():  # one training step on a GPU
        torch.cuda.reset_peak_memory_stats()
        gpu = getattr(transformers, model_name)(config).to(torch.bfloat16).cuda()
        out = gpu(input_ids=ids.cuda()).logits.float().log_softmax(-1).sum()
        out.backward()
        result["cuda_max_memory_allocated"] = torch.cuda.max_memory_allocated()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
