"""A composed MindSpore form: where no single MindSpore call gives torch's result on the device (no kernel, or
another behaviour), the tables name an expression of MindSpore calls that does, written with the arguments
the torch call binds to torch's parameters: ``torch.roll(x, 1, 0)`` -> ``mindspore.numpy.roll(x, 1, 0)``.

Arguments (``rewrite: {transform: compose, ...}``):

- `form`: the expression, ``{name}`` standing for the text of torch parameter `name` and ``{self}`` for a
  method's receiver;
- `params`: torch's parameters in positional order (a method's receiver not counted); the call binds to
  them as Python binds it (a keyword they do not name, a ``*args`` or too many positional arguments: no fix);
- `defaults`: the text written for a parameter the call leaves out (one without a default must be passed);
- `when`: ``{param: value}``, the values the call must pass (or leave to a default equal to them), written as
  literals, for the form to apply: ``{inplace: true}``; a list is the values of which the call must pass one
  (``{mode: [linear, bilinear]}``);
- `tagged`: ``{param: tag}``, the form applies only where the argument passed for `param` carries this tag of
  the resolver's data flow (``{tensors: empty_1d}``: a sequence holding a 1-D tensor with no elements, built from
  an empty literal: ``torch.cat([torch.tensor([]), x])``, an accumulator started as one); other calls take the
  ordinary rewrite;
- `unless`: ``{param: value}``, a value for which the form does not apply (passed as that literal or left to a
  default equal to it; any other value, written or computed, takes the form): ``{decimals: 0}``;
- `always`: the form applies even where the entry has a form for the device (whose result differs, e.g.
  `aminmax` over all elements); otherwise only where it has none;
- `passed`: the form applies (as with `always`) only where the call passes one of these parameters, the ones
  the device's single call lacks (`torch.linspace(..., dtype=d)`); other calls take the ordinary rewrite;
- `updates`: the parameter (or ``self``) the form writes into (``{self}.copy_(...)``): it must be a name or
  an attribute chain, since MindSpore's views (``x[0]``) do not write through;
- `only_bound`: the form is for the calls that bind to `params` only; another call (more positional arguments)
  gets the entry's ordinary rewrite (`torch.cartesian_prod` of one tensor, which MindSpore returns as a column);
- `imports`: the modules beside MindSpore that the form names (``numpy``): the fix imports each under its
  own name;
- `unsafe`: parameters whose value the form ignores and that change something else than the result (a
  gradient): passing one makes the fix unsafe; `true`: the fix is always unsafe (a layer written as a
  function, which a SequentialCell does not take).

An argument used more than once in the form whose text could give another value when evaluated again (a
call) is evaluated once, through a ``lambda``.

Used by torch.roll, torch.Tensor.roll, torch.nn.functional.normalize, torch.nn.functional.layer_norm,
torch.linalg.vander, torch.nn.functional.embedding, torch.aminmax, torch.Tensor.aminmax,
torch.nn.functional.relu, torch.nn.functional.silu, torch.Tensor.zero_, torch.Tensor.normal_, torch.Tensor.uniform_, torch.round,
torch.Tensor.round, torch.take,
torch.scatter_add, torch.Tensor.scatter_add, torch.get_default_dtype, torch.nn.functional.soft_margin_loss,
torch.nn.Unfold, torch.nn.SoftMarginLoss, torch.nn.InstanceNorm1d, torch.nn.InstanceNorm2d, torch.nn.InstanceNorm3d,
torch.cartesian_prod, torch.nn.functional.scaled_dot_product_attention, torch.linspace, torch.finfo, torch.iinfo,
torch.nn.functional.rms_norm, torch.rms_norm, torch.nn.functional.batch_norm, torch.hub.load_state_dict_from_url,
torch.utils.model_zoo.load_url, torch.nn.init._calculate_fan_in_and_fan_out, torch.nn.TripletMarginLoss,
torch.nn.functional.triplet_margin_loss, torch.diag, torch.Tensor.diag, torch.Tensor.fill_diagonal_, torch.index_fill,
torch.Tensor.index_fill, torch.Tensor.index_fill_, torch.nn.functional.interpolate, torch.nn.Embedding.from_pretrained,
torch.squeeze, torch.unique, torch.Tensor.unique, torch.Tensor.squeeze, torch.get_autocast_dtype,
torch.get_autocast_cpu_dtype, torch.get_autocast_gpu_dtype, torch.jit.annotate, torch.nn.functional.fold, torch.cat,
torch.concat, torch.expand_copy, torch.normal, torch.nn.ZeroPad1d, torch.nn.ZeroPad3d, torch.range,
torch.bartlett_window, torch.blackman_window, torch.polygamma, torch.special.polygamma, torch.Tensor.polygamma,
torch.bitwise_not, torch.svd, torch.linalg.svd, torch.linalg.svdvals, torch.index_add, torch.Tensor.index_add,
torch.Tensor.index_add_, torch.nn.LocalResponseNorm, torch.bernoulli, torch.poisson, torch.randint_like,
torch.linalg.lu_solve and torch.fft.ihfft."""

