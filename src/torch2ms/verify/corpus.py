"""Usage programs through ``--fix``, run in torch and in MindSpore, each given one verdict.

A corpus file holds several programs, each starting at a line ``# %% NAME``; a program is a
self-contained module (its own imports) that builds seeded NumPy data and its layers at top
level and returns its result from ``run()``. For every program:

1. the program is rewritten by the fix engine (`torch2ms.fix.fix_text`, safe and unsafe fixes:
   what ``torch2ms scan --fix --unsafe-fixes`` writes), or, `through` ``migrate``, by the whole port
   (`torch2ms.migrate.pipeline.migrate_text`: what ``torch2ms migrate`` writes, training steps included);
2. the original runs in a torch worker, which also saves the parameters of its top-level layers;
3. a rewritten program that still imports torch is not run: its verdict names the torch uses
   the scan of the rewritten text still reports;
4. otherwise it runs in a MindSpore worker where ``import torch`` fails, after the torch layers'
   parameters are copied into its top-level Cells (by name, as `torch2ms verify` does);
5. the two results are compared like verify examples (structure, shape, dtype, values). A program
   that raised in MindSpore runs once more in fresh workers (an earlier program may have left
   MindSpore in a bad state), and counts as raising only if it raises again.

Verdicts: `SAME`, `RAISES` (the rewritten program raised; the cause names the error class, and
"no CPU kernel" when MindSpore has no kernel for the op on this CPU), `IMPORTS_TORCH`, `DIFFERENT`
(it ran and computed something else, silently), and two that mean the corpus or the tool is
broken: `TORCH_FAILED` (the torch program itself did not run) and `FIX_FAILED` (the rewrite raised).
Workers: `torch2ms.verify.program_worker` in `torch2ms.verify.pool.Pool` (time and memory limits,
crashes contained).
"""

from __future__ import annotations

import ast
import json
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config
from ..fix import FixError, fix_text
from ..mappings import MappingTable, load_table
from ..model import FileResult
from .compare import Outcome, compare, plain_from_json
from ..transforms.support import MODULE as SUPPORT_MODULE, imported_support
from .pool import Pool
from .program_worker import BLOCKED

PROGRAM_WORKER = "torch2ms.verify.program_worker"

SAME = "same result"
RAISES = "raises"
IMPORTS_TORCH = "still imports torch"
DIFFERENT = "SILENTLY DIFFERENT"
TORCH_FAILED = "torch program failed"
FIX_FAILED = "fix failed"
VERDICTS = (SAME, RAISES, IMPORTS_TORCH, DIFFERENT, TORCH_FAILED, FIX_FAILED)

_HEADER = re.compile(r"^# %% (?P<name>[A-Za-z0-9_.-]+)[ \t]*$", re.M)


@dataclass(frozen=True)
class Program:
    ident: str  # "topic/name"
    source: str
    path: str
    line: int  # of the program's first line in its corpus file

    @property
    def topic(self) -> str:
        return self.ident.partition("/")[0]


@dataclass
class Verdict:
    program: Program
    verdict: str
    cause: str = ""  # what the failures are grouped by
    detail: str = ""
    fixed: str = ""
    torch_uses: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    max_abs_err: float = 0.0


def split_programs(text: str, path: str, topic: str) -> list[Program]:
    """The programs of one corpus file, each from its ``# %% NAME`` line to the next."""
    heads = list(_HEADER.finditer(text))
    out = []
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = text[head.end():end].lstrip("\n")
        line = text.count("\n", 0, head.end()) + 2
        out.append(Program(f"{topic}/{head.group('name')}", body, path, line))
    return out


def load_corpus(root: str | Path) -> list[Program]:
    """Every program of the ``*.py`` corpus files under `root`; names must be unique."""
    programs: list[Program] = []
    seen: set[str] = set()
    for path in sorted(Path(root).glob("*.py")):
        for program in split_programs(path.read_text(encoding="utf-8"), str(path), path.stem):
            if program.ident in seen:
                raise ValueError(f"{path}:{program.line}: program {program.ident} is defined twice")
            seen.add(program.ident)
            programs.append(program)
    return programs


