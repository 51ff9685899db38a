#!/usr/bin/env python3
"""Reference figures on the GPU that `quire-cli bench` ran on, printed as JSON.

- the device's copy bandwidth (a device-to-device copy, read and write
  counted) and its dense FP16 matrix rate on random data, through PyTorch:
  the ceilings that decode and prefill are measured against;
- transformers' greedy decode of the same FP16 model directory with a static
  KV cache (eager mode: compiling an 8B model takes minutes), tokens per
  second at each context length, from the difference of two generate() calls
  that share the prompt (so prefill cancels out).

Usage: transformers_decode.py MODEL_DIR [--contexts 512,4096] [--tokens 64]
"""

import argparse
import json
import time

import torch


def copy_bandwidth(gigabytes=1):
    count = gigabytes << 30
    source = torch.empty(count, dtype=torch.uint8, device="cuda").random_(0, 255)
    target = torch.empty_like(source)
    target.copy_(source)
    torch.cuda.synchronize()
    best = 0.0
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        target.copy_(source)
        end.record()
        end.synchronize()
        best = max(best, 2 * count / (start.elapsed_time(end) / 1e3))
    return best


def matmul_rate(rows, inner, cols):
    a = torch.randn(rows, inner, dtype=torch.float16, device="cuda")
    b = torch.randn(inner, cols, dtype=torch.float16, device="cuda")
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    return rows * inner * cols / times[len(times) // 2]


def timed_generate(model, prompt, new_tokens):
    torch.cuda.synchronize()
    start = time.perf_counter()
    model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                   do_sample=False, cache_implementation="static", pad_token_id=0)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--contexts", default="512,4096")
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()

    import transformers
    from transformers import AutoModelForCausalLM

    out = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "copy_bandwidth_gb_s": copy_bandwidth() / 1e9,
    }
    config = json.load(open(f"{args.model}/config.json"))
    hidden, intermediate = config["hidden_size"], config["intermediate_size"]
    out["matmul"] = {"rows": 2048, "in": hidden, "out": intermediate,
                     "multiply_adds_per_s": matmul_rate(2048, hidden, intermediate)}

    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float16).to("cuda")
    model.eval()
    vocab = config["vocab_size"]
    generator = torch.Generator().manual_seed(5)
    decode = []
    with torch.inference_mode():
        for context in [int(c) for c in args.contexts.split(",")]:
            prompt = torch.randint(3, vocab, (1, context), generator=generator).to("cuda")
            timed_generate(model, prompt, 2)  # warm-up: kernels, cache allocation
            rates = []
            for _ in range(2):
                short = timed_generate(model, prompt, 1)
                long = timed_generate(model, prompt, args.tokens + 1)
                rates.append(args.tokens / (long - short))
            rates.sort()
            decode.append({"context": context, "tokens_per_s": rates[-1],
                           "runs_tokens_per_s": rates})
    out["transformers_static_cache_decode"] = decode
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
