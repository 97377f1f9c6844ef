"""Inputs for fuzzing: real files to start from and the mutators applied to them.

Every mutator is deterministic given its `random.Random`, so a failing input can
be reproduced from the seed printed by the campaign (and the input itself is saved).
"""

from __future__ import annotations

import importlib.util
import io
import keyword
import random
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Names a mutation may swap in: torch spellings the resolver cares about.
TORCH_WORDS = (
    "torch", "nn", "F", "functional", "Tensor", "Module", "forward", "self", "optim", "cuda", "to",
    "zeros", "ones", "nonzero", "clamp", "softmax", "view", "reshape", "Linear", "Conv2d", "backward",
    "step", "zero_grad", "no_grad", "register_buffer", "state_dict", "autocast", "DataLoader", "Dataset",
    "manual_seed", "parameters", "th", "x", "y", "import", "from", "as", "lambda", "class", "def",
)


# ---------------------------------------------------------------- sources
def example_files() -> list[Path]:
    """The example project's Python files (small, real, torch-heavy)."""
    return sorted((ROOT / "examples").rglob("*.py"))


def torch_source_dir() -> Path | None:
    """Where the installed torch's sources are, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def torch_files(count: int, rng: random.Random, max_bytes: int = 120_000) -> list[Path]:
    """A sample of `count` .py files of the installed torch (none when torch is not installed)."""
    root = torch_source_dir()
    if root is None:
        return []
    files = sorted(p for p in root.rglob("*.py") if 0 < p.stat().st_size <= max_bytes)
    return rng.sample(files, min(count, len(files)))


def read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


# ---------------------------------------------------------------- token boundaries
def _line_starts(text: str) -> list[int]:
    """Offsets of the lines as tokenize's readline sees them (split after each \\n)."""
    starts = [0]
    for match in re.finditer("\n", text):
        starts.append(match.end())
    return starts


def token_boundaries(text: str) -> list[int]:
    """Sorted offsets where a token starts or ends; whitespace boundaries where tokenizing fails."""
    starts = _line_starts(text)
    found: set[int] = {0, len(text)}

    def offset(row: int, col: int) -> int | None:
        if 1 <= row <= len(starts):
            return min(starts[row - 1] + col, len(text))
        return None

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            for row, col in (tok.start, tok.end):
                pos = offset(row, col)
                if pos is not None:
                    found.add(pos)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        found.update(m.start() for m in re.finditer(r"(?<=\S)\s|\s(?=\S)", text))
    return sorted(found)


def truncations(text: str, limit: int | None = None, rng: random.Random | None = None) -> Iterator[str]:
    """The text cut at every token boundary (or at `limit` of them, sampled with `rng`)."""
    cuts = token_boundaries(text)
    if limit is not None and len(cuts) > limit:
        cuts = sorted((rng or random.Random(0)).sample(cuts, limit))
    for cut in cuts:
        yield text[:cut]


def token_deletions(text: str, count: int, rng: random.Random) -> Iterator[str]:
    """The text with one token-to-token stretch removed, `count` times."""
    cuts = token_boundaries(text)
    if len(cuts) < 2:
        return
    for _ in range(count):
        i = rng.randrange(len(cuts) - 1)
        j = min(len(cuts) - 1, i + 1 + rng.randrange(3))
        yield text[:cuts[i]] + text[cuts[j]:]


# ---------------------------------------------------------------- byte and text mutators
def flip_bytes(data: bytes, rng: random.Random, flips: int = 3) -> bytes:
    """Flip a random bit, or write a random byte, at `flips` random places."""
    if not data:
        return bytes([rng.randrange(256)])
    out = bytearray(data)
    for _ in range(flips):
        i = rng.randrange(len(out))
        if rng.random() < 0.5:
            out[i] ^= 1 << rng.randrange(8)
        else:
            out[i] = rng.randrange(256)
    return bytes(out)


def mixed_line_endings(text: str, rng: random.Random) -> str:
    """Each line break becomes \\n, \\r\\n or \\r at random (and now and then a form feed)."""
    parts = text.split("\n")
    out = [parts[0]]
    for part in parts[1:]:
        if out[-1].endswith("\r") or (not out[-1] and len(out) > 1 and out[-2] == "\r"):
            ending = rng.choice(("\r", "\x0c\n"))  # "\r" + "\n" would merge two breaks into one
        else:
            ending = rng.choice(("\n", "\r\n", "\r", "\n", "\x0c\n"))
        out.append(ending)
        out.append(part)
    return "".join(out)


