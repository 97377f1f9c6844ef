"""The network execution graph across files: a cheap pass over every file's `ScopeFacts`.

Each file's scan (engine.py) judges its functions with the network graph of that
file alone: ``forward`` of its nn.Module subclasses and what they call in the same
file. It also records, in `FileResult.scope`, what a project-wide view needs: the
calls that leave the file (``helper(x)`` after ``from .ops import helper``,
``U.f(x)`` after ``import pkg.utils as U``, ``self.helper(x)`` with ``helper``
inherited from an imported base), its classes with their bases, its module-level
imports (for re-exports) and, per function outside its own network graph, the
findings that function would have as network code.

After all files are scanned (freshly or from the cache), `link` follows those calls
from every network function, transitively and across any number of files (cycles
are fine: each function is visited once), and re-grades the functions it reaches:
their data-processing findings (TMS25x) become the network ones (TMS20x), their
control flow and host syncs (TMS205, TMS206) appear, and each message says which
network function calls it. Classes that are nn.Modules only through a base in
another file get their ``forward`` as a network root the same way.

Module names come from the paths: a file's dotted path relative to the scan root it
was found under, and its dotted path from the top of its package (the highest
folder with an ``__init__.py`` among the scanned files), so both ``models.ops`` and
``src/mypkg/utils.py`` as ``mypkg.utils`` resolve. Relative imports resolve by the
file's folder. Imports that name no scanned file are ignored. The pass reads no file
and depends only on the per-file facts and the paths, so the result is the same with
and without the cache and for any number of jobs.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from . import checks, engine, resolve
from . import dataflow as df
from .config import Config
from .mappings import MappingTable
from .model import Confidence, Diagnostic, FileResult, ScopeFacts, Span

Node = tuple[int, str]  # (file index, context)
_MAX_REEXPORTS = 8  # how many `from .x import y` re-exports one reference may pass through


class _File:
    __slots__ = ("path", "shown", "classes", "imports", "edges", "roots", "latent", "known", "is_init", "scope",
                 "returns", "attrs", "values")

    def __init__(self, path: str, shown: str, scope: ScopeFacts) -> None:
        self.path = path
        self.shown = shown
        self.scope = scope
        self.classes = {fact[0]: fact for fact in scope.classes}
        self.imports = dict(scope.imports)
        self.edges = dict(scope.edges)
        self.roots = dict(scope.roots)
        self.latent = {entry[0]: entry for entry in scope.latent}
        self.returns = dict(scope.returns)
        self.attrs = {cls: dict(items) for cls, items in scope.attrs}
        self.values = dict(scope.values)
        # names this file defines, as far as its facts tell: a re-export is only followed for other names
        self.known = {c.partition(".")[0] for c in (*self.edges, *self.roots, *self.latent, *self.returns)} \
            | set(self.classes) | set(self.values)
        self.is_init = os.path.basename(path) in ("__init__.py", "__init__.pyi")


class _Project:
    def __init__(self, items: Sequence[tuple[str, ScopeFacts | None]], roots: Sequence[str]) -> None:
        norm = [os.path.normpath(os.path.abspath(path)) for path, _ in items]
        self.by_path: dict[str, int] = {}
        for index, path in enumerate(norm):
            self.by_path.setdefault(path, index)
        scan_roots = sorted({os.path.normpath(os.path.abspath(r)) for r in roots}, key=len, reverse=True)
        self.modules: dict[str, int] = {}
        self.files: dict[int, _File] = {}
        for index, ((_, scope), path) in enumerate(zip(items, norm)):
            root = self._root_of(path, scan_roots)
            names = [_dotted(os.path.relpath(path, root))]
            top = os.path.dirname(path)
            while self._has_init(top) and os.path.dirname(top) != top:
                top = os.path.dirname(top)
            names.append(_dotted(os.path.relpath(path, top)))
            for name in names:
                if name:
                    self.modules.setdefault(name, index)
            if scope is not None:
                shown = os.path.relpath(path, root).replace(os.sep, "/")
                self.files[index] = _File(path, shown, scope)
        self._resolved: dict[tuple[int, str], Node | None] = {}
        self._subclasses: dict[tuple[int, str], list[tuple[int, str]]] | None = None

    def _has_init(self, folder: str) -> bool:
        return os.path.join(folder, "__init__.py") in self.by_path or os.path.join(folder, "__init__.pyi") in self.by_path

    @staticmethod
    def _root_of(path: str, roots: Sequence[str]) -> str:
        for root in roots:  # longest first
            if path == root:
                return os.path.dirname(root)
            if path.startswith(root.rstrip(os.sep) + os.sep):
                return root
        return os.path.dirname(path)

    def _module_file(self, parts: Sequence[str], base: str) -> int | None:
        stem = os.path.join(base, *parts)
        for candidate in (stem + ".py", stem + ".pyi", os.path.join(stem, "__init__.py"),
                          os.path.join(stem, "__init__.pyi")):
            index = self.by_path.get(candidate)
            if index is not None:
                return index
        return None

    # ------------------------------------------------------------------ references
    def resolve(self, index: int, ref: str, depth: int = 0) -> Node | None:
        """The (file, name) an "@" reference made in file `index` denotes, following re-exports."""
        key = (index, ref)
        if key in self._resolved:
            return self._resolved[key]
        self._resolved[key] = None  # a re-export cycle resolves to nothing
        found = self._resolve(index, ref, depth)
        self._resolved[key] = found
        return found

    def _resolve(self, index: int, ref: str, depth: int) -> Node | None:
        target = self.target(index, ref)
        if target is None or not target[1]:
            return None  # not a scanned module, or a module itself rather than a name in it
        module, name = target
        file = self.files.get(module)
        first, _, rest = name.partition(".")
        if file is not None and first in file.known:
            return target
        if depth < _MAX_REEXPORTS and file is not None and first in file.imports:
            again = file.imports[first] + ("." + rest if rest else "")
            return self.resolve(module, again, depth + 1)
        if file is None or file.is_init:
            # `from .ops import helper` in an __init__ the scan knows nothing of (no torch in it): the one
            # module of the package that defines the name
            folder = os.path.dirname(self._path_of(module))
            owners = [i for i, f in self.files.items() if os.path.dirname(f.path) == folder and first in f.known
                      and not f.is_init]
            if len(owners) == 1:
                return owners[0], name
        return target

    def target(self, index: int, ref: str) -> Node | None:
        """The scanned module an "@" reference of file `index` names and the dotted name in it ("" for the
        module itself); None for a module the scan did not read."""
        body = ref[1:]
        dotted = body.lstrip(".")
        level = len(body) - len(dotted)
        parts = dotted.split(".") if dotted else []
        target: Node | None = None
        if level:
            base = os.path.dirname(self.files[index].path) if index in self.files else ""
            for _ in range(level - 1):
                base = os.path.dirname(base)
            for cut in range(len(parts), -1, -1):
                module = self._module_file(parts[:cut], base) if cut else self._module_file((), base)
                if module is not None:
                    target = (module, ".".join(parts[cut:]))
                    break
        else:
            folder = os.path.dirname(self._path_of(index))
            beside = not self._has_init(folder)  # a script's folder is first on sys.path
            for cut in range(len(parts), 0, -1):
                module = self._module_file(parts[:cut], folder) if beside else None
                if module is None:
                    module = self.modules.get(".".join(parts[:cut]))
                if module is not None:
                    target = (module, ".".join(parts[cut:]))
                    break
        return target

    def _path_of(self, index: int) -> str:
        file = self.files.get(index)
        if file is not None:
            return file.path
        for path, i in self.by_path.items():
            if i == index:
                return path
        return ""

    # ------------------------------------------------------------------ classes
    def _class(self, index: int, base: str) -> Node | None:
        """The class a base written in file `index` denotes."""
        if base[:1] == "@":
            found = self.resolve(index, base)
        else:
            found = (index, base)
        if found is None or found[0] not in self.files or found[1] not in self.files[found[0]].classes:
            return None
        return found

    def _base(self, index: int, base: str, any_file: bool) -> Node | None:
        """`_class`, or with `any_file` also a class of a file the project has no facts of."""
        found = self._class(index, base)
        if found is None and any_file:
            found = self.resolve(index, base) if base[:1] == "@" else (index, base)
        return found

    def defining(self, index: int, cls: str, method: str) -> Node | None:
        """Where `cls.method` is defined: the class or its bases, depth-first, across files."""
        todo, seen = [(index, cls)], set()
        while todo:
            node = todo.pop(0)
            if node in seen:
                continue
            seen.add(node)
            fact = self.files[node[0]].classes.get(node[1])
            if fact is None:
                continue
            if method in fact[2]:
                return node[0], f"{node[1]}.{method}"
            todo[:0] = [b for b in (self._class(node[0], base) for base in fact[1]) if b is not None]
        return None

    def module_base(self, index: int, cls: str, known: dict[int, set[str]] | None = None) -> Node | None:
        """A class that makes `cls` an nn.Module subclass (itself when its own file knows), or None.
        `known`: per file, classes that count as such roots too (those already deriving from a Cell)."""
        todo, seen = [(index, cls)], set()
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            if known is not None and node[1] in known.get(node[0], ()):
                return node
            file = self.files.get(node[0])
            fact = file.classes.get(node[1]) if file is not None else None
            if fact is None:  # a file without torch (no facts): only `known` tells
                continue
            if fact[3]:
                return node
            todo.extend(b for b in (self._base(node[0], base, known is not None) for base in fact[1]) if b is not None)
        return None

    def subclasses(self, node: tuple[int, str]) -> list[tuple[int, str]]:
        if self._subclasses is None:
            self._subclasses = {}
            for index, file in self.files.items():
                for name, fact in file.classes.items():
                    for base in fact[1]:
                        found = self._class(index, base)
                        if found is not None:
                            self._subclasses.setdefault(found, []).append((index, name))
        return self._subclasses.get(node, [])

    def method_targets(self, index: int, cls: str, method: str) -> list[Node]:
        """`cls.method` as a call: its definition through the bases, and overrides in subclasses."""
        out = []
        found = self.defining(index, cls, method)
        if found is not None:
            out.append(found)
        todo, seen = list(self.subclasses((index, cls))), {(index, cls)}
        while todo:
            sub = todo.pop()
            if sub in seen:
                continue
            seen.add(sub)
            if method in self.files[sub[0]].classes[sub[1]][2]:
                out.append((sub[0], f"{sub[1]}.{method}"))
            todo.extend(self.subclasses(sub))
        return out

    def targets(self, index: int, target: str) -> list[Node]:
        if target[:1] == "@":
            found = self.resolve(index, target)
            if found is None:
                return []
            index, target = found
        owner, dot, method = target.partition(".")
        if index not in self.files:
            return []
        if dot and "." not in method and owner in self.files[index].classes:
            return self.method_targets(index, owner, method)
        if not dot and owner in self.files[index].classes:
            return []  # a class called: its __init__ runs, which is not network code
        return [(index, target)]


def project_pass(items: Sequence[tuple[str, ScopeFacts | None]], roots: Sequence[str], table: MappingTable,
                 config: Config) -> tuple[dict[int, dict[str, str]], dict[int, list[Diagnostic]]]:
    """`regrades` and `named_calls` of a scan, with the files' module names worked out once."""
    project: list[_Project] = []

    def shared() -> _Project:
        if not project:
            project.append(_Project(items, roots))
        return project[0]

    return regrades(items, roots, shared=shared), named_calls(items, roots, table, config, shared=shared)


