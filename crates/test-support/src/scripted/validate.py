"""Validates request bodies with the official SDKs' request types.

Run as `python validate.py anthropic|gemini`; reads one JSON body per line on
stdin and answers one line per body: `ok` or `invalid: <reason>`. Used by the
scripted model servers so that a client cannot agree with its own mistakes.
"""

import json
import sys
import typing_extensions

from pydantic import ConfigDict, TypeAdapter


def anthropic_checker():
    import anthropic.types as at
    import anthropic.types.message_create_params as mcp

    # The SDK's params are TypedDicts, which pydantic lets carry unknown keys:
    # forbid them everywhere, so a misspelt field is an error.
    forbid = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    for module in (at, mcp):
        for value in vars(module).values():
            if isinstance(value, type) and typing_extensions.is_typeddict(value):
                value.__pydantic_config__ = forbid
    adapter = TypeAdapter(mcp.MessageCreateParamsStreaming)

    def force(value):
        # `Iterable[...]` fields validate lazily: iterate them so every item is checked.
        if isinstance(value, dict):
            for item in value.values():
                force(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                force(item)
        elif hasattr(value, "__next__"):
            for item in value:
                force(item)

    def check(body):
        force(adapter.validate_python(body))
        if body.get("stream") is not True:
            raise ValueError("stream must be true")

    return check


def gemini_checker():
    from google.genai import types

    parts = {
        "contents": TypeAdapter(list[types.Content]),
        "systemInstruction": TypeAdapter(types.Content),
        "tools": TypeAdapter(list[types.Tool]),
        "toolConfig": TypeAdapter(types.ToolConfig),
        "generationConfig": TypeAdapter(types.GenerationConfig),
        "safetySettings": TypeAdapter(list[types.SafetySetting]),
    }

    def check(body):
        unknown = set(body) - set(parts)
        if unknown:
            raise ValueError(f"unknown top-level fields {sorted(unknown)}")
        if not body.get("contents"):
            raise ValueError("contents is missing or empty")
        for key, value in body.items():
            parts[key].validate_python(value)

    return check


def main():
    check = {"anthropic": anthropic_checker, "gemini": gemini_checker}[sys.argv[1]]()
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            check(json.loads(line))
            answer = "ok"
        except Exception as e:  # noqa: BLE001 - every failure is reported to the test
            answer = "invalid: " + " ".join(str(e).split())[:2000]
        print(answer, flush=True)


if __name__ == "__main__":
    main()
