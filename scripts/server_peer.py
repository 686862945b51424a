#!/usr/bin/env python3
"""Feeds a run's prompts to an OpenAI-compatible llama.cpp server and times it: the peer a user
would pick instead of skilleval's engine, given the very same work.

    python3 scripts/server_peer.py PROMPT_LOG http://127.0.0.1:8080

PROMPT_LOG is what `skilleval run --prompt-log FILE` wrote. Each of the run's clients (its
workers) becomes one thread that sends that client's requests in their order, with the same max
tokens, stop strings and sampling, so the server sees the run's concurrency. The server may reuse
its cached prompts (cache_prompt). Prints one JSON line: wall seconds, requests, and the server's
own token counts. Only the standard library, so that it runs wherever the set-up ran.
"""
import json
import sys
import threading
import time
import urllib.request

BOS_MARKERS = ("<bos>", "<|begin_of_text|>")


def body(line):
    prompt = line["prompt"]
    for marker in BOS_MARKERS:
        if prompt.startswith(marker):
            prompt = prompt[len(marker):]
            break
    return {
        "prompt": prompt,
        "max_tokens": line["max_tokens"],
        "stop": line["stop"],
        "temperature": max(line["temperature"], 0.0),
        "top_k": line["top_k"],
        "top_p": line["top_p"],
        "min_p": 0.0,
        "samplers": ["top_k", "top_p", "temperature"],
        "seed": line["seed"],
        "cache_prompt": True,
        "stream": False,
    }


def main():
    log_path, endpoint = sys.argv[1], sys.argv[2].rstrip("/")
    with open(log_path, encoding="utf-8") as f:
        lines = [json.loads(l) for l in f if l.strip()]
    if not lines:
        sys.exit(f"server_peer: {log_path} holds no requests")
    clients = {}
    for line in lines:
        clients.setdefault(line["client"], []).append(line)

    totals = {"prompt_tokens": 0, "cached_tokens": 0, "generated_tokens": 0}
    failures = []
    lock = threading.Lock()

    def serve(requests):
        for line in requests:
            data = json.dumps(body(line)).encode()
            req = urllib.request.Request(
                endpoint + "/v1/completions", data=data, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(req, timeout=600) as answer:
                    reply = json.load(answer)
            except Exception as error:  # the run reports it; one failure spoils the timing
                with lock:
                    failures.append(str(error))
                return
            timings = reply.get("timings", {})
            usage = reply.get("usage", {})
            with lock:
                totals["prompt_tokens"] += usage.get("prompt_tokens", 0)
                totals["cached_tokens"] += timings.get("cache_n", 0)
                totals["generated_tokens"] += usage.get("completion_tokens", 0)

    threads = [threading.Thread(target=serve, args=(reqs,)) for reqs in clients.values()]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    if failures:
        sys.exit(f"server_peer: {len(failures)} request(s) failed, first: {failures[0]}")
    print(
        json.dumps(
            {
                "wall_secs": round(wall, 1),
                "requests": len(lines),
                "clients": len(clients),
                "run_generated_tokens": sum(l["generated_tokens"] for l in lines),
                **totals,
            }
        )
    )


if __name__ == "__main__":
    main()
