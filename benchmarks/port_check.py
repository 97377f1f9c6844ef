"""The port check (TMS4xx) measured: silent failures after --fix / migrate, and findings on correct MindSpore code.

    python benchmarks/port_check.py [--jobs 2] [--skip-models] [--mindcv DIR] [--cache DIR]

1. Usage corpus (tests/data/usage_corpus, torch2ms/verify/corpus.py): every program is rewritten by
   `scan --fix --unsafe-fixes`, run in torch and MindSpore and compared. A program that raises or
   differs is *silent* when the scan of its rewritten text has no warning or error at or before the line
   that fails (for a raise: the program's last line in the traceback, found by running the rewritten
   program once more; for a difference: its last line). Findings of the port check on the programs that
   give torch's result are wrong findings.
2. Models of benchmarks/migrate_models.py: migrated with `torch2ms migrate` and compared with
   `verify-model` (PyNative and GRAPH mode). A model that fails is silent when its ported file has no
   warning or error at all (verify-model does not name a line); port-check findings on the models that
   pass are wrong findings.
3. Correct MindSpore code: MindSpore's own model library mindcv 0.3.0 (`pip download` into a temporary
   folder, or --mindcv DIR) and the Python layers of the installed MindSpore (nn, mint, train,
   experimental), scanned with the port check alone. Up to 100 findings are sampled (seed 0)
   and each is checked against the installed MindSpore where a check can decide it: TMS401 (the name
   exists?), TMS402 (does `inspect.signature(...).bind` raise for the call's argument shape?), TMS403
   (does Tensor / Cell have the member?). Each finding is printed for a reader's judgement too.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import os
import random
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "usage_corpus"
MINDCV = "mindcv==0.3.0"
MINDSPORE_PARTS = ("nn", "mint", "train", "experimental")  # MindSpore's own Python layers, also correct code
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

# Runs rewritten programs that raised, once each, and prints the program line of each failure (JSON).
_LOCATE = r"""
import json, sys, traceback, warnings
warnings.simplefilter("ignore")
out = {}
for path in sys.argv[1:]:
    env = {"__name__": "usage_program", "__file__": path}
    line = None
    try:
        exec(compile(open(path, encoding="utf-8").read(), path, "exec"), env)
        result = env["run"]() if "run" in env else None
        if hasattr(result, "asnumpy"):
            result.asnumpy()
    except BaseException as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        line = frames[-1].lineno if frames else None
    out[path] = line
