"""Configuration: `[tool.torch2ms]` of the nearest pyproject.toml, overridden by CLI flags."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .mappings import parse_version
from .model import DEFAULT_DEVICE, DEVICES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", "build", "dist",
    "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
    "site-packages", ".torch2ms_cache",
)
DEFAULT_TARGET = "2.10"
_KEYS = {"select", "ignore", "exclude", "extend-exclude", "target-version", "device"}


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()  # empty: every code
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    target_version: str = DEFAULT_TARGET
    device: str = DEFAULT_DEVICE  # where the MindSpore program runs: the form written is the one for it
    source: str | None = None  # the pyproject.toml the settings came from

    @cached_property
    def version(self) -> tuple[int, ...]:
        return parse_version(self.target_version)

    def enabled(self, code: str) -> bool:
        """The longest matching prefix of select/ignore decides; no match: on unless select is set."""
        best_len, verdict = -1, not self.select
        for prefix in self.select:
            if code.startswith(prefix) and len(prefix) > best_len:
                best_len, verdict = len(prefix), True
        for prefix in self.ignore:
            if code.startswith(prefix) and len(prefix) >= best_len:
                best_len, verdict = len(prefix), False
        return verdict

    @property
    def excluded_names(self) -> tuple[str, ...]:
        return self.exclude + self.extend_exclude

    def key(self) -> str:
        """A stable text of everything that changes results (for caches)."""
        return repr((sorted(self.select), sorted(self.ignore), self.target_version, self.device))

    def with_overrides(self, **values: Any) -> Config:
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [*start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _codes(value: Any, file: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{file}: [tool.torch2ms] {key}: expected a list of strings")
    return tuple(v.strip().upper() for v in value if v.strip())


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read configuration: {exc}") from None
    section = data.get("tool", {}).get("torch2ms")
    if section is None:
        return Config(source=str(pyproject))
    file = str(pyproject)
    unknown = set(section) - _KEYS
    if unknown:
        raise ConfigError(f"{file}: [tool.torch2ms]: unknown key(s) {', '.join(sorted(unknown))}")
    config = Config(source=file)
    values: dict[str, Any] = {}
    if "select" in section:
        values["select"] = _codes(section["select"], file, "select")
    if "ignore" in section:
        values["ignore"] = _codes(section["ignore"], file, "ignore")
    for key, attr in (("exclude", "exclude"), ("extend-exclude", "extend_exclude")):
        if key in section:
            value = section[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{file}: [tool.torch2ms] {key}: expected a list of strings")
            values[attr] = tuple(value)
    if "target-version" in section:
        try:
            parse_version(str(section["target-version"]))
        except ValueError as exc:
            raise ConfigError(f"{file}: [tool.torch2ms] target-version: {exc}") from None
        values["target_version"] = str(section["target-version"])
    if "device" in section:
        device = section["device"]
        if not isinstance(device, str) or device.lower() not in DEVICES:
            raise ConfigError(f"{file}: [tool.torch2ms] device: expected one of {', '.join(DEVICES)}, got {device!r}")
        values["device"] = device.lower()
    return replace(config, **values)
