"""Regenerates the chat-template and float-repr goldens next to this script, using Jinja2 and CPython as the
reference (not qlab's code).

Jinja2 is configured as transformers' apply_chat_template configures it: an immutable sandboxed environment with
trim_blocks and lstrip_blocks, the loopcontrols extension, and `tojson` = json.dumps(ensure_ascii=False).

    python3 make_reference_cases.py /path/to/fixtures/oracle/chat/qwen2.5_chat_template.jinja
"""
import json
import random
import struct
import sys
from pathlib import Path

from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = Path(__file__).parent


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise ValueError(message)


WEATHER = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}}}
CONVERT = {"type": "function", "function": {
    "name": "convert", "description": "Währung umrechnen — «quoted» \"text\"\twith tab",
    "parameters": {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0.0, "default": 1e-05},
                                                   "big": {"type": "integer", "maximum": 12345678901234567890},
                                                   "flags": {"type": "array", "items": [True, False, None]}}}}}

CASES = [
    ("tool_call_round_trip", [
        {"role": "user", "content": "What's the weather in Paris and Tokyo?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "get_current_weather", "arguments": {"location": "Paris"}}},
            {"type": "function", "function": {"name": "get_current_weather",
                                              "arguments": {"location": "東京", "unit": "celsius"}}}]},
        {"role": "tool", "content": "{\"temperature\": 21.5}"},
        {"role": "tool", "content": "18 °C, cloudy"},
        {"role": "assistant", "content": "Paris 21.5 °C, Tokyo 18 °C."},
        {"role": "user", "content": "Thanks!"}], [WEATHER], True),
    ("tool_call_with_content_and_odd_arguments", [
        {"role": "system", "content": "Use tools when needed."},
        {"role": "user", "content": "Convert"},
        {"role": "assistant", "content": "Let me convert that.", "tool_calls": [
            {"function": {"name": "convert", "arguments": {
                "amount": 1.0, "small": 1e-05, "edge": 0.0001, "large": 1e16, "below": 1e15, "neg": -0.0,
                "third": 1 / 3, "int": 123456789012345678, "text": "line\nbreak \"q\" back\\slash \u0001 \u007f \u2028 😀",
                "nested": {"list": [1, 2.5, None, True], "empty": {}, "none": []}}}}]},
        {"role": "tool", "content": "ok"}], [WEATHER, CONVERT], True),
    ("tool_call_string_arguments_and_no_function_wrapper", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"name": "get_current_weather", "arguments": "{\"location\": \"Paris\"}"}]},
        {"role": "tool", "content": "sunny"}], [WEATHER], False),
    ("later_system_and_unknown_role", [
        {"role": "user", "content": "a"},
        {"role": "system", "content": "Now answer in French."},
        {"role": "developer", "content": "ignored by the template"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": ""}], None, True),
    ("tool_message_first", [
        {"role": "tool", "content": "result"},
        {"role": "user", "content": "explain"}], None, True),
    ("system_first_with_tools", [
        {"role": "system", "content": "Custom system."},
        {"role": "user", "content": "Weather?"}], [WEATHER], True),
    ("only_system", [
        {"role": "system", "content": "Just a system prompt."}], None, False),
]


def main():
    template_text = Path(sys.argv[1]).read_text(encoding="utf-8")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(template_text)
    with open(HERE / "jinja_cases.jsonl", "w", encoding="utf-8") as out:
        for name, messages, tools, add_generation_prompt in CASES:
            text = template.render(messages=messages, tools=tools, add_generation_prompt=add_generation_prompt)
            out.write(json.dumps({"name": name, "messages": messages, "tools": tools,
                                  "add_generation_prompt": add_generation_prompt, "expected_text": text},
                                 ensure_ascii=False) + "\n")

    rng = random.Random(20261130)
    values = [0.0, -0.0, 1.0, 0.1, 1 / 3, 100.0, 123456.789, 1e15, 1e16, 9999999999999998.0, 1e22, 0.0001, 0.00001,
              5e-324, 1.7976931348623157e308, 2.5e-05, 1234567890123456.7, 0.30000000000000004]
    while len(values) < 3000:
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if value == value and abs(value) != float("inf"):
            values.append(value)
    for exponent in range(-30, 31):
        values.append(rng.random() * 10.0 ** exponent)
    # Subnormals, where one-digit shortest forms (5e-324, 1e-323) are common.
    for bits in list(range(1, 40)) + [rng.getrandbits(52) for _ in range(200)] + [rng.getrandbits(12) for _ in range(100)]:
        values.append(struct.unpack("<d", struct.pack("<Q", bits))[0])
    with open(HERE / "python_float_repr.tsv", "w", encoding="utf-8") as out:
        for value in values:
            out.write("%016x\t%s\n" % (struct.unpack("<Q", struct.pack("<d", value))[0], json.dumps(value)))


if __name__ == "__main__":
    main()