def regrades(items: Sequence[tuple[str, ScopeFacts | None]], roots: Sequence[str],
             latent_only: bool = True, shared: Callable[[], _Project] | None = None) -> dict[int, dict[str, str]]:
    """For each file (by index in `items`) that has functions reached from network code in other files:
    context -> why it is network code. `items`: (path, scope facts) of every scanned file, in the scan's
    order; `roots`: the paths the scan was given (for module names). `latent_only=False` keeps every
    reached function, also those without findings yet: the answer then depends only on the calls,
    classes and imports of the files, not on their findings (the language server reuses it while a
    function's body is edited)."""
    if not any(scope is not None and (scope.roots or scope.classes) for _, scope in items):
        return {}
    project = shared() if shared is not None else _Project(items, roots)
    parent: dict[Node, Node | None] = {}
    why_root: dict[Node, str] = {}
    queue: deque[Node] = deque()
    local_roots: set[Node] = set()
    for index, file in project.files.items():
        for context in sorted(file.roots):
            node = (index, context)
            parent[node] = None
            local_roots.add(node)
            queue.append(node)
        for name in sorted(file.classes):
            fact = file.classes[name]
            if fact[3] or "forward" not in fact[2]:
                continue
            base = project.module_base(index, name)
            if base is None:
                continue
            node = (index, f"{name}.forward")
            if node not in parent:
                parent[node] = None
                via = project.files[base[0]]
                why_root[node] = (f"forward of {name}, an nn.Module subclass through its base {base[1]} in "
                                  f"{via.shown}")
                queue.append(node)
    while queue:
        node = queue.popleft()
        file = project.files[node[0]]
        targets = file.roots.get(node[1], ()) if node in local_roots else file.edges.get(node[1], ())
        for target in targets:
            for reached in project.targets(node[0], target):
                if reached not in parent:
                    parent[reached] = node
                    queue.append(reached)
    out: dict[int, dict[str, str]] = {}
    for node in parent:
        if node in local_roots:
            continue
        found = project.files.get(node[0])
        if found is None or (latent_only and node[1] not in found.latent):
            continue
        out.setdefault(node[0], {})[node[1]] = _reason(project, node, parent, why_root)
    return out


