"""One file's migration: PyTorch text in, MindSpore text and what is left to do out.

One file goes through: the scan (what is torch, from the ast analysis) -> the structural rewrites at
call sites (`transform.CallSites`, libcst) -> the fix engine's call-level rewrites from the mapping
tables (`torch2ms.fix`, safe and unsafe) -> ``forward`` -> ``construct`` in every class that becomes
a Cell (`transform.Cells`, with the classes of the whole migrated tree) -> imports (`imports`) ->
the scan of the result, whose findings are the to-do list of what was left.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from ..config import Config
from ..engine import parse, scan_source
from ..fix import fix_held_calls, fix_text
from ..limits import Limits
from ..mappings import MappingTable, load_table
from ..portcheck.names import dotted
from ..model import Diagnostic, FileResult
from ..resolve import resolve_module
from ..source import SourceText
from .. import leftover, scopes, syntax
from . import data_loaders, imports, plain_types, positions, probes, star_imports, support, training, transform


class MigrateError(Exception):
    """A file could not be migrated; the message names the file and the reason."""


@dataclass(frozen=True)
class Options:
    config: Config = field(default_factory=Config)  # its `device`: where the output must run (the forms written)
    limits: Limits | None = None  # per-file limits of `migrate_paths` (torch2ms.limits); None: none
    support: str = support.MODULE  # the name the files import the tree's support module by (support.import_name)

    @property
    def device(self) -> str:
        return self.config.device


@dataclass
class Migration:
    """One file's migration: the new text and what happened."""

    path: str
    original: str
    text: str
    findings: int  # findings of the original file
    rewritten: int  # rewrites applied (fix engine and structural)
    result: FileResult  # the scan of the new text: what remains to do
    root: str = scopes.ROOT  # how the new text spells mindspore
    removed_imports: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # "line: what" for each structural rewrite
    source_findings: tuple[Diagnostic, ...] = ()  # the findings of the original text (what the rewrites answer)
    left: list[str] = field(default_factory=list)  # "line: what was left as it is: why" (training loops, loaders)
    support: bool = False  # the port uses the tree's support module (torch2ms.migrate.support)

    @property
    def remaining(self) -> int:
        return len(self.result.diagnostics)

    @property
    def changed(self) -> bool:
        return self.text != self.original


def module_classes(text: str, table: MappingTable | None = None) -> set[str]:
    """The classes of one file that derive from a torch.nn class (through bases in the same file)."""
    module = resolve_module(parse(text), table or load_table(), SourceText(text))
    return {cls.name for cls in module.classes if cls.is_module}


_R = TypeVar("_R", bound=cst.CSTTransformer)
CELL = "cell"  # the transform (torch2ms.transforms.cell) of the class whose subclasses are Cells