def imports_torch(text: str) -> list[str]:
    """The import statements of `text` (anywhere in it) that load torch or a torch library."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(n.split(".")[0] in BLOCKED for n in names):
            out.append(ast.unparse(node))
    return out


def _uses_left(outcome_result: Any, imports: list[str]) -> list[str]:
    """What keeps torch in a rewritten program: the torch APIs its scan still reports, else the imports."""
    uses: list[str] = []
    if outcome_result is not None:
        for diag in outcome_result.diagnostics:
            if diag.torch_api and not diag.code.startswith("TMS2"):
                item = f"{diag.torch_api} ({diag.code})"
                if item not in uses:
                    uses.append(item)
    return uses or [f"{line} (kept)" for line in imports]


FIX, MIGRATE = "fix", "migrate"  # what rewrites a program: `scan --fix --unsafe-fixes`, or `migrate`
REWRITERS = (FIX, MIGRATE)


def fix_program(program: Program, config: Config, table: MappingTable, through: str = FIX
                ) -> Verdict | tuple[str, list[str], list[str]]:
    """The rewritten text, the imports of torch it keeps and the torch uses left; or a FIX_FAILED verdict."""
    result: FileResult | None
    if through == MIGRATE:
        from ..migrate.pipeline import MigrateError, Options, migrate_text

        try:
            migration = migrate_text(program.source, program.path, Options(config=config), table=table)
        except MigrateError as exc:
            return Verdict(program, FIX_FAILED, "migrate raised MigrateError", str(exc))
        text, result = migration.text, migration.result
    else:
        try:
            outcome = fix_text(program.source, program.path, config, unsafe=True, table=table)
        except FixError as exc:
            return Verdict(program, FIX_FAILED, "the fix raised FixError", str(exc))
        text, result = outcome.text, outcome.result
    imports = imports_torch(text)
    return text, imports, _uses_left(result, imports) if imports else []


def _result_value(result: dict[str, Any]) -> Any:
    import numpy as np

    with np.load(result["arrays"], allow_pickle=False) as data:
        return plain_from_json(result["result"], {key: data[key] for key in data.files})


def _failure(result: dict[str, Any]) -> tuple[str, str]:
    """(cause, detail) of a worker result that is not ok."""
    status = result.get("status")
    if status == "raised":
        error = str(result.get("error"))
        message = str(result.get("message") or "")
        if result.get("kernel"):
            return f"no CPU kernel ({result['kernel']})", f"{error}: {message}"
        return error, f"{error} ({result.get('stage')}): {message}"
    if status == "timeout":
        return "timed out", "the program ran past its time limit"
    return "worker failed", str(result.get("reason") or status)


def compare_results(torch_result: dict[str, Any], ms_result: dict[str, Any]) -> Outcome:
    return compare(_result_value(torch_result), _result_value(ms_result), where="run()")


def run_corpus(programs: Iterable[Program], jobs: int = 2, timeout: float = 60.0, memory_mb: int = 4096,
               config: Config | None = None, table: MappingTable | None = None,
               progress: Callable[[str], None] | None = None, through: str = FIX) -> list[Verdict]:
    """Rewrite (`through`: FIX or MIGRATE), run and compare every program; one verdict each, in order."""
    if through not in REWRITERS:
        raise ValueError(f"unknown rewriter {through!r}: one of {', '.join(REWRITERS)}")
    config = config or Config()
    table = table or load_table()
    programs = list(programs)
    verdicts: dict[int, Verdict] = {}
    fixed: dict[int, str] = {}
    for k, program in enumerate(programs):
        found = fix_program(program, config, table, through)
        if isinstance(found, Verdict):
            verdicts[k] = found
            continue
        text, imports, uses = found
        fixed[k] = text
        if imports:
            verdicts[k] = Verdict(program, IMPORTS_TORCH, uses[0] if uses else "import kept", "; ".join(uses),
                                  text, uses)
    with tempfile.TemporaryDirectory(prefix="torch2ms-corpus-") as tmp:
        def specs(side: str, indices: list[int], texts: dict[int, str],
                  extra: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
            out = Path(tmp, side)  # each side its own files
            out.mkdir(exist_ok=True)
            return [dict({"id": f"p{k}", "source": texts[k], "filename": programs[k].path + f":{programs[k].line}",
                          "timeout": timeout, "out": str(out)}, **extra.get(k, {})) for k in indices]

        todo = [k for k in range(len(programs)) if k not in verdicts or verdicts[k].verdict == IMPORTS_TORCH]
        if progress:
            progress(f"torch: {len(todo)} programs")
        with Pool(jobs=jobs, timeout=timeout, memory_mb=memory_mb, worker=PROGRAM_WORKER, worker_args=("--side", "torch")) as pool:
            torch_results = dict(zip(todo, pool.run(specs("torch", todo, {k: programs[k].source for k in todo}, {}))))
        for k in todo:
            result = torch_results[k]
            if result.get("status") != "ok":
                cause, detail = _failure(result)
                verdicts[k] = Verdict(programs[k], TORCH_FAILED, cause, detail, fixed.get(k, ""))
        runnable = [k for k in todo if k not in verdicts]
        weights: dict[int, dict[str, Any]] = {
            k: {"weights": torch_results[k]["weights"]} for k in runnable if torch_results[k].get("weights")}
        supported = [k for k in runnable if imported_support(fixed[k])]
        if supported:  # the support module migrate writes beside a port that uses it
            from ..migrate.support import module_text

            folder = Path(tmp, "modules")
            folder.mkdir()
            (folder / f"{SUPPORT_MODULE}.py").write_text(module_text(table, config.version, config.device),
                                                        encoding="utf-8")
            for k in supported:
                weights.setdefault(k, {})["modules"] = str(folder)
        if progress:
            progress(f"MindSpore: {len(runnable)} programs")
        with Pool(jobs=jobs, timeout=timeout, memory_mb=memory_mb, worker=PROGRAM_WORKER, worker_args=("--side", "mindspore")) as pool:
            ms_results = dict(zip(runnable, pool.run(specs("mindspore", runnable, fixed, weights))))
        # A worker runs many programs: one may fail because of what an earlier one left behind in
        # MindSpore (a kernel in a bad state). A program that raised runs once more in fresh workers.
        again = [k for k in runnable if ms_results[k].get("status") != "ok"]
        if again:
            if progress:
                progress(f"MindSpore, once more in fresh workers: {len(again)} programs")
            with Pool(jobs=jobs, timeout=timeout, memory_mb=memory_mb, worker=PROGRAM_WORKER, worker_args=("--side", "mindspore")) as pool:
                for k, result in zip(again, pool.run(specs("mindspore", again, fixed, weights))):
                    if result.get("status") == "ok":
                        ms_results[k] = result
        for k in runnable:
            program, result = programs[k], ms_results[k]
            notes = list(result.get("notes") or [])
            if result.get("status") != "ok":
                cause, detail = _failure(result)
                verdicts[k] = Verdict(program, RAISES, cause, detail, fixed[k], notes=notes)
                continue
            outcome = compare_results(torch_results[k], result)
            if outcome.ok:
                verdicts[k] = Verdict(program, SAME, fixed=fixed[k], notes=notes, max_abs_err=outcome.max_abs_err)
            else:
                verdicts[k] = Verdict(program, DIFFERENT, outcome.reason.split(":")[0], outcome.reason, fixed[k],
                                      notes=notes + outcome.notes, max_abs_err=outcome.max_abs_err)
    return [verdicts[k] for k in range(len(programs))]


def summary(verdicts: list[Verdict]) -> dict[str, Any]:
    """Counts per verdict and the failures grouped by cause (JSON-ready)."""
    counts = {v: sum(1 for x in verdicts if x.verdict == v) for v in VERDICTS}
    causes: dict[str, dict[str, list[str]]] = {}
    for item in verdicts:
        if item.verdict != SAME:
            causes.setdefault(item.verdict, {}).setdefault(item.cause, []).append(item.program.ident)
    return {"programs": len(verdicts), "counts": counts, "causes": causes}


def to_json(verdicts: list[Verdict]) -> str:
    rows = [{"program": v.program.ident, "verdict": v.verdict, "cause": v.cause, "detail": v.detail,
             "torch_uses": v.torch_uses, "notes": v.notes} for v in verdicts]
    return json.dumps({"summary": summary(verdicts), "programs": rows}, indent=1)