def module_classes(items: Sequence[tuple[str, ScopeFacts | None]], roots: Sequence[str],
                   known: dict[int, set[str]] | None = None) -> dict[int, set[str]]:
    """For each file (by index in `items`): its classes that are nn.Module subclasses, directly or through
    bases in any file of `items` (what `torch2ms migrate` turns into Cells); `known`: per file, classes that
    are Cells already (a resumed migration), which count as such bases."""
    project = _Project(items, roots)
    return {index: {name for name in file.classes if project.module_base(index, name, known) is not None}
            for index, file in project.files.items()}


def _reason(project: _Project, node: Node, parent: dict[Node, Node | None], why_root: dict[Node, str]) -> str:
    caller = parent[node]
    if caller is None:
        return why_root.get(node, "network code")
    root = caller
    while (above := parent[root]) is not None:
        root = above
    where = "" if caller[0] == node[0] else f" in {project.files[caller[0]].shown}"
    text = f"called from {caller[1]}{where}"
    if root != caller:
        text += f", on the path from {root[1]} in {project.files[root[0]].shown}"
    return text


def regraded(result: FileResult, reasons: dict[str, str]) -> FileResult:
    """`result` with the functions in `reasons` graded as network code."""
    scope = result.scope
    if scope is None or not reasons:
        return result
    added: list[Diagnostic] = []
    replaced: set[tuple[Span, str]] = set()
    for context, diags, replaces in scope.latent:
        reason = reasons.get(context)
        if reason is None:
            continue
        added.extend(replace(diag, message=f"{diag.message}; this is network code: {reason}") for diag in diags)
        replaced.update(replaces)  # the data-processing findings (TMS25x) of the same spans
    kept = [d for d in result.diagnostics if (d.span, d.code) not in replaced]
    diagnostics = sorted(kept + added, key=Diagnostic.sort_key)
    return FileResult(path=result.path, diagnostics=tuple(diagnostics), lines=result.lines, scope=scope)


