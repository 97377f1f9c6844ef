"""Configuration: `[tool.torch2ms]` of the nearest pyproject.toml, overridden by CLI flags."""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .codes import SelectorError, check_selector
from .files import MiB, UnreadableFile, read_regular
from .mappings import check_target_version, parse_version
from .model import DEFAULT_DEVICE, DEVICES

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", "build", "dist",
    "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
    "site-packages", ".torch2ms_cache",
)
DEFAULT_TARGET = "2.10"
_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude", "respect-gitignore", "target-version",
         "device", "per-file-ignores")


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
    extend_select: tuple[str, ...] = ()  # added to select (to every code when select is empty)
    respect_gitignore: bool = True  # skip what .gitignore files exclude when walking folders
    # (glob, codes): codes turned off in the files the glob matches (as ruff's per-file-ignores): the glob is
    # matched against the path relative to the pyproject.toml's folder, and against the file name
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @cached_property
    def version(self) -> tuple[int, ...]:
        return parse_version(self.target_version)

    @cached_property
    def selected(self) -> tuple[str, ...]:
        """select plus extend-select; empty: every code."""
        if not self.extend_select:
            return self.select
        return (self.select or ("TMS",)) + self.extend_select

    def ignored_in(self, path: str) -> tuple[str, ...]:
        """The codes `per-file-ignores` turns off in the file at `path`."""
        if not self.per_file_ignores:
            return ()
        where = os.path.abspath(path)
        root = os.path.dirname(os.path.abspath(self.source)) if self.source else os.getcwd()
        relative = os.path.relpath(where, root).replace(os.sep, "/")
        name = os.path.basename(where)
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(name, pattern) \
                    or fnmatch.fnmatchcase(relative, pattern.rstrip("/") + "/*"):
                out.extend(codes)
        return tuple(out)

    def enabled_in(self, path: str, code: str) -> bool:
        """`enabled`, and not turned off for the file by `per-file-ignores`."""
        return self.enabled(code) and not any(code.startswith(c) for c in self.ignored_in(path))

    def enabled(self, code: str) -> bool:
        """The longest matching prefix of select/ignore decides; no match: on unless select is set."""
        best_len, verdict = -1, not self.selected
        for prefix in self.selected:
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
        return repr((sorted(self.selected), sorted(self.ignore), self.target_version, self.device,
                     self.per_file_ignores, self.source if self.per_file_ignores else None))

    @property
    def dropped_defaults(self) -> tuple[str, ...]:
        """The default excludes that an `exclude` setting left out (it replaces them)."""
        return tuple(name for name in DEFAULT_EXCLUDE if name not in self.excluded_names)

    def with_overrides(self, **values: Any) -> Config:
        return replace(self, **{k: v for k, v in values.items() if v is not None})

    def with_ignored(self, codes: tuple[str, ...] | None) -> Config:
        """`codes` ignored in addition to the configured ones: `--ignore` and an editor's `ignore`
        extend the project's list (as ruff's `--ignore` does), `--select` replaces it."""
        return replace(self, ignore=self.ignore + tuple(c for c in codes if c not in self.ignore)) if codes else self


MAX_PYPROJECT_BYTES = 4 * MiB


def find_pyproject(start: Path) -> Path | None:
    try:
        start = start.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): search from its folder
        start = Path(os.path.abspath(start)).parent
    for folder in [start, *start.parents] if start.is_dir() else [*start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _strings(value: Any, file: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ConfigError(f"{file}: [tool.torch2ms] {key}: expected a list of strings, got the string {value!r} "
                          f"(write {key} = [{value!r}])".replace("'", '"'))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{file}: [tool.torch2ms] {key}: expected a list of strings")
    return tuple(value)


def _codes(value: Any, file: str, key: str) -> tuple[str, ...]:
    out = []
    for item in _strings(value, file, key):
        if not item.strip():
            continue
        try:
            out.append(check_selector(item))
        except SelectorError as exc:
            raise ConfigError(f"{file}: [tool.torch2ms] {key}: {exc}") from None
    return tuple(out)


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    file = str(pyproject)
    if sys.version_info >= (3, 11):  # imported here: a scan that reads no pyproject.toml never needs them
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(read_regular(file, MAX_PYPROJECT_BYTES).decode("utf-8"))
    except UnreadableFile as exc:
        raise ConfigError(f"{file}: cannot read configuration: {exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read configuration: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{file}: cannot read configuration: values nested too deeply") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{file}: [tool]: expected a table, got {_toml_type(tool)}")
    section = tool.get("torch2ms")
    if section is None:
        return Config(source=file)
    if not isinstance(section, dict):
        raise ConfigError(f"{file}: [tool.torch2ms]: expected a table, got {_toml_type(section)}")
    for key in section:
        if key not in _KEYS:
            import difflib

            near = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f" (known keys: {', '.join(_KEYS)})"
            raise ConfigError(f"{file}: [tool.torch2ms]: unknown key {key!r}{hint}")
    config = Config(source=file)
    values: dict[str, Any] = {}
    for key in ("select", "extend-select", "ignore"):
        if key in section:
            values[key.replace("-", "_")] = _codes(section[key], file, key)
    for key in ("exclude", "extend-exclude"):
        if key in section:
            values[key.replace("-", "_")] = _strings(section[key], file, key)
    if "per-file-ignores" in section:
        table = section["per-file-ignores"]
        if not isinstance(table, dict):
            raise ConfigError(f"{file}: [tool.torch2ms] per-file-ignores: expected a table of glob = [codes], "
                              f"got {_toml_type(table)}")
        values["per_file_ignores"] = tuple((str(glob), _codes(codes, file, f"per-file-ignores.{glob}"))
                                           for glob, codes in table.items())
    if "respect-gitignore" in section:
        if not isinstance(section["respect-gitignore"], bool):
            raise ConfigError(f"{file}: [tool.torch2ms] respect-gitignore: expected true or false")
        values["respect_gitignore"] = section["respect-gitignore"]
    if "target-version" in section:
        try:
            values["target_version"] = check_target_version(str(section["target-version"]))
        except ValueError as exc:
            raise ConfigError(f"{file}: [tool.torch2ms] target-version: {exc}") from None
    if "device" in section:
        device = section["device"]
        if not isinstance(device, str) or device.lower() not in DEVICES:
            raise ConfigError(f"{file}: [tool.torch2ms] device: expected one of {', '.join(DEVICES)}, got {device!r}")
        values["device"] = device.lower()
    return replace(config, **values)


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), type(value).__name__)