from __future__ import annotations

import ast
import string
from dataclasses import replace

from ..model import ApiCall, Arg, CallKind, Fix, Rewrite
from .base import PASS, Context, Pass, Transform, register
from .edits import NOT_LITERAL, EditBuilder, keyword_arg, partial_call, pure, receiver_length, written_literal

def bind(call: ApiCall, params: tuple[str, ...]) -> dict[str, Arg] | None:
    """The call's arguments by torch parameter name, as Python binds them; None where it cannot be told or
    the call passes something the parameters do not name. A last parameter ``**`` takes any other keyword
    (a ``**kwargs`` of the API: einops's axis lengths), and the call's last ``**mapping`` (or ``*args``) as
    written; a last ``*name`` every further positional argument,
    unpacked ones too (``*operands`` of ``torch.einsum(equation, *operands)``: bound to the first of them)."""
    more = params[-1:] == ("**",)
    star = params[-1][1:] if params and params[-1].startswith("*") and not more else ""
    named = params[:-1] if more or star else params
    args = list(call.args)
    while more and args and args[-1].starred and args[-1].keyword is None:
        args.pop()  # a last ``**mapping`` (or ``*args``): any other keywords, passed on as written
    positional = [a for a in args if a.keyword is None]
    head, rest = positional[:len(named)], positional[len(named):]
    keywords = [a for a in args if a.keyword is not None]
    if any(a.starred for a in head + keywords) or (rest and not star):
        return None
    bound = dict(zip(named, head))
    for arg in keywords:
        name = arg.keyword or ""
        if (name not in named and not more) or name in bound:
            return None
        bound[name] = arg
    if rest:
        bound[star] = rest[0]
    return bound


def _receiver(src: EditBuilder, call: ApiCall) -> str | None:
    if call.kind is not CallKind.METHOD or call.name_span is None:
        return None
    text = src.slice(call.span)[:receiver_length(src, call)].strip()
    return text or None


def _names_a_tensor(text: str) -> bool:
    """A name or an attribute chain (`x`, `self.weight`): what an in-place form may write into."""
    try:
        node = ast.parse(f"({text})", mode="eval").body
    except SyntaxError:
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _evaluated_once(text: str) -> bool:
    """True when the text gives the same value evaluated again (a name, attribute, constant, subscript, or a list
    display of those: ``[acc, x]``)."""
    try:
        node = ast.parse(f"({text})", mode="eval").body
    except SyntaxError:
        return False
    return all(pure(elt) for elt in node.elts) if isinstance(node, ast.List) else pure(node)


def grouped(text: str, power: bool) -> str:
    """The argument's text as one operand wherever the form puts it: `x * 2` -> `(x * 2)`; a negative number
    too, unless the form has a power (`-1 ** 2` is -1)."""
    try:
        node = ast.parse(f"({text})", mode="eval").body
    except SyntaxError:
        return f"({text})"
    atoms = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set)
    if isinstance(node, atoms) or not power and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant):
        return text
    return f"({text})"