def linking_facts(scope: ScopeFacts | None) -> tuple[object, ...] | None:
    """The part of a file's scope facts that can change another file's grading (all but its findings)."""
    return None if scope is None else (scope.roots, scope.edges, scope.classes, scope.imports)


class ProjectScope:
    """A project's network scope kept up to date one file at a time (the language server's view): the
    scope facts of every file and, per file, the functions that network code in other files reaches.
    That answer depends only on the files' calls, classes and imports (`linking_facts`), so an edit
    inside a function body needs no new pass; `update` says when one is due."""

    def __init__(self) -> None:
        self.facts: dict[str, ScopeFacts | None] = {}
        self.roots: list[str] = []
        self.reached: dict[str, dict[str, str]] = {}
        self.ready = False  # facts of the whole project are loaded

    def load(self, items: Sequence[tuple[str, ScopeFacts | None]], roots: Sequence[str],
             keep: Iterable[str] = ()) -> None:
        """Facts of the project's files (from a scan), except those of the paths in `keep`, whose newer
        facts (an editor's unsaved text) stay."""
        kept = {norm_path(path) for path in keep}
        for path, scope in items:
            path = norm_path(path)
            if path not in kept:
                self.facts[path] = scope
        self.roots = [norm_path(root) for root in roots]
        self.ready = True

    def update(self, path: str, scope: ScopeFacts | None) -> bool:
        """Record one file's new facts; whether a new pass is due (the file is new, or its calls, classes
        or imports changed)."""
        path = norm_path(path)
        known = path in self.facts
        before = self.facts.get(path)
        self.facts[path] = scope
        return self.ready and (not known or linking_facts(before) != linking_facts(scope))

    def pass_over_copy(self) -> Callable[[], dict[str, dict[str, str]]]:
        """The graph pass over the facts as they are now, to run anywhere (a worker thread); its result
        goes to `reached`."""
        paths = list(self.facts)
        items = [(path, self.facts[path]) for path in paths]
        roots = list(self.roots)

        def run() -> dict[str, dict[str, str]]:
            changes = regrades(items, roots, latent_only=False)
            return {paths[index]: reasons for index, reasons in changes.items()}

        return run

    def reasons(self, path: str | None) -> dict[str, str]:
        """Context -> why it is network code, for the functions of `path` reached from other files."""
        return self.reached.get(norm_path(path), {}) if path else {}