class _Parsed:
    """The libcst module of the text the last rewrite read, with the positions of its nodes: a rewrite that leaves
    the text as it was (the data loaders' and training loops' passes, where no call has the role they look for)
    hands the next one the same tree, which no rewrite changes (libcst builds a new one), instead of the parse
    and the positions of the same text once more."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.module = cst.Module([])
        self.where: Mapping[cst.CSTNode, CodeRange] | None = None

    def rewrite(self, text: str, rewriter: _R) -> tuple[str, _R]:
        """(`rewriter`'s text of `text`, `rewriter`)."""
        if text != self.text:
            self.text, self.module, self.where = text, cst.parse_module(text), None
        if self.where is None:
            self.where = positions.ranges(self.module)
        return positions.rewrite(self.module, rewriter, self.where).code, rewriter


def existing_cells(tree: ast.Module, table: MappingTable) -> set[str]:
    """The classes of `tree` that already derive from the Cell class the tables map nn.Module to (a file
    migrated earlier, or by hand): a resumed or repeated migration treats them as Cells, so that their own
    ``forward`` and their subclasses' become ``construct`` exactly as in one uninterrupted run."""
    cells = {target.api for entry in table.entries.values() if entry.rewrite is not None
             and entry.rewrite.transform == CELL for target in entry.targets}  # the tables' Cell class
    if not cells:
        return set()
    aliases = probes.import_aliases(tree)
    return {node.name for node in syntax.walk(tree) if isinstance(node, ast.ClassDef)
            and any(dotted(base, aliases) in cells for base in node.bases)}


FULL_COLLECTION_EVERY = 1_000_000  # collections of the middle generation between full ones, during one file


def migrate_text(text: str, path: str = "<string>", options: Options | None = None,
                 cells: set[str] | None = None, table: MappingTable | None = None,
                 star: Mapping[int, tuple[str, ...]] | None = None) -> Migration:
    """Migrate one file's text. `cells`: its classes that become Cells (from the whole tree, see
    `torch2ms.project_graph.module_classes`); by default those this file alone shows. `star`: the torch imports
    the file's star imports bring from other files of the tree, by the star import's line
    (`star_imports.explicit_imports`), written out before the migration.
    Raises MigrateError when the file cannot be analysed or the result would not parse.

    The collector's full passes (the oldest generation) wait meanwhile: the syntax trees of a large file
    are hundreds of thousands of long-lived objects, and each full pass over them made the cost grow faster
    than the file (measured: a fifth of the time of a 400 KB file). The younger generations, where cyclic
    garbage dies, are still collected."""
    first, second, third = gc.get_threshold()
    gc.set_threshold(first, second, max(third, FULL_COLLECTION_EVERY))
    try:
        with syntax.shared():  # the passes read each text's tree and facts once (`torch2ms.syntax`)
            return _migrate_text(text, path, options, cells, table, star or {})
    finally:
        gc.set_threshold(first, second, third)


def _migrate_text(text: str, path: str, options: Options | None, cells: set[str] | None,
                  table: MappingTable | None, star: Mapping[int, tuple[str, ...]]) -> Migration:
    options = options or Options()
    original = text
    if star:
        try:
            text = star_imports.insert(text, star)
        except (SyntaxError, ValueError):
            pass  # the scan below names what does not parse
    config = options.config
    table = table or load_table()
    before = scan_source(text, path, config, table)
    if before.error is not None:
        raise MigrateError(f"{path}: {before.error.message}")
    try:
        tree = parse(text)
        facts = resolve_module(tree, table, SourceText(text))
        root = scopes.choose_root(tree)
        if cells is None:
            cells = {cls.name for cls in facts.classes if cls.is_module} | existing_cells(tree, table)
        # 0. data loaders as mindspore.dataset pipelines, then training loops as a forward function,
        # value_and_grad and optimizer(grads) (data/training.yaml); each a whole-file rewrite, run only
        # where a call has a role in it
        parsed = _Parsed()
        loaders = data_loaders.DataLoaders(facts.calls, root)
        if loaders.apis:
            text, loaders = parsed.rewrite(text, loaders)
        if loaders.count:
            tree = parse(text)
            facts = resolve_module(tree, table, SourceText(text))
        steps = training.TrainingSteps(facts.calls, root, scopes.used_names(tree))
        if steps.by_start:
            text, steps = parsed.rewrite(text, steps)
        if steps.count:
            tree = parse(text)
            facts = resolve_module(tree, table, SourceText(text))
        # feature probes on torch (`hasattr(F, "rms_norm")`) answered for MindSpore from the tables
        probed = probes.Probes(table, config.version, config.device, root, table.roots)
        answered = probed.rewrite(text)
        if answered != text:
            text = answered
            tree = parse(text)
            facts = resolve_module(tree, table, SourceText(text))
        # torch layer classes used as values (`act_layer=nn.ReLU`, `partial(nn.Conv2d, ...)`): the support module's
        # torch-signature layers, which take the arguments torch's class receives wherever it is called
        unvalued, unvalued_calls = text, facts.calls
        text, valued = support.values(text, table, config.version, config.device, options.support, facts.calls)
        if valued:
            tree = parse(text)
            facts = resolve_module(tree, table, SourceText(text))
        # 1. the arguments of calls of classes that variables hold (`norm_layer(dim, eps=1e-6)`), while the scan
        # still sees the class (the next step rewrites the values), then rewrites at call sites that the
        # scan's facts of this very text locate
        text, held = fix_held_calls(text, path, config, table, before if text == original else None, facts.narrowed)
        if held:
            tree = parse(text)
            facts = resolve_module(tree, table, SourceText(text))
        calls = list(facts.calls)
        if valued:  # Tensor methods on what a replaced torch class makes (the scan no longer sees that class there)
            calls += transform.still_tensor_calls(unvalued_calls, table, unvalued, text, calls)
        sites = transform.CallSites(calls, table, config.version, root, config.device, scopes.used_names(tree),
                                    options.support, text)
        # no call to look at: nothing to rewrite (every rewrite of the walk starts at a call), no libcst parse
        text1, sites = parsed.rewrite(text, sites) if sites.by_span else (text, sites)
        # 2. the fix engine: call targets and parameters from the mapping tables, the forms for config.device
        if root != scopes.ROOT:  # the fix engine spells from the alias the file imports (scopes.choose_root)
            text1 = imports.ensure_root_import(cst.parse_module(text1), root)[0].code
        outcome = fix_text(text1, path, config, unsafe=True, table=table, held=False, scan_result=False)
        # torch layer classes where no call's rewrite can stand for them (bases, values, unpacked arguments): the
        # support module's torch-signature layers
        text2, called = support.functions(outcome.text, table, config.version, config.device, options.support,
                                          keep=(loaders.rules.load_state[0],) if loaders.checkpoints else ())
        text2, adapted = support.adapt(text2, original, table, config.version, config.device, options.support)
        adapted = valued + called + adapted
        # torch names left in annotations (no MindSpore type for them): plain typing, so no import stays for them
        text2, typed = plain_types.plain_annotations(text2, table.roots)
        # 3. forward -> construct in every class that becomes a Cell
        classes = transform.Cells(cells, root)
        text3 = classes.rewrite(text2)
        # 4. imports
        module, removed = imports.remove_unused(cst.parse_module(text3), table.roots, text3)
        module, _ = imports.ensure_root_import(module, root)
        if adapted or sites.support:
            module = imports.ensure_module_import(module, options.support)
        if typed:
            module = imports.ensure_module_import(module, plain_types.TYPING)
        for name in sorted(sites.imports):
            # the module's names are text3's and those of the import of `root`: a name text3 never spells is not
            # referred to, and no walk of the module is needed to know it
            if name in text3 or name in (scopes.ROOT, root):  # a dotted module (`urllib.parse`) imported in full
                module = imports.ensure_module_import(module, name) if "." in name else imports.ensure_import(module, name)
        new = module.code
    except cst.ParserSyntaxError as exc:
        raise MigrateError(f"{path}: cannot rewrite: {exc.message}") from None
    try:
        syntax.parse(new)
    except SyntaxError as exc:  # defensive: libcst writes valid code, the fix engine checks its own
        raise MigrateError(f"{path}: the migrated text does not parse ({exc.msg}); nothing written") from None
    after = _with_left_torch(scan_source(new, path, config, table), new, table.roots, config)
    rewritten = loaders.count + steps.count + len(probed.done) + len(held) + sites.count + len(outcome.applied) \
        + classes.count + len(adapted) + len(typed)
    return Migration(path, original, new, len(before.diagnostics), rewritten, after, root, removed,
                     loaders.done + loaders.left + steps.done + steps.left + probed.done + sites.done + adapted
                     + typed + classes.done, tuple(before.diagnostics), loaders.left + steps.left, bool(adapted) or sites.support)


def torch_references(text: str, roots: Collection[str] = ("torch",)) -> list[tuple[int, int, str]]:
    """(line, column, name) of every use of a name bound by an import of `roots` (torch, ...)."""
    return leftover.torch_references(syntax.parse(text), roots)


def unreported(migration: Migration, roots: Collection[str] = ("torch",)) -> list[tuple[int, int, str]]:
    """The torch references left in the migrated text that no finding of its scan covers."""
    return leftover.uncovered(syntax.parse(migration.text), SourceText(migration.text), migration.result.diagnostics,
                              roots)


def _with_left_torch(result: FileResult, text: str, roots: Collection[str], config: Config) -> FileResult:
    """The scan of a port, with a finding (TMS407) on each torch name it still uses that no other finding
    covers (`torch2ms.leftover`; the scan does this itself where the port names MindSpore, this also where it
    does not): the port imports torch there, so it is on the to-do list, never "0 remaining"."""
    if result.error is not None or not config.enabled_in(result.path, "TMS407"):
        return result
    added = leftover.leftover_diagnostics(syntax.parse(text), SourceText(text), result.diagnostics, roots)
    if not added:
        return result
    return replace(result, diagnostics=tuple(sorted((*result.diagnostics, *added), key=Diagnostic.sort_key)))


