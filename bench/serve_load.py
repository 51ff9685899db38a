#!/usr/bin/env python3
"""Load test of `quire-cli serve`: N clients at once, each holding a
multi-turn conversation over streamed chat completions (every turn sends the
whole history, as chat clients do), against one server per N. Reports
requests/s, generated tokens/s, time to first token (p50, p99), the share of
prompt tokens the server took from its cache, and the machine and commit.

  bench/serve_load.py --cli build/release/app/cli/quire-cli --model DIR \
      [--clients 1,4,16] [--turns 4] [--max-tokens 32] --json OUT.json --table OUT.md

Only the Python standard library: the point is the server, not a client
stack."""

import argparse
import http.client
import json
import re
import statistics
import subprocess
import threading
import time

import results_file

QUESTIONS = [
    "Tell me about the sea.",
    "What happened next?",
    "Why do you think so?",
    "Say it again in other words.",
    "And after that?",
    "Finish the story.",
]


def start_server(cli, model, parallel, extra):
    process = subprocess.Popen(
        [cli, "serve", model, "--model-name", "bench", "--port", "0", "--parallel", str(parallel),
         "--max-queue", str(4 * parallel), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        found = re.search(r"on http://([^:]+):(\d+)/v1", line)
        if found:
            # Keep draining the request log so the server never blocks on it.
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, found.group(1), int(found.group(2))
    raise RuntimeError(f"quire-cli serve did not start (exit {process.wait()})")


def stream_turn(host, port, messages, max_tokens, seed):
    """One streamed chat completion: (text, seconds to first text, usage)."""
    body = json.dumps({"model": "bench", "messages": messages, "max_tokens": max_tokens,
                       "temperature": 0.8, "seed": seed, "stream": True,
                       "stream_options": {"include_usage": True}})
    connection = http.client.HTTPConnection(host, port, timeout=600)
    began = time.perf_counter()
    connection.request("POST", "/v1/chat/completions", body,
                       {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:300]!r}")
    text, first, usage = "", None, None
    for raw in response:
        line = raw.decode("utf-8").strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            usage = event["usage"]
        for choice in event.get("choices", []):
            piece = choice.get("delta", {}).get("content") or ""
            if piece and first is None:
                first = time.perf_counter() - began
            text += piece
    connection.close()
    return text, first if first is not None else time.perf_counter() - began, usage


def run_clients(host, port, clients, turns, max_tokens):
    results, errors = [], []
    lock = threading.Lock()

    def client(index):
        messages = [{"role": "system", "content": f"You are storyteller number {index}."}]
        try:
            for turn in range(turns):
                messages.append({"role": "user", "content": QUESTIONS[turn % len(QUESTIONS)]})
                text, ttft, usage = stream_turn(host, port, messages, max_tokens,
                                                seed=1000 * index + turn)
                messages.append({"role": "assistant", "content": text})
                with lock:
                    results.append({"client": index, "turn": turn + 1, "ttft_s": ttft,
                                    "usage": usage})
        except Exception as error:  # reported, and the run counts as failed
            with lock:
                errors.append(f"client {index}: {error}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, errors, time.perf_counter() - began


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def stats(host, port):
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.request("GET", "/v1/quire/stats")
    answer = json.loads(connection.getresponse().read())
    connection.close()
    return answer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=32)
    results_file.add_arguments(parser, commit_required=False)
    parser.add_argument("server_options", nargs="*", help="more options for quire-cli serve")
    args = parser.parse_args()

    rows = []
    for clients in [int(n) for n in args.clients.split(",")]:
        process, host, port = start_server(args.cli, args.model, clients, args.server_options)
        try:
            results, errors, seconds = run_clients(host, port, clients, args.turns,
                                                   args.max_tokens)
            cache = stats(host, port)["cache"]
        finally:
            process.terminate()
            process.wait(timeout=60)
        if errors:
            raise SystemExit("serve_load: " + "; ".join(errors))
        generated = sum(r["usage"]["completion_tokens"] for r in results)
        prompt = sum(r["usage"]["prompt_tokens"] for r in results)
        cached = sum((r["usage"].get("prompt_tokens_details") or {}).get("cached_tokens", 0)
                     for r in results)
        later = [r["ttft_s"] for r in results if r["turn"] > 1]
        ttfts = [r["ttft_s"] for r in results]
        row = {"clients": clients, "requests": len(results), "seconds": seconds,
               "requests_per_s": len(results) / seconds, "generated_tokens": generated,
               "generated_tokens_per_s": generated / seconds, "prompt_tokens": prompt,
               "cached_prompt_tokens": cached, "cached_share": cached / prompt if prompt else 0,
               "ttft_p50_s": statistics.median(ttfts), "ttft_p99_s": percentile(ttfts, 0.99),
               "later_turns_ttft_p50_s": statistics.median(later) if later else None,
               "server_cache": cache, "turns": results}
        rows.append(row)
        print(f"serve_load: {clients} clients: {row['requests_per_s']:.2f} requests/s, "
              f"{row['generated_tokens_per_s']:.1f} tokens/s, first token p50 "
              f"{row['ttft_p50_s'] * 1000:.0f} ms p99 {row['ttft_p99_s'] * 1000:.0f} ms, "
              f"{100 * row['cached_share']:.0f}% of prompt tokens cached", flush=True)

    write_results(args, rows)


def write_results(args, rows):
    results = results_file.stamp(args.commit, results_file.load_average()) | {
        "model": args.model, "turns": args.turns, "max_tokens": args.max_tokens,
        "server_options": args.server_options, "runs": rows}
    lines = [results_file.title("`quire-cli serve` under load", results), "",
             results_file.machine_line(results) + f" Model `{args.model}`; each client holds a "
             f"{args.turns}-turn streamed chat, {args.max_tokens} new tokens a turn, the whole "
             "history sent every turn; `--parallel` equal to the clients.", "",
             "| clients | requests/s | generated tokens/s | first token p50 | p99 "
             "| later turns p50 | prompt tokens from cache |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        later = row["later_turns_ttft_p50_s"]
        later_text = f"{later * 1000:.0f} ms" if later is not None else "-"
        lines.append(f"| {row['clients']} | {row['requests_per_s']:.2f} | "
                     f"{row['generated_tokens_per_s']:.1f} | {row['ttft_p50_s'] * 1000:.0f} ms | "
                     f"{row['ttft_p99_s'] * 1000:.0f} ms | {later_text} | "
                     f"{100 * row['cached_share']:.0f}% |")
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
