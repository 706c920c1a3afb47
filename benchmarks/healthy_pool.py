"""Write the pool of healthy (non-failing) log lines under tests/fixtures/healthy/.

usage: python benchmarks/healthy_pool.py [FOLDER]   (default tests/fixtures/healthy)

The pool is what a run prints when nothing goes wrong: AReaL's own logger lines (the
messages of its logger.info/warning calls, its stats tables), SGLang's and vLLM's status
lines, tqdm bars, wandb output, torchrun / NCCL / Ray start-up noise and config dumps.
The formats follow the projects' format strings (AReaL: areal/utils/logging.py,
areal/utils/stats_logger.py, areal/infra/workflow_executor.py; SGLang: the scheduler's
prefill / decode statistics; vLLM: its periodic logging stats); the values are drawn
from a seeded generator, so rerunning this script writes the same files.

tests/test_logs_triggers.py feeds the pool through the prefilter (no trigger may keep
more than 0.5% of its lines); benchmarks/bench_scan.py builds its big logs from it.
"""

# ruff: noqa: E501 - the templates are real log lines, which are long

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "tests" / "fixtures" / "healthy"
HEAD = "(AReaL)"
COLOR_HEAD = "\x1b[1;38;2;180;140;80m(AReaL)\x1b[0m"
BLOCKS = " ▏▎▍▌▋▊▉█"

Line = Callable[[random.Random, int], str]


def _clock(second: int, ms: int = 0) -> str:
    hours, rest = divmod(second, 3600)
    return f"{10 + hours % 12:02d}:{rest // 60:02d}:{rest % 60:02d}.{ms:03d}"


def _areal(rng: random.Random, second: int, logger: str, message: str, level: str = "INFO") -> str:
    head = COLOR_HEAD if rng.random() < 0.3 else HEAD
    return f"{head} 20260521-{_clock(second, rng.randint(0, 999))} {logger} {level}: {message}"


def _bar(done: int, total: int, width: int = 10) -> str:
    filled = done * width / total
    full = int(filled)
    part = BLOCKS[int((filled - full) * 8)] if full < width else ""
    return ("█" * full + part).ljust(width)


# ------------------------------------------------------------------------- AReaL
def _stats_table(rng: random.Random) -> list[str]:
    keys = [
        "ppo_actor/update/actor_loss/avg", "ppo_actor/update/clip_ratio/avg",
        "ppo_actor/update/dual_clip_ratio/avg", "ppo_actor/update/entropy/avg",
        "ppo_actor/update/new_logp/avg", "ppo_actor/update/old_logp/avg",
        "ppo_actor/update/importance_weight/avg", "ppo_actor/update/approx_kl/avg",
        "ppo_actor/update/grad_norm", "ppo_actor/update/lr", "ppo_actor/update/n_tokens",
        "ppo_actor/update/n_valid_tokens", "ppo_actor/task_reward/avg",
        "ppo_actor/task_reward/max", "ppo_actor/task_reward/min", "ppo_actor/advantages/avg",
        "ppo_actor/seq_len/avg", "ppo_actor/prompt_len/avg", "ppo_actor/no_eos_ratios/avg",
        "rollout/reward/avg", "timeperf/rollout", "timeperf/compute_logp",
        "timeperf/compute_advantage", "timeperf/train_step", "timeperf/update_weights",
        "timeperf/save", "timeperf/eval", "version/current_version",
    ]  # fmt: skip
    picked = rng.sample(keys, rng.randint(12, len(keys)))
    rows = (len(picked) + 3) // 4
    lines = ["╒" + "╤".join(["═" * 40, "═" * 12] * 4) + "╕"]
    for row in range(rows):
        cells = []
        for col in range(4):
            index = row + col * rows
            if index < len(picked):
                cells += [f" {picked[index]:<38} ", f" {rng.uniform(-2, 900):.4e} "]
            else:
                cells += [" " * 40, " " * 12]
        lines.append("│" + "│".join(cells) + "│")
        if row + 1 < rows:
            lines.append("├" + "┼".join(["─" * 40, "─" * 12] * 4) + "┤")
    lines.append("╘" + "╧".join(["═" * 40, "═" * 12] * 4) + "╛")
    return lines


