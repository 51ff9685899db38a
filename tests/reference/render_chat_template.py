#!/usr/bin/env python3
"""Renders a chat template the way Hugging Face transformers does.

Reads one request, or a JSON array of requests, on standard input:

    {"template": "...",
     "context": {"messages": [...], "add_generation_prompt": true,
                 "bos_token": "<s>", ...any other variables...},
     "now": "2026-11-25T12:00:00"}

and prints one result, or an array of results in the same order:

    {"ok": true, "text": "..."}   or   {"ok": false, "error": "...", "error_type": "..."}

The environment is the one transformers' apply_chat_template builds: an
immutable sandbox with trim_blocks and lstrip_blocks, the loop-controls
extension, a tojson filter that does not escape HTML and keeps non-ASCII
characters, and the globals raise_exception and strftime_now. strftime_now
formats the request's "now" (default 2026-01-01T00:00:00) rather than the
clock, so that the output is the same on every run.
"""

import datetime
import json
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

DEFAULT_NOW = "2026-01-01T00:00:00"


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # Jinja's own tojson escapes <, >, & and ' for HTML; chat templates need
    # the JSON text as Python's json module writes it.
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def make_environment(now):
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = lambda format: now.strftime(format)
    return environment


def render(request):
    try:
        if not isinstance(request, dict) or not isinstance(request.get("template"), str):
            raise ValueError('a request is an object with a "template" string')
        context = request.get("context", {})
        if not isinstance(context, dict):
            raise ValueError('"context" must be an object')
        now = datetime.datetime.fromisoformat(request.get("now", DEFAULT_NOW))
        template = make_environment(now).from_string(request["template"])
        return {"ok": True, "text": template.render(**context)}
    except Exception as error:  # every failure is an answer, not a crash
        return {"ok": False, "error": str(error), "error_type": type(error).__name__}


def main():
    try:
        requests = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        print(f"render_chat_template.py: standard input is not JSON: {error}", file=sys.stderr)
        return 1
    if isinstance(requests, list):
        results = [render(request) for request in requests]
    else:
        results = render(requests)
    # ASCII output with \u escapes reads the same whatever the locale.
    sys.stdout.write(json.dumps(results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
