"""Renders chat templates exactly as transformers' apply_chat_template does (tokenize=False):
the environment, filters and globals of transformers.utils.chat_template_utils, with jinja2.
The tests compare skilleval's own rendering against it byte for byte.

stdin: {"template": str, "bos_token": str, "eos_token": str, "now": seconds since 1970 (UTC),
        "renders": [{"messages": [...], "tools": [...] or null, "add_generation_prompt": bool}]}
stdout: one JSON list, per render {"text": str} or {"error": str} (the template raised).
"""

import json
import sys
from datetime import datetime, timezone

import jinja2
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class AssistantTracker(Extension):
    # transformers' {% generation %} block; only marks what is inside, so it renders as is.
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def compile_template(source, now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.fromtimestamp(now, tz=timezone.utc).strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def main():
    request = json.load(sys.stdin)
    template = compile_template(request["template"], request["now"])
    out = []
    for render in request["renders"]:
        try:
            text = template.render(
                messages=render["messages"],
                tools=render.get("tools"),
                documents=None,
                add_generation_prompt=render["add_generation_prompt"],
                bos_token=request["bos_token"],
                eos_token=request["eos_token"],
            )
            out.append({"text": text})
        except Exception as error:  # a raise_exception, or a Python error such as str + list
            out.append({"error": str(error)})
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