def areal_lines(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    second, step, version = 0, 0, 0
    roles = ["actor", "ref", "rollout"]
    while len(out) < count:
        second += rng.randint(0, 3)
        kind = rng.random()
        rank = rng.randint(0, 7)
        if kind < 0.18:
            enq = rng.randint(0, 256)
            msg = (
                f"Finish and accept rollout. enqueued: {enq}, running: {rng.randint(0, 256)}, "
                f"accepted: {rng.randint(0, 4096)}, rejected: {rng.randint(0, 40)}."
            )
            out.append(_areal(rng, second, "WorkflowExecutor", msg))
        elif kind < 0.24:
            msg = (
                f"Memory-Usage {rng.choice(['after onload model', 'before train_batch', 'after train_batch', 'after offload model', 'after compute_logp'])}: "
                f"memory allocated (GB): {rng.uniform(1, 60):.2f}, memory reserved (GB): "
                f"{rng.uniform(2, 70):.2f}, device memory used/total (GB): {rng.uniform(4, 78):.2f}/79.11"
            )  # fmt: skip
            out.append(_areal(rng, second, f"[FSDPEngine Rank {rank}]", msg))
        elif kind < 0.32:
            lens = [rng.randint(9000, 16384) for _ in range(rng.randint(2, 8))]
            msg = f"Microbatch #tokens (rank {rank}): {lens}, padded to: {[16384] * len(lens)}"
            out.append(_areal(rng, second, "FSDPEngine", msg))
        elif kind < 0.38:
            step += 1
            epoch, total = step // 200 + 1, 600
            msg = f"Epoch {epoch}/3 Step {step % 200 + 1}/200 Train step {step}/{total} done."
            out.append(_areal(rng, second, "StatsLogger", msg))
            out.append(_areal(rng, second, "StatsLogger", "Stats (1/1):"))
            out += _stats_table(rng)
        elif kind < 0.44:
            version += 1
            ms = rng.uniform(900, 30000)
            choice = rng.randint(0, 5)
            msgs = [
                f"Weight update completed for pair 'actor-rollout' v{version} ({ms:.1f}ms)",
                f"Broadcasting model weights took {ms / 1000:.2f} seconds",
                f"Initializing weight update group: type=xccl addresses=10.0.{rank}.12:{rng.randint(20000, 60000)}",
                f"Loading weights from disk done in {ms / 1000:.2f}s",
                f"Colocate weight update completed for v{version}, rank {rank}",
                f"Serialized {rng.randint(300, 900)} params ({rng.randint(4, 40)} groups) for colocate transfer v{version}, rank {rank}",
            ]  # fmt: skip
            out.append(_areal(rng, second, "FSDPEngine", msgs[choice]))
        elif kind < 0.50:
            msg = f"Respond time: {rng.uniform(0.01, 3):.2f}s."
            out.append(_areal(rng, second, "SyncRPCServer", msg))
        elif kind < 0.55:
            role = rng.choice(roles)
            msgs = [
                f"Creating {rng.choice([1, 2, 4, 8])} workers for role '{role}'",
                f"Successfully created {rng.choice([1, 2, 4, 8])} workers for role '{role}'",
                f"All {rng.choice([2, 4, 8])} forked workers ready for role '{role}'",
                f"Forking new worker process for role '{role}' index {rng.randint(0, 7)}",
                f"Role 'ref' colocated with 'actor': sharing {rng.choice([4, 8])} GPUs",
                f"Found {rng.choice([1, 2, 4])} rollout servers: 10.0.0.3:30000, 10.0.0.4:30000",
                f"SGLang server launched at: http://10.0.0.{rng.randint(2, 9)}:{rng.randint(20000, 40000)}",
                "LLM inference server launched at: AREAL_LLM_SERVER_ADDRS=10.0.0.3:30000,10.0.0.4:30000",
                f"Amend torch distributed env vars: MASTER_ADDR=10.0.0.2, PORT={rng.randint(20000, 60000)}",
            ]  # fmt: skip
            out.append(_areal(rng, second, rng.choice(["LocalScheduler", "RolloutController", "TrainController", "LocalLauncher"]), rng.choice(msgs)))  # fmt: skip
        elif kind < 0.60:
            msgs = [
                f"Create optimizer time: {rng.uniform(0.1, 3):.4f}",
                f"Model creation and loading time: {rng.uniform(5, 90):.2f}s",
                f"Applying FSDP2 with N-D parallelism for {rng.uniform(0.5, 9):.2f} seconds",
                "Initializing device mesh with parallel dims (dp=8, sp=1, tp=1, ep=1, etp=1, world_size=8).",
                f"Data parallel head {rank == 0} and rank {rank}",
                "Seed not set, using default seed 42.",
                "Defaulting to saving a single safetensors file if checkpoint is saved in HF format",
                f"Materialized and loaded weights in {rng.uniform(3, 60):.2f}s",
                "For deterministic algo, env [NCCL_ALGO] will be set to 'Ring'.",
                f"Set NUMA affinity for GPU {rank}: bound to 24 CPU cores.",
                "Auto-setting thread env vars to 8: OMP_NUM_THREADS, MKL_NUM_THREADS",
                "Loaded processor and tokenizer.",
                f"Offloaded {rng.randint(200, 800)} model weight tensors to CPU",
                f"Offloaded optimizer states for {rng.randint(200, 800)} params",
            ]  # fmt: skip
            out.append(_areal(rng, second, f"[FSDPEngine Rank {rank}]", rng.choice(msgs)))
        elif kind < 0.66:
            msgs = [
                f"Saving model to /storage/ckpt/gsm8k-grpo/trial0/default/epoch0epochstep{step}globalstep{step}",
                f"Evaluation results at step {step}: {{'eval-rollout/reward/avg': {rng.random():.4f}}}",
                f"Dumping {rng.randint(16, 256)} trajectories to /storage/dump/gsm8k-grpo/trial0/{version}",
                "Recover info dumped at /storage/recover/gsm8k-grpo/trial0/recover_info.pkl",
                f"Trajectory ready: session=sess-{rng.randint(1000, 9999)} trajectory=traj-{rng.randint(1, 99)} interactions={rng.randint(1, 9)}",
                f"Running: {rng.randint(0, 256)}",
            ]  # fmt: skip
            out.append(_areal(rng, second, rng.choice(["RLTrainer", "Saver", "Evaluator", "RecoverHandler"]), rng.choice(msgs)))  # fmt: skip
        elif kind < 0.72:
            msgs = [
                f"[chat/completions] Session sess-{rng.randint(1000, 9999)} → worker 10.0.0.{rng.randint(2, 9)}:30000",
                f"Group {rng.randint(0, 999)} reward mean {rng.random():.4f} std {rng.random():.4f}",
                f"[Rank {rank}] init process group done in {rng.uniform(0.1, 3):.2f}s",
                f"Health check — {rng.randint(1, 8)} worker(s), {rng.randint(0, 256)} active session(s), 0 queued worker(s)",
                f"Registered dataset gsm8k-train: total_samples=7473, workers={rng.choice([1, 2, 4])}",
                "Compiled torch flex attention. Options: {}, dynamic: False",
            ]  # fmt: skip
            out.append(_areal(rng, second, rng.choice(["RemoteInfEngine", "RLVRWorkflow", "PerfTracer", "Router"]), rng.choice(msgs)))  # fmt: skip
        elif kind < 0.76:
            warns = [
                "Please set HF_HOME to your NFS directory",
                "Trajectory missing 'versions' field, defaulting to current inference engine version.",
                "Neither max_tokens nor max_completion_tokens is set; using max_new_tokens from gconfig",
                "Unable to pad to maximum because max_tokens_per_mb is not properly set.",
                "Filtering will be ignored. Set use_decoupled_loss=True to enable.",
                f"Retrying in {rng.uniform(0.5, 4):.1f}s (attempt {rng.randint(1, 3)}/5)",
                f"Abort detected, resubmit attempt {rng.randint(1, 3)}, accumulated {rng.randint(0, 1024)} tokens",
            ]  # fmt: skip
            out.append(_areal(rng, second, rng.choice(["RLTrainer", "PPOActor", "RemoteInfEngine"]), rng.choice(warns), "WARNING"))  # fmt: skip
        else:
            msg = (
                f"ppo_update stats: kl={rng.random() / 100:.6f} clip_ratio={rng.random() / 10:.5f} "
                f"entropy={rng.random():.4f} new_logp={-rng.random():.4f} old_logp={-rng.random():.4f} "
                f"reward={rng.random():.4f}"
            )
            out.append(_areal(rng, second, "PPOActor", msg))
    return out[:count]


# ------------------------------------------------------------------------- SGLang
def _sglang_head(rng: random.Random, second: int) -> str:
    tags = rng.choice(["", " TP0", " TP1", " DP0 TP0", " TP3", " TP0 EP0"])
    return f"[2026-05-21 {_clock(second)[:8]}{tags}]"


def sglang_lines(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    second = 0
    startup = [
        "server_args=ServerArgs(model_path='/models/Qwen2.5-7B-Instruct', tokenizer_path='/models/Qwen2.5-7B-Instruct', tokenizer_mode='auto', skip_tokenizer_init=False, load_format='auto', trust_remote_code=False, dtype='bfloat16', kv_cache_dtype='auto', quantization=None, context_length=32768, device='cuda', served_model_name='/models/Qwen2.5-7B-Instruct', chat_template=None, is_embedding=False, revision=None, host='10.0.0.3', port=30000, mem_fraction_static=0.8, max_running_requests=None, max_total_tokens=None, chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='lpm', schedule_conservativeness=1.0, cpu_offload_gb=0, tp_size=1, stream_interval=1, random_seed=1, log_level='info', log_requests=False, enable_metrics=True, dp_size=1, attention_backend='fa3', sampling_backend='flashinfer', disable_radix_cache=False, disable_cuda_graph=False, cuda_graph_max_bs=256, enable_memory_saver=True, allow_auto_truncate=False, num_continuous_decode_steps=1, enable_custom_logit_processor=False, tool_call_parser=None)",
        "Attention backend not set. Use fa3 backend by default.",
        "Init torch distributed begin.",
        "Init torch distributed ends. mem usage=0.00 GB",
        "Load weight begin. avail mem=78.47 GB",
        "Using model weights format ['*.safetensors']",
        "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.10 GB, mem usage=14.37 GB.",
        "KV Cache is allocated. #tokens: 1167372, K size: 31.17 GB, V size: 31.17 GB",
        "Memory pool end. avail mem=1.38 GB",
        "Capture cuda graph begin. This can take up to several minutes. avail mem=1.25 GB",
        "Capture cuda graph end. Time elapsed: 24.51 s. mem usage=0.53 GB. avail mem=0.72 GB.",
        "max_total_num_tokens=1167372, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=32768, available_gpu_mem=0.72 GB",
        "Started server process [84213]",
        "Waiting for application startup.",
        "Application startup complete.",
        "Uvicorn running on http://10.0.0.3:30000 (Press CTRL+C to quit)",
        "The server is fired up and ready to roll!",
    ]  # fmt: skip
    for message in startup:
        out.append(f"{_sglang_head(rng, second)} {message}")
    while len(out) < count:
        second += rng.random() < 0.3
        kind = rng.random()
        head = _sglang_head(rng, second)
        if kind < 0.35:
            new_token = rng.choice([8192, 8192, rng.randint(200, 8192)])
            cached = rng.choice([0, 0, rng.randint(0, 60000)])
            extra = rng.choice(["", "", ", #transfer-req: 0", ", #retracted-req: 0"])
            out.append(
                f"{head} Prefill batch. #new-seq: {rng.randint(1, 64)}, #new-token: {new_token}, "
                f"#cached-token: {cached}, token usage: {rng.random():.2f}, "
                f"#running-req: {rng.randint(0, 256)}, #queue-req: {rng.randint(0, 512)}{extra}"
            )
        elif kind < 0.70:
            out.append(
                f"{head} Decode batch. #running-req: {rng.randint(1, 256)}, "
                f"#token: {rng.randint(1000, 1100000)}, token usage: {rng.random():.2f}, "
                f"cuda graph: {rng.choice(['True', 'False'])}, "
                f"gen throughput (token/s): {rng.uniform(50, 9000):.2f}, "
                f"#queue-req: {rng.randint(0, 512)}"
            )
        elif kind < 0.90:
            path = rng.choice(["/generate", "/generate", "/health", "/get_model_info", "/flush_cache", "/update_weights_from_distributed", "/pause_generation", "/continue_generation", "/metrics"])  # fmt: skip
            out.append(
                f'INFO:     10.0.0.{rng.randint(2, 9)}:{rng.randint(30000, 65000)} - "'
                f'{"GET" if path in ("/health", "/metrics", "/get_model_info") else "POST"} {path} HTTP/1.1" 200 OK'
            )
        else:
            msgs = [
                "Cache flushed successfully!",
                "Start update_weights_from_distributed. Load format=auto",
                "Update weights end.",
                f"init custom process group: master_address=10.0.0.2, master_port={rng.randint(20000, 60000)}, rank_offset=1, rank=1, world_size=2, group_name=update_weight_group, backend=nccl",
                "Pause generation: abort all running requests",
                "Continue generation",
                f"Receive: obj=GenerateReqInput(rid='{rng.getrandbits(64):016x}', max_new_tokens=1024, temperature=1.0)",
                "Using default HuggingFace chat template with detected content format: string",
            ]  # fmt: skip
            out.append(f"{head} {rng.choice(msgs)}")
    return out[:count]


# ------------------------------------------------------------------------- vLLM
def vllm_lines(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    second = 0

    def head(level: str = "INFO") -> str:
        return f"{level} 05-21 {_clock(second)[:8]}"

    startup = [
        "[__init__.py:239] Automatically detected platform cuda.",
        "[api_server.py:1043] vLLM API server version 0.8.4",
        "[config.py:689] This model supports multiple tasks: {'generate', 'embed', 'reward', 'classify', 'score'}. Defaulting to 'generate'.",
        "[config.py:1901] Chunked prefill is enabled with max_num_batched_tokens=8192.",
        "[core.py:61] Initializing a V1 LLM engine (v0.8.4) with config: model='/models/Qwen2.5-7B-Instruct', speculative_config=None, tokenizer='/models/Qwen2.5-7B-Instruct', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=/models/Qwen2.5-7B-Instruct, num_scheduler_steps=1, enable_prefix_caching=True, chunked_prefill_enabled=True",
        "[parallel_state.py:959] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0",
        "[cuda.py:221] Using Flash Attention backend on V1 engine.",
        "[gpu_model_runner.py:1329] Starting to load model /models/Qwen2.5-7B-Instruct...",
        "[loader.py:458] Loading weights took 3.21 seconds",
        "[gpu_model_runner.py:1347] Model loading took 14.2474 GiB and 3.662118 seconds",
        "[backends.py:420] Using cache directory: /root/.cache/vllm/torch_compile_cache/2f1a9c/rank_0_0 for vLLM's torch.compile",
        "[backends.py:430] Dynamo bytecode transform time: 7.61 s",
        "[monitor.py:33] torch.compile takes 11.20 s in total",
        "[kv_cache_utils.py:634] GPU KV cache size: 1,032,528 tokens",
        "[kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 31.51x",
        "[gpu_model_runner.py:1686] Graph capturing finished in 17 secs, took 0.52 GiB",
        "[core.py:159] init engine (profile, create kv cache, warmup model) took 34.86 seconds",
        "[gpu_worker.py:215] Available KV cache memory: 54.12 GiB",
        "[model_runner.py:1451] CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or switching to eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage.",
        "[api_server.py:1090] Starting vLLM API server on http://0.0.0.0:8000",
        "[launcher.py:26] Available routes are:",
        "[launcher.py:34] Route: /v1/completions, Methods: POST",
        "[launcher.py:34] Route: /sleep, Methods: POST",
        "[launcher.py:34] Route: /wake_up, Methods: POST",
        "Started server process [90121]",
        "Waiting for application startup.",
        "Application startup complete.",
    ]  # fmt: skip
    for message in startup:
        out.append(f"{head()} {message}")
    while len(out) < count:
        second += rng.randint(0, 2)
        kind = rng.random()
        if kind < 0.35:
            out.append(
                f"{head()} [loggers.py:111] Engine 000: Avg prompt throughput: "
                f"{rng.uniform(0, 20000):.1f} tokens/s, Avg generation throughput: "
                f"{rng.uniform(0, 9000):.1f} tokens/s, Running: {rng.randint(0, 256)} reqs, "
                f"Waiting: {rng.randint(0, 300)} reqs, GPU KV cache usage: {rng.uniform(0, 99):.1f}%, "
                f"Prefix cache hit rate: {rng.uniform(0, 90):.1f}%"
            )
        elif kind < 0.50:
            out.append(
                f"{head()} [metrics.py:455] Avg prompt throughput: {rng.uniform(0, 9000):.1f} tokens/s, "
                f"Avg generation throughput: {rng.uniform(0, 5000):.1f} tokens/s, Running: "
                f"{rng.randint(0, 256)} reqs, Swapped: 0 reqs, Pending: {rng.randint(0, 64)} reqs, "
                f"GPU KV cache usage: {rng.uniform(0, 99):.1f}%, CPU KV cache usage: 0.0%."
            )
        elif kind < 0.75:
            route = rng.choice(["/v1/completions", "/v1/chat/completions", "/health", "/sleep", "/wake_up", "/areal_update_weights", "/v1/models"])  # fmt: skip
            out.append(
                f'{head()} INFO:     10.0.0.{rng.randint(2, 9)}:{rng.randint(30000, 65000)} - "POST {route} HTTP/1.1" 200 OK'
            )
        elif kind < 0.85:
            out.append(f"{head()} [logger.py:43] Received request cmpl-{rng.getrandbits(64):016x}-0: prompt: '', params: SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, temperature=1.0, top_p=1.0, top_k=-1, min_p=0.0, seed=None, stop=[], stop_token_ids=[], bad_words=[], include_stop_str_in_output=False, ignore_eos=False, max_tokens=1024, min_tokens=0, logprobs=0, prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, truncate_prompt_tokens=None, guided_decoding=None, extra_args=None), prompt_token_ids: None, lora_request: None, prompt_adapter_request: None.")  # fmt: skip
        elif kind < 0.92:
            msgs = [
                f"[gpu_worker.py:100] Sleep mode freed {rng.uniform(40, 70):.2f} GiB memory, {rng.uniform(0.5, 3):.2f} GiB memory is still in use.",
                f"[executor_base.py:226] It took {rng.uniform(0.2, 5):.6f} seconds to fall asleep.",
                f"[executor_base.py:242] It took {rng.uniform(0.2, 5):.6f} seconds to wake up tags {{'weights', 'kv_cache'}}.",
                "[block_pool.py:264] Successfully reset prefix cache",
                f"[areal_vllm_server.py:88] start update weights, /storage/weights/v{rng.randint(1, 300)}",
                "[areal_vllm_server.py:97] Reloading weights inplace...",
            ]  # fmt: skip
            out.append(f"{head()} {rng.choice(msgs)}")
        else:
            worker = f"(VllmWorker rank={rng.randint(0, 3)} pid={rng.randint(40000, 60000)})"
            out.append(
                f"{worker} {head()} [custom_all_reduce.py:195] Registering {rng.randint(1000, 9000)} cuda graph addresses"
            )
    return out[:count]


# ------------------------------------------------------------------------- bars, wandb
def progress_lines(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        kind = rng.random()
        if kind < 0.6:
            total = rng.choice([4, 8, 38, 67, 512, 7473, 300])
            done = rng.randint(0, total)
            rate = rng.uniform(0.5, 6000)
            pct = int(done * 100 / total)
            label = rng.choice(["Loading checkpoint shards", "Loading safetensors checkpoint shards", "Capturing CUDA graph shapes", "Processed prompts", "Map", "Map (num_proc=16)", "Generating train split", "Filter", "Capturing batches (bs=256 avail_mem=1.31 GB)", "Tokenizing"])  # fmt: skip
            tail = f"{done}/{total} [00:{rng.randint(0, 59):02d}<00:{rng.randint(0, 59):02d}, {rate:7.2f}it/s]"
            if label == "Processed prompts":
                tail = tail[:-1] + f", est. speed input: {rng.uniform(100, 9000):.2f} toks/s, output: {rng.uniform(100, 9000):.2f} toks/s]"  # fmt: skip
            if label == "Loading safetensors checkpoint shards":
                out.append(f"{label}: {pct:3d}% Completed | {tail}")
            else:
                out.append(f"{label}: {pct:3d}%|{_bar(done, total)}| {tail}")
        elif kind < 0.8:
            key = rng.choice(["actor/loss", "actor/grad_norm", "rollout/reward", "timing/step", "actor/entropy", "actor/kl", "perf/throughput", "actor/new_logp", "actor/old_logp", "eval/reward", "lr"])  # fmt: skip
            spark = "".join(rng.choice("▁▂▃▄▅▆▇█") for _ in range(40))
            out.append(
                f"wandb: {key:>22} {spark if rng.random() < 0.5 else f'{rng.uniform(-1, 100):.5f}'}"
            )
        else:
            msgs = [
                "wandb: Currently logged in as: areal-team (areal) to https://api.wandb.ai. Use `wandb login --relogin` to force relogin",
                "wandb: Tracking run with wandb version 0.19.8",
                f"wandb: Run data is saved locally in /storage/wandb/run-20260521_{rng.randint(100000, 235959)}-{rng.getrandbits(32):08x}",
                "wandb: Run `wandb offline` to turn off syncing.",
                "wandb: Syncing run gsm8k-grpo_trial0",
                "wandb: ⭐️ View project at https://wandb.ai/areal/gsm8k-grpo",
                f"wandb: 🚀 View run at https://wandb.ai/areal/gsm8k-grpo/runs/{rng.getrandbits(32):08x}",
                "wandb: Run history:",
                f"wandb: WARNING Serializing object of type dict that is {rng.randint(100000, 900000)} bytes",
                "wandb: Run summary:",
                "wandb: 🚀 View run gsm8k-grpo_trial0 at: https://wandb.ai/areal/gsm8k-grpo/runs/2k1x9a0b",
                "wandb: Synced 5 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)",
                f"wandb: Find logs at: /storage/wandb/run-20260521_{rng.randint(100000, 235959)}/logs",
                "swanlab: Tracking run with swanlab version 0.5.4",
                "swanlab: 🏠 View project at https://swanlab.cn/@areal/gsm8k-grpo",
            ]  # fmt: skip
            out.append(rng.choice(msgs))
    return out[:count]


# ------------------------------------------------------------------------- launchers
def launch_lines(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    second = 0
    while len(out) < count:
        second += rng.randint(0, 2)
        kind = rng.random()
        rank = rng.randint(0, 7)
        host = f"node-{rng.randint(1, 16):02d}"
        pid = rng.randint(1000, 99999)
        if kind < 0.35:
            msgs = [
                f"NCCL INFO Bootstrap : Using eth0:10.0.{rank}.2<0>",
                "NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
                "NCCL INFO cudaDriverVersion 12040",
                "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.2<0>",
                "NCCL INFO Using network IB",
                f"NCCL INFO Channel {rng.randint(0, 23):02d}/24 :    0   1   2   3   4   5   6   7",
                f"NCCL INFO Channel {rng.randint(0, 23):02d}/0 : {rank}[{rank}] -> {(rank + 1) % 8}[{(rank + 1) % 8}] via P2P/CUMEM/read",
                "NCCL INFO Connected all rings",
                "NCCL INFO Connected all trees",
                f"NCCL INFO comm 0x{rng.getrandbits(40):x} rank {rank} nranks 8 cudaDev {rank} nvmlDev {rank} busId {rng.choice(['18000', '2a000', '3a000', '5d000'])} commId 0x{rng.getrandbits(60):x} - Init COMPLETE",
                f"NCCL INFO ncclCommInitRank comm 0x{rng.getrandbits(40):x} rank {rank} nranks 8 cudaDev {rank} nvmlDev {rank} busId 18000 commId 0x{rng.getrandbits(60):x} - Init START",
                "NCCL INFO threadThresholds 8/8/64 | 64/8/64 | 512 | 512",
                "NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
                "NCCL INFO NVLS multicast support is not available on dev 0",
                "NCCL INFO Setting affinity for GPU 0 to ffffffff,00000000,ffffffff",
            ]  # fmt: skip
            out.append(f"{host}:{pid}:{pid} [{rank}] {rng.choice(msgs)}")
        elif kind < 0.45:
            out.append(
                f"[rank{rank}]:[W521 {_clock(second)}000 {pid} site-packages/torch/distributed/"
                f"fsdp/_init_utils.py:440] FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD since the world size is 1."
                if rng.random() < 0.2
                else f"[rank{rank}]:[I521 {_clock(second)}000 {pid} site-packages/torch/distributed/c10d/ProcessGroupNCCL.cpp:{rng.choice([944, 1021, 2345])}] [PG ID 0 PG GUID 0 Rank {rank}] ProcessGroupNCCL initialization options: size: 8, global rank: {rank}, TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0"
            )  # fmt: skip
        elif kind < 0.55:
            msgs = [
                "*****************************************",
                "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.",
                f"W0521 {_clock(second)}000 {pid} torch/distributed/run.py:793] ",
                f"I0521 {_clock(second)}000 {pid} torch/distributed/launcher/api.py:188] Starting elastic_operator with launch configs:",
                "  entrypoint       : areal.launcher.local",
                "  min_nodes        : 1",
                "  max_nodes        : 1",
                "  nproc_per_node   : 8",
                "  rdzv_backend     : static",
                "  max_restarts     : 0",
                "  monitor_interval : 0.1",
            ]  # fmt: skip
            out.append(rng.choice(msgs))
        elif kind < 0.75:
            stamp = f"2026-05-21 {_clock(second)[:8]},{rng.randint(0, 999):03d}"
            msgs = [
                f"{stamp}\tINFO worker.py:1832 -- Started a local Ray instance. View the dashboard at \x1b[1m\x1b[32m127.0.0.1:8265 \x1b[39m\x1b[22m",
                f"{stamp}\tINFO worker.py:1660 -- Connecting to existing Ray cluster at address: 10.0.0.2:6379...",
                f"{stamp}\tINFO usage_lib.py:467 -- Usage stats collection is enabled by default without user confirmation because this terminal is detected to be non-interactive.",
                f"{stamp}\tINFO scripts.py:865 -- Local node IP: 10.0.0.{rng.randint(2, 9)}",
                f"{stamp}\tSUCC scripts.py:902 -- Ray runtime started.",
                f"{stamp}\tINFO packaging.py:575 -- Creating a file package for local module '/opt/AReaL'.",
                f"{stamp}\tINFO packaging.py:367 -- Pushing file package 'gcs://_ray_pkg_{rng.getrandbits(64):016x}.zip' (12.41MiB) to Ray cluster...",
                f"(raylet) [{stamp}] INFO: spilled_objects: 0, restored_objects: 0",
                f"(autoscaler +{rng.randint(1, 59)}s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set RAY_SCHEDULER_EVENTS=0.",
                f"(pid={pid}) INFO 05-21 {_clock(second)[:8]} [__init__.py:239] Automatically detected platform cuda.",
                f"(RayWorkerWrapper pid={pid}, ip=10.0.0.{rng.randint(2, 9)}) INFO 05-21 {_clock(second)[:8]} [utils.py:1054] Found nccl from library libnccl.so.2",
                f"(TrainWorker pid={pid}) [rank{rank}] step {rng.randint(1, 999)} done",
                "Next steps",
                "  To add another node to this Ray cluster, run",
                "    ray start --address='10.0.0.2:6379'",
                "Resources",
                "---------------------------------------------------------------",
                f" {rng.randint(0, 128)}.0/128.0 CPU",
                f" {rng.randint(0, 8)}.0/8.0 GPU",
                f" 0B/{rng.randint(900, 1800)}.00GiB memory",
                " 0B/186.26GiB object_store_memory",
            ]  # fmt: skip
            out.append(rng.choice(msgs))
        else:
            msgs = [
                f"/usr/local/lib/python3.11/site-packages/torch/utils/checkpoint.py:{rng.randint(80, 99)}: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
                "  warnings.warn(",
                "/usr/local/lib/python3.11/site-packages/transformers/tokenization_utils_base.py:1617: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default.",
                f"[Gloo] Rank {rank} is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
                "Using /root/.cache/torch_extensions/py311_cu124 as PyTorch extensions root...",
                "Emitting ninja build file /root/.cache/torch_extensions/py311_cu124/fused_adam/build.ninja...",
                "ninja: no work to do.",
                f"Time to load fused_adam op: {rng.uniform(0.01, 2):.6f} seconds",
                "You are attempting to use Flash Attention 2.0 with a model not initialized on GPU. Make sure to move the model to GPU after initializing it on CPU with `model.to('cuda')`.",
                "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.",
                "+ export NCCL_DEBUG=INFO",
                f"+ python3 -m areal.launcher.local examples/math/gsm8k_grpo.py --config examples/math/gsm8k_grpo.yaml experiment_name=gsm8k-grpo trial_name=trial{rng.randint(0, 9)}",
                f"Sat May 21 {_clock(second)[:8]} 2026",
                f"|   {rank}  NVIDIA H100 80GB HBM3          On  |   00000000:{rng.randint(10, 99)}:00.0 Off |                    0 |",
                f"| N/A   {rng.randint(30, 70)}C    P0            {rng.randint(80, 700)}W /  700W |   {rng.randint(100, 80000)}MiB /  81559MiB |     {rng.randint(0, 100)}%      Default |",
            ]  # fmt: skip
            out.append(rng.choice(msgs))
    return out[:count]


# ------------------------------------------------------------------------- config dumps
CONFIG_YAML = """\
experiment_name: gsm8k-grpo
trial_name: trial0
seed: 1
total_train_epochs: 10
tokenizer_path: ${actor.path}
async_training: true
weight_update_mode: xccl
cluster:
  n_nodes: 1
  n_gpus_per_node: 8
  fileroot: /storage/experiments
  name_resolve:
    type: nfs
    nfs_record_root: /storage/name_resolve
allocation_mode: sglang:d4p1t1+fsdp:d4p1t1
rollout:
  experiment_name: ${experiment_name}
  trial_name: ${trial_name}
  max_concurrent_rollouts: 256
  queue_size: null
  consumer_batch_size: ${train_dataset.batch_size}
  max_head_offpolicyness: 2
  enable_rollout_tracing: false
  request_timeout: 3600
  request_retries: 3
  setup_timeout: 120
  pause_grace_period: 0.0
gconfig:
  n_samples: 4
  min_new_tokens: 0
  max_new_tokens: 1024
  greedy: false
  temperature: 1.0
  top_p: 1.0
  top_k: 100000000
  stop_token_ids: []
actor:
  experiment_name: ${experiment_name}
  trial_name: ${trial_name}
  path: /models/Qwen2.5-7B-Instruct
  init_from_scratch: false
  disable_dropout: true
  gradient_checkpointing: true
  dtype: bfloat16
  mb_spec:
    max_tokens_per_mb: 16384
    n_mbs: 1
    granularity: 1
  optimizer:
    type: adam
    lr: 1.0e-06
    weight_decay: 0.01
    beta1: 0.9
    beta2: 0.999
    eps: 1.0e-08
    min_lr_ratio: 0.0
    lr_scheduler_type: constant
    warmup_steps_proportion: 0.001
    offload: false
    initial_loss_scale: 4294967296.0
    gradient_clipping: 1.0
  backend: fsdp
  group_size: ${gconfig.n_samples}
  ppo_n_minibatches: 1
  eps_clip: 0.4
  c_clip: null
  temperature: ${gconfig.temperature}
  reward_scaling: 10.0
  reward_bias: -0.5
  kl_ctl: 0.0
  discount: 1.0
  gae_lambda: 1.0
  adv_norm:
    mean_level: batch
    std_level: batch
  recompute_logprob: true
  use_decoupled_loss: true
  behav_imp_weight_cap: 5.0
  dynamic_sampling: false
  log_agent_stats: false
  max_new_tokens: ${gconfig.max_new_tokens}
ref:
  path: ${actor.path}
  dtype: ${actor.dtype}
  mb_spec:
    max_tokens_per_mb: 16384
sglang:
  model_path: ${actor.path}
  random_seed: ${seed}
  skip_tokenizer_init: true
  dtype: ${actor.dtype}
  max_running_requests: null
  context_length: 32768
  mem_fraction_static: 0.8
  chunked_prefill_size: 8192
  enable_memory_saver: false
vllm:
  model: ${actor.path}
  seed: ${seed}
  max_model_len: 32768
  gpu_memory_utilization: 0.9
  enable_sleep_mode: false
train_dataset:
  batch_size: 256
  shuffle: true
  pin_memory: true
  num_workers: 4
  path: openai/gsm8k
  type: rl
  max_length: 1024
valid_dataset:
  batch_size: 256
  path: openai/gsm8k
saver:
  freq_epochs: 1
  freq_steps: null
  freq_secs: null
recover:
  mode: disabled
  freq_epochs: 1
  retries: 3
evaluator:
  freq_epochs: 1
stats_logger:
  wandb:
    mode: disabled
  swanlab:
    mode: disabled
  tensorboard:
    path: null
launcher:
  inference_server_cpus_per_gpu: 4
  inference_server_mem_per_gpu: 32768
  trainer_cpus_per_gpu: 4
  trainer_mem_per_gpu: 32768
  trainer_env_vars: ''
"""


def config_lines(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    dataclass_dump = (
        "GRPOConfig(experiment_name='gsm8k-grpo', trial_name='trial0', seed=1, total_train_epochs=10, "
        "async_training=True, weight_update_mode='xccl', gconfig=GenerationHyperparameters(n_samples=4, "
        "max_new_tokens=1024, min_new_tokens=0, max_tokens=65536, greedy=False, top_p=1.0, top_k=100000000, "
        "temperature=1.0, stop_token_ids=[], stop=None, frequency_penalty=0.0), "
        "rollout=InferenceEngineConfig(max_concurrent_rollouts=256, queue_size=None, consumer_batch_size=256, "
        "max_head_offpolicyness=2, enable_rollout_tracing=False, check_trajectory_format=False, "
        "schedule_policy='round_robin', setup_timeout=120.0, request_timeout=3600, request_retries=3, "
        "pause_grace_period=0.0), actor=PPOActorConfig(path='/models/Qwen2.5-7B-Instruct', "
        "gradient_checkpointing=True, dtype='bfloat16', mb_spec=MicroBatchSpec(n_mbs=1, granularity=1, "
        "max_tokens_per_mb=16384), optimizer=OptimizerConfig(type='adam', lr=1e-06, weight_decay=0.01), "
        "eps_clip=0.4, kl_ctl=0.0, recompute_logprob=True, use_decoupled_loss=True))"
    )
    yaml_lines = CONFIG_YAML.splitlines()
    while len(out) < count:
        if rng.random() < 0.15:
            out.append(_areal(rng, rng.randint(0, 60), "RLTrainer", dataclass_dump))
        else:
            out += yaml_lines
    return out[:count]


POOL: dict[str, tuple[Callable[[random.Random, int], list[str]], int]] = {
    "areal_trainer.log": (areal_lines, 2400),
    "sglang_server.log": (sglang_lines, 1600),
    "vllm_server.log": (vllm_lines, 1000),
    "progress_wandb.log": (progress_lines, 600),
    "launch_noise.log": (launch_lines, 900),
    "config_dump.log": (config_lines, 500),
}


def write_pool(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for index, (name, (make, count)) in enumerate(POOL.items()):
        rng = random.Random(20260521 + index)
        path = folder / name
        path.write_text("\n".join(make(rng, count)) + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else DEFAULT
    for path in write_pool(folder):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