def swap_names(text: str, rng: random.Random, rate: float = 0.2) -> str:
    """Replace some identifiers with torch spellings (keeps the token structure)."""
    def repl(match: re.Match[str]) -> str:
        word = match.group(0)
        if keyword.iskeyword(word) or rng.random() > rate:
            return word
        return rng.choice(TORCH_WORDS)

    return re.sub(r"\b[A-Za-z_]\w*\b", repl, text)


_SPLICES = ("(", ")", "[", "]", "{", "}", ":", "\n", "    ", "\t", "\\\n", "'", '"', '"""', "#", "@",
            "lambda", " if ", " else ", "async ", "await ", "yield ", "*", "**", "=", ":=", ",", ".",
            "torch.", "nn.Module", "F.relu(", "\ufeff", "\u00e9", "\U0001f600", "\x00", "\u2028", "\r")


def splice(text: str, rng: random.Random, count: int = 2) -> str:
    """Insert syntax-ish fragments at random places."""
    for _ in range(count):
        i = rng.randrange(len(text) + 1)
        text = text[:i] + rng.choice(_SPLICES) + text[i:]
    return text


def mutate_text(text: str, rng: random.Random) -> str:
    """One random text mutation (truncation, deletion, splice, swap, line endings, duplication)."""
    kind = rng.randrange(7)
    if kind == 0 and text:
        return text[:rng.randrange(len(text))]
    if kind == 1:
        return next(token_deletions(text, 1, rng), text)
    if kind == 2:
        return splice(text, rng, rng.randint(1, 4))
    if kind == 3:
        return swap_names(text, rng)
    if kind == 4:
        return mixed_line_endings(text, rng)
    if kind == 5 and text:
        i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        return text[:j] + text[i:j] + text[j:]
    return splice(swap_names(text, rng, 0.05), rng, 1)


# ---------------------------------------------------------------- generated extremes
HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def long_line(terms: int) -> str:
    """One very long physical line: many statements joined by ';'."""
    return HEADER + "; ".join(f"x{i} = torch.zeros({i})" for i in range(terms)) + "\n"


def long_string_line(chars: int) -> str:
    return HEADER + "s = '" + "a" * chars + "'; y = torch.ones(1)\n"


def deep_nesting(kind: str, depth: int) -> str:
    """An expression or block nested `depth` deep; `kind` picks the construct."""
    if kind == "parens":
        body = "x = " + "(" * depth + "torch.zeros(1)" + ")" * depth
    elif kind == "calls":
        body = "x = " + "torch.abs(" * depth + "y" + ")" * depth
    elif kind == "lists":
        body = "x = " + "[" * depth + "torch.zeros(1)" + "]" * depth
    elif kind == "binop":
        body = "x = " + " + ".join(["torch.zeros(1)"] * depth)
    elif kind == "unary":
        body = "x = " + "-" * depth + "torch.zeros(1)"
    elif kind == "attr":
        body = "x = torch" + ".T" * depth
    elif kind == "subscript":
        body = "x = torch.zeros(1)" + "[0]" * depth
    elif kind == "method":
        body = "x = torch.zeros(1)" + ".abs()" * depth
    elif kind == "lambda":
        body = "f = " + "lambda: " * depth + "torch.zeros(1)"
    elif kind == "ifexp":
        body = "x = " + "torch.zeros(1) if c else " * depth + "torch.ones(1)"
    elif kind == "blocks":
        body = "".join("    " * i + "if c:\n" for i in range(depth)) + "    " * depth + "x = torch.zeros(1)"
    elif kind == "defs":
        body = "".join("    " * i + f"def f{i}(x):\n" for i in range(depth)) + "    " * depth + "return torch.abs(x)"
    elif kind == "classes":
        body = "".join("    " * i + f"class C{i}(nn.Module):\n" for i in range(depth)) + "    " * depth + "pass"
    elif kind == "comprehension":
        body = "x = " + "[" * depth + "torch.zeros(1)" + "".join(f" for a{i} in r]" for i in range(depth))
    elif kind == "dicts":
        body = "x = " + "{'k': " * depth + "torch.zeros(1)" + "}" * depth
    else:
        raise ValueError(f"unknown nesting kind {kind!r}")
    return HEADER + body + "\n"


NESTING_KINDS = ("parens", "calls", "lists", "binop", "unary", "attr", "subscript", "method", "lambda",
                 "ifexp", "blocks", "defs", "classes", "comprehension", "dicts")


def huge_file(seed_text: str, min_lines: int) -> str:
    """`seed_text` repeated (with numbered names) until it has at least `min_lines` lines."""
    lines = seed_text.count("\n") or 1
    copies = max(1, -(-min_lines // lines))
    return "".join(seed_text.replace("def ", f"def v{i}_") for i in range(copies))