def composed(src: EditBuilder, call: ApiCall, ctx: Context) -> Fix | None | Pass:
    if partial_call(call):
        return None  # the object is built later, from a partial: no expression stands for the class
    form: str = ctx.arg("form")
    params = tuple(ctx.arg("params", ()))
    tagged = ctx.arg("tagged", ())
    if tagged and not any(arg.tag == tag for _, tag in tagged for arg in call.args):
        return PASS  # no value of the data flow the form is for: the ordinary rewrite
    # ``out=`` (MindSpore has no out tensors) where the form does not name it: the result is copied into it
    out = keyword_arg(call, "out") if "out" not in params else None
    bound = bind(replace(call, args=tuple(a for a in call.args if a is not out)) if out is not None else call, params)
    if bound is None:
        starred = any(a.starred for a in call.args)  # perhaps one argument after all: not told
        return PASS if ctx.arg("only_bound", False) and not starred else None
    defaults = dict(ctx.arg("defaults", ()))
    texts: dict[str, str] = {}
    for name in params:
        if name in bound:
            texts[name] = src.slice(bound[name].span).strip()
        elif name in defaults:
            texts[name] = str(defaults[name])
    for name, wanted in ctx.arg("when", ()):
        if name not in texts:
            return PASS
        value = written_literal(texts[name])
        if value is NOT_LITERAL or not any(type(value) is type(one) and value == one
                                           for one in (wanted if isinstance(wanted, tuple) else (wanted,))):
            return PASS  # another value (or one not written as a literal): the form does not apply
    for name, tag in tagged:
        if name not in bound or bound[name].tag != tag:
            return PASS  # no value of the data flow the form is for: the ordinary rewrite
    for name, spared in ctx.arg("unless", ()):
        value = written_literal(texts[name]) if name in texts else NOT_LITERAL
        if value is not NOT_LITERAL and type(value) is type(spared) and value == spared:
            return PASS  # the value the single call handles: the ordinary rewrite
    receiver = _receiver(src, call)
    if receiver is not None:
        texts["self"] = receiver
    updated = ctx.arg("updates")
    if updated is not None and not _names_a_tensor(texts.get(updated, "")):
        return None  # MindSpore's views do not write through: only a named tensor is updated in place
    used = [field for _, field, _, _ in string.Formatter().parse(form) if field]
    if any(name not in texts for name in used):
        return None  # a parameter without a default, not passed
    once = sorted({name for name in used if used.count(name) > 1 and not _evaluated_once(texts[name])})
    if once:  # evaluated once: `(lambda __x: <form with __x>)(<the argument>)`
        inner = form.format(**{**{name: grouped(value, "**" in form) for name, value in texts.items()},
                               **{name: f"__{name}" for name in once}})
        text: str | None = f"(lambda {', '.join(f'__{n}' for n in once)}: {inner})({', '.join(texts[n] for n in once)})"
    elif receiver is not None and form.startswith("{self}") and used.count("self") == 1:
        # the receiver stays as it is written: a torch call in it is fixed beside this one, and the form is
        # not written again on a receiver still typed as torch's in the next round
        rest = form.format(**{name: grouped(value, "**" in form) for name, value in texts.items()} | {"self": ""})
        start = src.offset(call.span.start_line, call.span.start_col)
        end = src.offset(call.span.end_line, call.span.end_col)
        edits = src.replaced_call(src.span_of(start + receiver_length(src, call), end), rest)
        text = None
    else:
        text = form.format(**{name: grouped(value, "**" in form) for name, value in texts.items()})
    if out is not None:
        if text is None or not _names_a_tensor(src.slice(out.span).strip()):
            return None  # only a named tensor is written into (MindSpore's views do not write through)
        text = f"{src.slice(out.span).strip()}.copy_({text})"
    if text is not None:
        edits = src.replaced_call(call.span, text)
    if edits is None:
        return None
    if any(not src.name_visible(module.partition(".")[0], call.span) for module in ctx.arg("imports", ())):
        return None  # a local name shadows a module the form names
    for module in ctx.arg("imports", ()):
        imp = src.module_import_edit(module)
        if imp is not None:
            edits.append(imp)
    unsafe = ctx.arg("unsafe", ())
    # (an out tensor of another shape: torch resizes it, copy_ does not)
    safe = out is None and unsafe is not True and not any(name in bound for name in (unsafe if unsafe is not True else ()))
    return Fix(title=f"Compose {call.api} from MindSpore calls", edits=tuple(edits), safe=safe)


def in_place_flag(rewrite: Rewrite | None) -> int | None:
    """Where `rewrite` is a composed form that stands in only for a flag's true value (``when: {inplace: true}``)
    and writes its result into the first parameter (``updates: input``): the flag's position in torch's signature
    (the function's own form computes the rest out of place); None for any other rewrite."""
    if rewrite is None or rewrite.transform != Compose.name:
        return None
    params = tuple(rewrite.arg("params", ()))
    when = tuple(rewrite.arg("when", ()))
    if not params or rewrite.arg("updates") != params[0] or len(when) != 1 or when[0][1] is not True \
            or when[0][0] not in params[1:]:
        return None
    return params.index(when[0][0])


@register
class Compose(Transform):
    name = "compose"
    codes = frozenset({"TMS101", "TMS102", "TMS103"})
    needs_target = False

    def whole(self, ctx: Context) -> Fix | None | Pass:
        if ctx.call.kind not in (CallKind.CALL, CallKind.METHOD):
            return PASS
        passed = tuple(ctx.arg("passed", ()))
        if passed:
            bound = bind(ctx.call, tuple(ctx.arg("params", ())))
            if bound is not None and not any(name in bound for name in passed):
                return PASS  # none of what the single call lacks: the ordinary rewrite
        elif ctx.diag.code != "TMS103" and not ctx.arg("always", False):
            return PASS  # a single MindSpore call runs on the device: the ordinary rewrite
        return composed(ctx.src, ctx.call, ctx)