print(json.dumps(out))
"""


def _flagged(text: str, path: str, line: int | None) -> list[str]:
    """Warnings and errors of the scan of `text` at or before `line` (None: anywhere)."""
    from torch2ms.engine import scan_source

    return [f"{d.span.start_line}:{d.code}" for d in scan_source(text, path).diagnostics
            if d.severity.value in ("warning", "error") and (line is None or d.span.start_line <= line)]


def _port_findings(text: str, path: str) -> list[str]:
    from torch2ms.engine import scan_source

    return [f"{d.span.start_line}:{d.code} {d.message[:100]}" for d in scan_source(text, path).diagnostics
            if d.code.startswith("TMS4") and d.severity.value in ("warning", "error")]


def failing_lines(texts: dict[str, str]) -> dict[str, int | None]:
    """The line of each rewritten program where it raises (None: it did not raise this time)."""
    if not texts:
        return {}
    with tempfile.TemporaryDirectory(prefix="port-check-") as tmp:
        paths = {}
        for k, (ident, text) in enumerate(texts.items()):
            path = os.path.join(tmp, f"p{k}.py")
            Path(path).write_text(text, encoding="utf-8")
            paths[path] = ident
        done = subprocess.run([sys.executable, "-c", _LOCATE, *paths], capture_output=True, text=True, timeout=1800)
        lines = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    return {paths[p]: lines.get(p) for p in paths}


def corpus(jobs: int) -> tuple[int, int, int]:
    """(programs failing, silent, wrong port-check findings on passing programs); prints the details."""
    from torch2ms.verify.corpus import DIFFERENT, RAISES, SAME, load_corpus, run_corpus

    verdicts = run_corpus(load_corpus(CORPUS), jobs=jobs)
    failing = [v for v in verdicts if v.verdict in (RAISES, DIFFERENT)]
    lines = failing_lines({v.program.ident: v.fixed for v in failing if v.verdict == RAISES})
    silent = []
    for v in failing:
        line = lines.get(v.program.ident) if v.verdict == RAISES else len(v.fixed.splitlines())
        if not _flagged(v.fixed, v.program.ident, line):
            silent.append(f"{v.program.ident} ({v.verdict}: {v.cause}; failing line {line})")
    wrong = []
    for v in verdicts:
        if v.verdict == SAME:
            wrong += [f"{v.program.ident}:{f}" for f in _port_findings(v.fixed, v.program.ident)]
    print(f"usage corpus: {len(verdicts)} programs, {sum(v.verdict == SAME for v in verdicts)} give torch's result, "
          f"{len(failing)} raise or differ after --fix; silent (no warning/error at or before the failing line): "
          f"{len(silent)}")
    for item in silent:
        print(f"    silent: {item}")
    print(f"usage corpus: port-check findings on the programs that give torch's result: {len(wrong)}")
    for item in wrong:
        print(f"    wrong: {item}")
    return len(failing), len(silent), len(wrong)


def models(cache: str) -> tuple[int, int, int]:
    """(models failing, silent, wrong port-check findings on passing models)."""
    spec = importlib.util.spec_from_file_location("migrate_models_bench", ROOT / "benchmarks" / "migrate_models.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    from torch2ms.verify.model import side_pool

    trees = bench.download(cache)
    ported = os.path.join(cache, "ported")
    bench.migrate(trees, ported, "cpu")
    failing = silent = wrong = 0
    with side_pool("torch", "cpu") as t_pool, side_pool("mindspore", "cpu") as m_pool:
        for model in bench.MODELS:
            with tempfile.TemporaryDirectory() as work:
                outcome = bench.compare(trees, ported, model, work, pools={"torch": t_pool, "mindspore": m_pool})
            path = os.path.join(ported, model.package, f"{model.module}.py")
            text = Path(path).read_text(encoding="utf-8")
            ok = outcome.get("exit") == 0 and outcome.get("stage") == "compared"
            if ok:
                found = _port_findings(text, path)
                wrong += len(found)
                print(f"models: {model.name}: passes; port-check findings {len(found)}")
                for item in found:
                    print(f"    wrong: {item}")
                continue
            failing += 1
            flagged = _flagged(text, path, None)
            silent += not flagged
            print(f"models: {model.name}: fails at {outcome.get('stage')} ({outcome.get('error', '')[:120]}); "
                  f"warnings/errors in the port: {len(flagged)} {flagged[:6]}")
    print(f"models: {len(bench.MODELS)} models, {failing} fail after migrate; silent: {silent}; "
          f"port-check findings on passing models: {wrong}")
    return failing, silent, wrong


def _mindcv_tree(given: str | None, tmp: str) -> str:
    if given:
        return given
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, MINDCV], check=True)
    wheel = next(Path(tmp).glob("mindcv-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(os.path.join(tmp, "src"))
    return os.path.join(tmp, "src", "mindcv")


def _resolve(qualname: str) -> Any:
    parts = qualname.split(".")
    value: Any = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], 1):
        try:
            value = getattr(value, part)
        except AttributeError:
            value = importlib.import_module(".".join(parts[:index + 1]))
    return value


def _confirm(diag: Any, tree: ast.Module) -> str:
    """'confirmed', 'WRONG' or 'by rule' (a table or GRAPH-mode fact, not re-decided here)."""
    import mindspore

    api = diag.mindspore_api or ""
    if diag.code == "TMS401":
        try:
            _resolve(api)
        except (AttributeError, ImportError):
            return "confirmed"
        return "WRONG"
    if diag.code == "TMS403":
        owner = mindspore.Tensor if api == "mindspore.Tensor" else mindspore.nn.Cell
        name = diag.message.split(":")[0].lstrip(".")
        return "WRONG" if hasattr(owner, name) else "confirmed"
    if diag.code == "TMS402":
        call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == diag.span.start_line
                     and n.col_offset <= diag.span.start_col), None)
        construct = ".construct(" in diag.message  # a Cell called: what its construct takes
        try:
            target = _resolve(api)
            sig = inspect.signature(target.construct if construct else target)
        except Exception:  # noqa: BLE001 - not decidable here
            return "by rule"
        if call is None:
            return "by rule"
        try:
            sig.bind(*[None] * (len(call.args) + construct), **{k.arg: None for k in call.keywords if k.arg})
        except TypeError:
            return "confirmed"
        return "WRONG"
    return "by rule"


def correct_code(given: str | None) -> tuple[int, int]:
    """(findings sampled, wrong by the automatic check) on mindcv and on MindSpore's own Python layers."""
    import mindspore

    from torch2ms.config import Config
    from torch2ms.engine import scan_source

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="mindcv-") as tmp:
        installed = Path(mindspore.__file__).parent
        roots = {f"mindcv ({MINDCV})": Path(_mindcv_tree(given, tmp))}
        roots.update({f"MindSpore {mindspore.__version__} {name}/": installed / name for name in MINDSPORE_PARTS})
        found = []
        for label, root in roots.items():
            files = sorted(root.rglob("*.py"))
            count = 0
            for path in files:
                text = path.read_text(encoding="utf-8")
                for diag in scan_source(text, str(path), Config(select=("TMS4",))).diagnostics:
                    found.append((label, root, path, text, diag))
                    count += 1
            print(f"{label}: {len(files)} files, {count} port-check findings")
        sample = random.Random(0).sample(found, min(100, len(found)))
        wrong = 0
        print(f"correct MindSpore code: {len(found)} port-check findings, {len(sample)} sampled")
        for label, root, path, text, diag in sample:
            verdict = _confirm(diag, ast.parse(text))
            wrong += verdict == "WRONG"
            print(f"    {verdict:9} {label.split()[0]} {path.relative_to(root)}:{diag.span.start_line}: {diag.code} "
                  f"{diag.message[:100]}")
    print(f"correct MindSpore code: wrong by the check against MindSpore: {wrong} of {len(sample)}")
    return len(sample), wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", default=str(ROOT / "benchmarks" / ".cache"), help="migrate_models' download folder")
    parser.add_argument("--skip-models", action="store_true", help="leave out the models of migrate_models.py")
    parser.add_argument("--skip-corpus", action="store_true", help="leave out the usage corpus")
    parser.add_argument("--mindcv", default=None, metavar="DIR", help="an unpacked mindcv package (default: pip download)")
    args = parser.parse_args()
    silent = 0
    if not args.skip_corpus:
        silent += corpus(args.jobs)[1]
    if not args.skip_models:
        silent += models(args.cache)[1]
    _, wrong = correct_code(args.mindcv)
    print(f"silent failures: {silent}; findings on correct MindSpore code the check against MindSpore calls wrong: "
          f"{wrong}")
    return 0 if silent == 0 and wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