def norm_path(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def link(results: Sequence[FileResult], roots: Sequence[str]) -> list[FileResult]:
    """`results` with the network scope extended across files (see the module's docstring)."""
    changes = regrades([(r.path, r.scope) for r in results], roots)
    if not changes:
        return list(results)
    return [regraded(r, changes[i]) if i in changes else r for i, r in enumerate(results)]


class _DataFacts:
    """`dataflow.Facts` of the whole project: references follow imports, classes their bases, across files."""

    def __init__(self, project: _Project) -> None:
        self.project = project
        self._by_name: dict[str, list[tuple[int, str, df.CallSite]]] | None = None
        self._sites: dict[tuple[int, str], list[df.CallSite]] = {}

    def arguments(self, file: int, context: str) -> list[df.CallSite] | df.Plain:
        key = (file, context)
        if key not in self._sites:
            if self._by_name is None:  # the calls by the callee's last name: only those are resolved
                self._by_name = {}
                for index, source in self.project.files.items():
                    for callee, positional, keywords, more in source.scope.arguments:
                        self._by_name.setdefault(callee.rpartition(".")[2].rpartition(":")[2], []).append(
                            (index, callee, (index, positional, keywords, more)))
            sites = []
            for index, callee, site in self._by_name.get(context.rpartition(".")[2], ()):
                tag, _, name = callee[1:].partition(":")
                kind = self.ref(index, name) if tag == "ref" else self.function(index, name)
                if isinstance(kind, df.Function) and (kind.file, kind.context) == key:
                    sites.append(site)
            self._sites[key] = sites
        return self._sites[key] or df.K_UNKNOWN

    def returns(self, file: int, context: str) -> Sequence[str] | None:
        found = self.project.files.get(file)
        return None if found is None else found.returns.get(context)

    def _chain(self, file: int, cls: str) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        todo = [(file, cls)]
        while todo:
            node = todo.pop(0)
            if node in out or node[0] not in self.project.files:
                continue
            fact = self.project.files[node[0]].classes.get(node[1])
            if fact is None:
                continue
            out.append(node)
            todo[:0] = [b for b in (self.project._class(node[0], base) for base in fact[1]) if b is not None]
        return out

    def attribute(self, file: int, cls: str, name: str) -> df.Found | df.Plain | None:
        for index, owner in self._chain(file, cls):
            desc = self.project.files[index].attrs.get(owner, {}).get(name)
            if desc is not None:
                return index, desc
        return None

    def method(self, file: int, cls: str, name: str) -> df.Found | df.Plain | None:
        if file not in self.project.files or cls not in self.project.files[file].classes:
            return None
        return self.project.defining(file, cls, name)

    def is_module(self, file: int, cls: str) -> bool | None:
        if file not in self.project.files or cls not in self.project.files[file].classes:
            return False
        return self.project.module_base(file, cls) is not None

    def ref(self, file: int, ref: str) -> df.Kind:
        found = self.project.resolve(file, ref)
        if found is None or found[0] not in self.project.files:
            return df.K_UNKNOWN
        index, name = found
        target = self.project.files[index]
        if name in target.values:
            return df.ModuleValue(index, target.values[name])
        return self.function(index, name)

    def function(self, file: int, context: str) -> df.Kind:
        target = self.project.files.get(file)
        if target is None:
            return df.K_UNKNOWN
        owner, dot, method = context.rpartition(".")
        if dot and owner in target.classes:
            found = self.project.defining(file, owner, method)
            return df.Function(*found) if found is not None else df.K_UNKNOWN
        if context in target.classes:
            return df.UserClass(file, context)
        return df.Function(file, context)


# The message of a finding the project pass made for a call whose line's noqa comment turns it off: it is
# not reported, and the file's own findings of the same use (its guess, a readiness check) go with it.
SILENCED = "\x00noqa"


def named_calls(items: Sequence[tuple[str, ScopeFacts | None]], roots: Sequence[str], table: MappingTable,
                config: Config, shared: Callable[[], _Project] | None = None) -> dict[int, list[Diagnostic]]:
    """The findings of the calls whose API other files decide (`ScopeFacts.pending`), per file index:
    a method called on what a helper in another file returns, on an attribute a base class in another
    file sets, on an instance of a class imported from another file, on a parameter that callers in
    other files pass. (The file's own scan gave such a call its low-confidence finding, if any:
    `with_findings` replaces it.)"""
    if not any(scope is not None and scope.pending for _, scope in items):
        return {}
    project = shared() if shared is not None else _Project(items, roots)
    evaluator = df.Evaluator(_DataFacts(project), table)
    view = table.view(config.version, config.device)  # the target choice of this scan
    out: dict[int, list[Diagnostic]] = {}
    for index, file in project.files.items():
        for receiver, member, low, noqa, call in file.scope.pending:
            api = evaluator.member_api(index, receiver, member)
            named = resolve.named_call(resolve.Pending(receiver, member, call, low),
                                       api if isinstance(api, str) else None, table.roots)
            if named is None or named.confidence is Confidence.LOW:
                continue  # the file's scan reported the guess
            diag = checks.check_call(named, view)
            if not config.enabled_in(file.path, diag.code):
                continue
            if noqa is not None and engine.covers(frozenset(noqa), diag.code):
                diag = replace(diag, message=SILENCED, fix=None)  # the use is off: its other findings too
            out.setdefault(index, []).append(diag)
    return out


def with_findings(result: FileResult, added: Sequence[Diagnostic]) -> FileResult:
    """`result` with the findings the project pass added, each replacing the low-confidence guess (TMS105)
    the file's own scan made for the same call; a check of the file's on the same call that named the API
    it guessed (`.to` as torch.Tensor.to) names the API found; one finding per use, as the file's scan keeps
    them."""
    if not added:
        return result
    named = {d.span: d.torch_api for d in added if d.torch_api}
    silenced = {d.span for d in added if d.message == SILENCED}
    added = [d for d in added if d.message != SILENCED]
    kept = []
    for diag in result.diagnostics:
        if diag.span in silenced:
            continue  # a noqa comment turned off the use the project pass found here
        api = named.get(diag.span)
        if api is not None and diag.torch_api and diag.torch_api != api \
                and diag.torch_api.rpartition(".")[2] == api.rpartition(".")[2]:
            if diag.code == "TMS105":
                continue  # the file's guess at the receiver's type
            diag = replace(diag, torch_api=api)  # a check on the same call (TMS341 on .to): one use
        if diag.code == "TMS105" and named.get(diag.span) == diag.torch_api:
            continue
        kept.append(diag)
    diagnostics = engine.one_per_use(sorted((*kept, *added), key=Diagnostic.sort_key))
    return replace(result, diagnostics=tuple(diagnostics))


def _dotted(relative: str) -> str:
    stem, ext = os.path.splitext(relative)
    if ext not in (".py", ".pyi"):
        return ""
    parts = [p for p in stem.split(os.sep) if p and p != "."]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or any(p == ".." or not p.isidentifier() for p in parts):
        return ""
    return ".".join(parts)


def imported_files(results: Sequence[FileResult], roots: Sequence[str]) -> dict[int, set[int]]:
    """Per file (its index in `results`), the other scanned files its module-level imports name: the file
    that defines an imported name (re-exports followed), or the module a plain import names. From the
    facts each file's scan keeps (`ScopeFacts.imports`): nothing is read again."""
    project = _Project([(r.path, r.scope) for r in results], roots)
    found: dict[int, set[int]] = {}
    for index, file in project.files.items():
        for ref in file.imports.values():
            node = project.resolve(index, ref) or project.target(index, ref)
            if node is not None and node[0] != index and node[0] < len(results):
                found.setdefault(index, set()).add(node[0])
    return found
