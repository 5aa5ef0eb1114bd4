"""tools/gen_help.py — generates lua/torch/repl/_help_gen.lua, the help `?name` and help(x)
print at the REPL, from the reference PyTorch's own docstrings.

For every public name ltorch binds (the list torch.repl.names gives, asked of build/ltorch),
it finds the PyTorch object of the same name and extracts from its docstring:
  sig   the signature(s), rewritten in ltorch's calling form: required arguments positional,
        the ones with defaults and the keyword-only ones in a trailing options table
        (`torch.sum(input, {dtype = nil}) -> Tensor`, `x:add(other, {alpha = 1}) -> Tensor`)
  doc   the one-paragraph summary (RST roles and markup stripped)
  args  the Args / Keyword args entries: name, type, description (its first sentence)
  src   the PyTorch name the text came from
Where a name has no docstring of its own, PyTorch's conventions give one: `f_` is the in-place
version of `f`; a Tensor method and the torch function of the same name share their text;
a functional generated under torch.nn.functional may be documented as torch.X, and torch.X
as torch.nn.functional.X, torch.autograd.X or torch.nn.utils.rnn.X; `log_sigmoid` may be
spelled `logsigmoid`. Borrowed text keeps no signature (the REPL shows ATen's).

Two more sources, for names PyTorch gives no text of its own (each entry says which it is):
  FAMILY   an undocumented PyTorch name with a documented family member (clamp_max -> clamp,
           native_batch_norm -> batch_norm, ...): the member's summary is borrowed (src = its
           name), preceded by a `note` written here that says how the two relate; the
           signature is the name's own, from its ATen schema, in ltorch's calling form.
  aten     ATen internals PyTorch does not document (the *_backward and *_forward ops, the
           kernels behind a public function: col2im, reflection_pad2d, mkldnn_*, ...): an
           entry generated from the ATen schema (src = "aten"): the signature in ltorch's
           calling form and a summary saying what the op is for ("ATen's backward of gelu:
           the gradient formula autograd runs for torch.nn.functional.gelu; ..."), only where
           the forward op / the public function it serves exists (BACKWARD_OF, KERNELS).
Names with neither are listed under `missing` with the reason; so are the aten ones (PyTorch
has no text for them). ltorch's own functions (torch.scope, x:describe, ...) are documented by
hand in lua/torch/repl/_help_ltorch.lua, which torch.repl.docs merges in.

Run (from the repository root; torch from scripts/setup.sh's .venv):
    .venv/bin/python tools/gen_help.py [--ltorch build/ltorch] [--out lua/torch/repl/_help_gen.lua]
"""
import argparse
import inspect
import re
import subprocess
import sys

import torch
import torch.nn.functional  # noqa: F401 (imported for attribute lookup)
import torch.optim.lr_scheduler  # noqa: F401

DOC_LIMIT = 400   # characters of summary kept
ARG_LIMIT = 160   # characters of an argument's description kept
MAX_ARGS = 12

LIST_NAMES = ('for _, e in ipairs(require("torch.repl.names").public()) do '
              'io.write(e[1], "\\t", e[2], "\\n") end')


def ltorch_names(binary):
    """The (name, kind) pairs torch.repl.names.public() lists."""
    out = subprocess.run([binary, "-e", LIST_NAMES], capture_output=True, text=True, check=True)
    return [tuple(line.split("\t")) for line in out.stdout.splitlines() if "\t" in line]


def resolve(dotted):
    obj = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def docstring(obj):
    doc = getattr(obj, "__doc__", None) if obj is not None else None
    if not isinstance(doc, str) or not doc.strip():
        return None
    return inspect.cleandoc(doc)


# ---------------------------------------------------------------- RST to plain text
ROLE = re.compile(r":(?:attr|func|meth|class|mod|obj|data|ref|math|samp|exc|any|term):`([^`]*)`")


def role_text(m):
    text = m.group(1)
    link = re.match(r"^(.*?)\s*<[^>]*>$", text)
    if link and link.group(1):
        return link.group(1)
    if text.startswith("~"):
        return text[1:].split(".")[-1]
    return text


def plain(text):
    text = ROLE.sub(role_text, text)
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r"`([^`]*)`_?", r"\1", text)
    text = re.sub(r"\\(?:text|mathrm|operatorname|textbf|mathbf)\{([^}]*)\}", r"\1", text)
    text = re.sub(r"\\(?:left|right)\b", "", text)
    text = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1)/(\2)", text)
    text = text.replace("\\ ", "").replace("\\", "")
    return re.sub(r"\s+", " ", text).strip()


def shorten(text, limit):
    if len(text) <= limit:
        return text
    cut = text[:limit]
    stop = cut.rfind(". ")
    return cut[:stop + 1] if stop > limit // 3 else cut.rstrip() + "..."


def first_sentence(text, limit):
    stop = text.find(". ")
    return text[:stop + 1] if 0 < stop < limit else shorten(text, limit)


# ---------------------------------------------------------------- docstring parts
SIG_LINE = re.compile(r"^(?:\.\. function:: )?([\w.]+)\((.*)\)\s*(?:->\s*(.+))?$")
SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters|Keyword args|Keyword arguments)\s*:\s*$")
ENTRY = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def signatures(doc):
    """Signature lines: leading ones and `.. function::` overloads -> [(params, returns)]."""
    sigs = []
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        m = SIG_LINE.match(line.strip())
        leading = all(not x.strip() or SIG_LINE.match(x.strip()) for x in lines[:i])
        if m and (leading or line.strip().startswith(".. function::")):
            sigs.append((m.group(2), (m.group(3) or "").strip()))
    return sigs


def summary(doc):
    """The first paragraph that is prose (not a signature, directive or section)."""
    for para in re.split(r"\n\s*\n", doc):
        lines = para.strip().splitlines()
        while lines and SIG_LINE.match(lines[0].strip()):  # a signature glued to its text
            lines = lines[1:]
        para = "\n".join(lines)
        first = lines[0].strip() if lines else ""
        if not first or first.startswith((".. ", ">>>", ":")):
            continue
        if SECTION.match(first) or first.endswith("::") and len(first) < 20:
            continue
        return shorten(plain(para), DOC_LIMIT)
    return None


def arguments(doc):
    """[(name, type, description)] from the Args / Keyword args sections."""
    args, lines, i = [], doc.splitlines(), 0
    while i < len(lines):
        m = SECTION.match(lines[i])
        i += 1
        if not m:
            continue
        base, entry_indent, current = len(m.group(1)), None, None
        while i < len(lines):
            line = lines[i]
            indent = len(line) - len(line.lstrip())
            if line.strip() and indent <= base:
                break
            e = ENTRY.match(line)
            if line.strip() and e and (entry_indent is None or indent == entry_indent):
                entry_indent = indent
                current = [e.group(2), (e.group(3) or "").strip(), e.group(4)]
                args.append(current)
            elif current is not None and line.strip():
                current[2] += " " + line.strip()
            i += 1
    seen, out = set(), []
    for name, typ, desc in args:
        if name not in seen:
            seen.add(name)
            out.append((name, plain(typ), first_sentence(plain(desc), ARG_LIMIT)))
    return out[:MAX_ARGS]


# ---------------------------------------------------------------- ltorch calling form
def split_params(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def lua_value(text):
    text = text.strip()
    table = {"None": "nil", "True": "true", "False": "false", "inf": "math.huge", "-inf": "-math.huge",
             "math.inf": "math.huge", "float('inf')": "math.huge"}
    if text in table:
        return table[text]
    if text[:1] in "([" and text[-1:] in ")]":
        return "{" + ", ".join(lua_value(p) for p in split_params(text[1:-1])) + "}"
    if re.match(r"^'[^']*'$", text):
        return '"' + text[1:-1] + '"'
    return text


def params_from_text(text):
    """[(name, default or None, kind)] from "a, b=1, *, c=None" (annotations dropped)."""
    out, kwonly = [], False
    for p in split_params(text):
        if p == "*":
            kwonly = True
            continue
        if p.startswith("**"):
            continue
        if p.startswith("*"):
            out.append(("...", None, "var"))
            kwonly = True
            continue
        name, _, default = p.partition("=")
        name = name.split(":")[0].strip()
        if name in ("self", "/"):
            continue
        out.append((name, default.strip() or None, "kw" if kwonly else "pos"))
    return out


def default_text(value):
    """A Python default as text; a function by its dotted name (its repr holds an address)."""
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def params_from_signature(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name == "self" or p.kind == p.VAR_KEYWORD:
            continue
        if p.kind == p.VAR_POSITIONAL:
            out.append(("...", None, "var"))
            continue
        default = None if p.default is p.empty else default_text(p.default)
        out.append((p.name, default, "kw" if p.kind == p.KEYWORD_ONLY else "pos"))
    return out


LUA_KEYWORDS = {"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
                "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"}


def option_key(name):
    """An options-table key as Lua needs it written: {["end"] = 5} for a Lua keyword."""
    return f'["{name}"]' if name in LUA_KEYWORDS else name


def call_form(display, params, returns):
    positional = [n for n, d, k in params if k == "var" or (d is None and k == "pos")]
    options = [f"{option_key(n)} = {lua_value(d) if d is not None else 'nil'}" for n, d, k in params
               if k != "var" and (d is not None or k == "kw")]
    if options:
        positional.append("{" + ", ".join(options) + "}")
    text = f"{display}({', '.join(positional)})"
    return text + (f" -> {returns}" if returns and returns != "None" else "")


def display_name(name, kind):
    return "x:" + name.rsplit(".", 1)[1] if kind == "method" else name


# ---------------------------------------------------------------- one name
def candidates(name, kind):
    """(PyTorch name, note) pairs to try, best first."""
    short = name.rsplit(".", 1)[1]
    ns = name.rsplit(".", 1)[0]
    out = [(name, None)]
    if kind == "method":
        out.append(("torch." + short, None))
    elif ns == "torch":
        out.append(("torch.Tensor." + short, None))
    if ns == "torch.nn.functional":
        out += [("torch." + short, None), ("torch.Tensor." + short, None)]
        dims = re.sub(r"\d+d$", "", short)  # upsample_bilinear2d is F.upsample_bilinear
        if dims != short:
            out.append((ns + "." + dims, None))
    else:
        out.append(("torch.nn.functional." + short, None))
    out += [("torch.autograd." + short, None), ("torch.nn.utils.rnn." + short, None)]
    if "_" in short.strip("_"):  # F.log_sigmoid is PyTorch's F.logsigmoid
        out.append((ns + "." + short.replace("_", ""), None))
    if short.endswith("_") and not short.endswith("__"):
        base = ns + "." + short[:-1]
        out += [(c, "In-place version of " + c + ".") for c, _ in candidates(base, kind)]
    return out


def short_base(name):
    """The out-of-place name of an in-place one (torch.Tensor.abs_ -> torch.abs), else None."""
    ns, short = name.rsplit(".", 1)
    if short.endswith("_") and not short.endswith("__"):
        return (ns if ns != "torch.Tensor" else "torch") + "." + short[:-1]
    return None


REFERENCE = re.compile(r"^(See|Alias for) ([\w.]+)(?:\(\))?\.?$")


def pointed_summary(text, source, depth=0):
    """The summary a "See torch.abs" / "Alias for abs" pointer leads to, or None."""
    m = REFERENCE.match(text)
    if not m or depth > 3:
        return None
    target = m.group(2)
    if not target.startswith("torch."):
        target = source.rsplit(".", 1)[0] + "." + target
    doc = docstring(resolve(target))
    more = doc and summary(doc)
    if not more:
        return None
    return pointed_summary(more, target, depth + 1) or more


def follow(text, source):
    """A pointer followed: "See torch.abs: Computes the absolute value of ..."."""
    final = pointed_summary(text, source)
    return f"{text.rstrip('.')}: {final}" if final else text


def entry(name, kind):
    for source, note in candidates(name, kind):
        obj = resolve(source)
        doc = docstring(obj)
        text = doc and summary(doc)
        if not text:
            continue
        text = follow(text, source)
        if note:
            text = note + " " + text
        elif text.startswith("In-place version of") and len(text) < 80 and short_base(name):
            base_doc = docstring(resolve(short_base(name)))
            if base_doc and summary(base_doc):
                text = text.rstrip(".") + ". " + summary(base_doc)
        return build(name, kind, obj, doc, text, source)
    return None


def build(name, kind, obj, doc, text, source):
    display = display_name(name, kind)
    sigs = []
    if source != name:  # borrowed text: its signature is another function's (help shows ATen's)
        obj, doc_sigs = None, []
    else:
        doc_sigs = signatures(doc)
    for params, returns in doc_sigs:
        sigs.append(call_form(display, params_from_text(params), returns))
    if not sigs and obj is not None and callable(obj):
        params = params_from_signature(obj)
        if params is not None:
            sigs.append(call_form(display, params, None))
    args = arguments(doc)
    if not args and kind == "method":
        fdoc = docstring(resolve("torch." + name.rsplit(".", 1)[1]))
        args = arguments(fdoc) if fdoc else []
    if kind == "method":  # x:f(...): the tensor is x, and methods take no out=
        args = [a for a in args if a[0] not in ("input", "self", "out")]
    return {"sig": list(dict.fromkeys(sigs))[:6], "doc": text, "args": args, "src": source}


# ---------------------------------------------------------------- ATen schemas (ltorch's index)
LIST_SCHEMAS = ('for func, variants, module in require("torch._dispatch").each_entry() do '
                'io.write(func, "\\t", variants, "\\t", module or "", "\\n") end')
SCHEMAS = {}   # ATen name -> [(schema, variants, module)], filled by main()


def load_schemas(binary):
    out = subprocess.run([binary, "-e", LIST_SCHEMAS], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            SCHEMAS.setdefault(re.match(r"[\w]+", parts[0]).group(0), []).append(tuple(parts))


def aten_exists(op):
    """Whether ATen has an op of that name (bound by ltorch, or known to this torch)."""
    if op in SCHEMAS:
        return True
    try:
        getattr(torch.ops.aten, op)
        return True
    except (AttributeError, RuntimeError):
        return False


ATEN_DEFAULTS = {"Mean": "1", "Sum": "2", "contiguous_format": "torch.contiguous_format"}


def schema_params(text, drop_self=False, allow_out=False):
    """[(name, default or None, kind)] of an ATen parameter list; None for an out= overload."""
    out, kwonly = [], False
    parts = split_params(text)
    names = {p.partition("=")[0].strip().rpartition(" ")[2] for p in parts}
    self_name = "self" if "input" in names else "input"   # PyTorch calls self `input`, unless taken
    for p in parts:
        if p == "*":
            kwonly = True
            continue
        left, _, default = p.partition("=")
        typ, _, name = left.strip().rpartition(" ")
        if kwonly and "!" in typ and not allow_out:
            return None   # out= overload: ltorch's calling form shows the plain one
        default = default.strip() or None
        if default is not None:
            default = ATEN_DEFAULTS.get(default, default)
        if name == "self" and drop_self:   # x:f(...): x is self
            continue
        out.append((self_name if name == "self" else name, default, "kw" if kwonly else "pos"))
    return out


def aten_signatures(name, kind, allow_out=False):
    """The name's ATen schemas in ltorch's calling form (out= overloads left out unless there is
    nothing else)."""
    ns, short = name.rsplit(".", 1)
    want = "m" if kind == "method" else "f"
    module = "nn" if ns == "torch.nn.functional" else ""
    sigs = []
    for schema, variants, mod in SCHEMAS.get(short, []):
        if want not in variants or (kind != "method" and mod != module):
            continue
        m = re.match(r"^[\w.]+\((.*)\)\s*->\s*(.+)$", schema)
        if not m:
            continue
        params = schema_params(m.group(1), drop_self=kind == "method", allow_out=allow_out)
        if params is None:
            continue
        returns = re.sub(r"\([a-z]!?\)", "", m.group(2)).strip()
        sigs.append(call_form(display_name(name, kind), params, "" if returns == "()" else returns))
    if not sigs and not allow_out:
        return aten_signatures(name, kind, allow_out=True)
    return list(dict.fromkeys(sigs))[:6]


# ---------------------------------------------------------------- undocumented PyTorch names
# short name (torch.X, x:X and F.X alike) -> (the documented PyTorch name whose summary is
# borrowed, the note that relates the two). For names PyTorch has without a docstring; an
# in-place `X_` takes X's mapping. Each mapping says why it holds.
CONV = "torch.nn.functional.conv2d"
CONV_T = "torch.nn.functional.conv_transpose2d"
SYNC = "torch.nn.functional.batch_norm"
FAMILY = {
    "NLLLoss2d": ("torch.nn.NLLLoss", "nn.NLLLoss2d is PyTorch's deprecated name of nn.NLLLoss (which takes N-d input "
                  "itself); it warns and works the same."),
    "Container": ("torch.nn.Module", "nn.Container is PyTorch's deprecated holder of named modules, "
                  "nn.Container({name = module, ...}); it warns. Subclass nn.Module instead."),
    "CrossMapLRN2d": ("torch.nn.LocalResponseNorm", "nn.CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1) is the "
                      "legacy Lua Torch form of LocalResponseNorm, kept by PyTorch for 4-D input."),
    "RNNCellBase": ("torch.nn.RNNCell", "nn.RNNCellBase is the base class of nn.RNNCell, nn.LSTMCell and nn.GRUCell: "
                    "their weights (weight_ih, weight_hh, bias_ih, bias_hh) and init."),
    "clamp_max": ("torch.clamp", "clamp_max(input, max) is clamp(input, {max = max}): every element capped at max."),
    "clamp_min": ("torch.clamp", "clamp_min(input, min) is clamp(input, {min = min}): every element raised to at least min."),
    "rsub": ("torch.sub", "rsub(input, other, {alpha = 1}) is other - alpha * input: sub with its operands swapped."),
    "fill": ("torch.Tensor.fill_", "The out-of-place fill_: a new tensor shaped like input with every element value."),
    "binomial": ("torch.distributions.binomial.Binomial",
                 "binomial(count, prob) draws one sample per element from Binomial(count, prob)."),
    "split_with_sizes": ("torch.split", "split(input, split_sizes, {dim = 0}) with split_sizes a list of sizes."),
    "unsafe_split_with_sizes": ("torch.split", "split_with_sizes without the checks that make its views safe to "
                                "modify in place under autograd."),
    "slice_inverse": ("torch.slice_scatter", "The view inverse of slice, which functionalization uses to replay "
                      "a mutation made through a slice view (slice_scatter, below, writes src into a slice of "
                      "input)."),
    "ccol_indices": ("torch.Tensor.crow_indices", "The compressed column indices of a CSC or BSC tensor (as "
                     "crow_indices are a CSR tensor's compressed row indices)."),
    "ccol_indices_copy": ("torch.Tensor.crow_indices", "A copy of ccol_indices: the compressed column indices of a "
                          "CSC or BSC tensor."),
    "row_indices": ("torch.Tensor.col_indices", "The row indices of a CSC or BSC tensor (as col_indices are a CSR "
                    "tensor's column indices)."),
    "row_indices_copy": ("torch.Tensor.col_indices", "A copy of row_indices: the row indices of a CSC or BSC tensor."),
    "resize_as_sparse": ("torch.Tensor.resize_as_", "resize_as_ for sparse tensors."),
    "data": ("torch.Tensor.detach", "x:data() is PyTorch's x.data: a tensor sharing x's storage with requires_grad "
             "false, outside autograd (unlike detach's result, in-place changes to it are not checked by autograd)."),
    "is_same_size": ("torch.Tensor.size", "is_same_size(input, other): whether the two tensors have the same sizes."),
    "align_tensors": ("torch.Tensor.align_as", "Aligns named tensors to one common order of dimension names."),
    "embedding_renorm": ("torch.nn.functional.embedding", "The max_norm step of embedding: rescales, in place, the "
                         "rows of weight picked by indices whose norm (of order norm_type) exceeds max_norm."),
    "constant_pad_nd": ("torch.nn.functional.pad", 'The kernel behind pad(input, pad, {mode = "constant", value = '
                        'value}).'),
    "native_norm": ("torch.norm", "The kernel behind norm for a vector norm of order p."),
    "frobenius_norm": ("torch.norm", 'norm(input, {p = "fro"}): the Frobenius norm over dim.'),
    "nuclear_norm": ("torch.norm", 'norm(input, {p = "nuc"}): the nuclear norm (sum of singular values).'),
    "norm_except_dim": ("torch.nn.utils.weight_norm", "The norm of v (of order pow) over every dimension except "
                        "dim: weight_norm's magnitude g."),
    # batch norm: the fused kernels, and the steps SyncBatchNorm runs across devices
    "native_batch_norm": (SYNC, "The kernel behind batch_norm; also returns the saved mean and inverse standard "
                          "deviation its backward uses."),
    "cudnn_batch_norm": (SYNC, "cuDNN's batch_norm kernel; also returns what its backward uses."),
    "miopen_batch_norm": (SYNC, "MIOpen's (AMD GPUs) batch_norm kernel; also returns what its backward uses."),
    "batch_norm_stats": (SYNC, "A step of synchronized batch norm (SyncBatchNorm): input's per-channel mean and "
                         "inverse standard deviation."),
    "batch_norm_gather_stats": (SYNC, "A step of SyncBatchNorm: combines the per-device means and inverse "
                                "standard deviations into global ones and updates the running statistics."),
    "batch_norm_gather_stats_with_counts": (SYNC, "batch_norm_gather_stats with each device's element count given "
                                            "(devices with unequal batches)."),
    "batch_norm_elemt": (SYNC, "A step of SyncBatchNorm: normalizes input with the given mean and inverse standard "
                         "deviation, then applies weight and bias."),
    "batch_norm_update_stats": (SYNC, "A step of batch norm: input's batch mean and variance, with running_mean and "
                                "running_var updated by momentum."),
    "batch_norm_backward_reduce": (SYNC, "A step of SyncBatchNorm's backward: the per-channel sums of grad_output "
                                   "(and the weight and bias gradients)."),
    "batch_norm_backward_elemt": (SYNC, "A step of SyncBatchNorm's backward: the input gradient from the reduced "
                                  "sums."),
    "native_layer_norm": ("torch.nn.functional.layer_norm", "The kernel behind layer_norm; also returns the mean "
                          "and inverse standard deviation its backward uses."),
    "native_group_norm": ("torch.nn.functional.group_norm", "The kernel behind group_norm; also returns the mean "
                          "and inverse standard deviation its backward uses."),
    "native_dropout": ("torch.nn.functional.dropout", "The kernel behind dropout: returns the output and the mask "
                       "of kept elements."),
    "feature_dropout": ("torch.nn.functional.dropout2d", "Channel-wise dropout for feature maps of any rank (what "
                        "dropout1d, dropout2d and dropout3d run)."),
    # convolution: the general op and its backends
    "convolution": (CONV, "The general N-d convolution behind conv1d/2d/3d and conv_transpose1d/2d/3d, every option "
                    "explicit (stride, padding, dilation, transposed, output_padding, groups)."),
    "cudnn_convolution": (CONV, "cuDNN's convolution kernel, one of convolution's backends."),
    "cudnn_convolution_relu": (CONV, "cuDNN's fused relu(convolution(input, weight) + bias)."),
    "cudnn_convolution_add_relu": (CONV, "cuDNN's fused relu(convolution(input, weight) + alpha * z + bias)."),
    "cudnn_convolution_transpose": (CONV_T, "cuDNN's transposed convolution kernel."),
    "miopen_convolution": (CONV, "MIOpen's (AMD GPUs) convolution kernel, one of convolution's backends."),
    "miopen_convolution_relu": (CONV, "MIOpen's fused relu(convolution(input, weight) + bias)."),
    "miopen_convolution_add_relu": (CONV, "MIOpen's fused relu(convolution(input, weight) + alpha * z + bias)."),
    "miopen_convolution_transpose": (CONV_T, "MIOpen's transposed convolution kernel."),
    "miopen_depthwise_convolution": (CONV, "MIOpen's depthwise convolution kernel (groups = input channels)."),
    "mkldnn_convolution": (CONV, "oneDNN's (MKL-DNN) convolution kernel, one of convolution's CPU backends."),
    # sampling grids
    "grid_sampler": ("torch.nn.functional.grid_sample", "The op behind grid_sample, its modes given as integer "
                     "codes (interpolation: 0 bilinear, 1 nearest, 2 bicubic; padding: 0 zeros, 1 border, 2 "
                     "reflection)."),
    "grid_sampler_2d": ("torch.nn.functional.grid_sample", "grid_sampler's kernel for 4-D input."),
    "grid_sampler_3d": ("torch.nn.functional.grid_sample", "grid_sampler's kernel for 5-D input."),
    "cudnn_grid_sampler": ("torch.nn.functional.grid_sample", "cuDNN's grid_sample kernel (bilinear, zeros "
                           "padding)."),
    "affine_grid_generator": ("torch.nn.functional.affine_grid", "The op behind affine_grid."),
    "cudnn_affine_grid_generator": ("torch.nn.functional.affine_grid", "cuDNN's affine_grid kernel."),
    # recurrent layers and cells
    "rnn_tanh": ("torch.nn.RNN", "The multi-layer op behind nn.RNN with tanh, its weights passed as one list."),
    "rnn_relu": ("torch.nn.RNN", "The multi-layer op behind nn.RNN with relu, its weights passed as one list."),
    "lstm": ("torch.nn.LSTM", "The multi-layer op behind nn.LSTM, its weights passed as one list."),
    "gru": ("torch.nn.GRU", "The multi-layer op behind nn.GRU, its weights passed as one list."),
    "rnn_tanh_cell": ("torch.nn.RNNCell", "One step of an RNN cell with tanh: the op behind nn.RNNCell."),
    "rnn_relu_cell": ("torch.nn.RNNCell", "One step of an RNN cell with relu: the op behind nn.RNNCell."),
    "lstm_cell": ("torch.nn.LSTMCell", "One LSTM cell step: the op behind nn.LSTMCell."),
    "gru_cell": ("torch.nn.GRUCell", "One GRU cell step: the op behind nn.GRUCell."),
    "quantized_rnn_tanh_cell": ("torch.nn.RNNCell", "rnn_tanh_cell with quantized (packed) weights."),
    "quantized_rnn_relu_cell": ("torch.nn.RNNCell", "rnn_relu_cell with quantized (packed) weights."),
    "quantized_lstm_cell": ("torch.nn.LSTMCell", "lstm_cell with quantized (packed) weights."),
    "quantized_gru_cell": ("torch.nn.GRUCell", "gru_cell with quantized (packed) weights."),
    "miopen_rnn": ("torch.nn.LSTM", "MIOpen's (AMD GPUs) RNN kernel behind nn.RNN, nn.LSTM and nn.GRU (mode says "
                   "which)."),
    "mkldnn_rnn_layer": ("torch.nn.LSTM", "oneDNN's (MKL-DNN) kernel for one LSTM layer."),
    # pooling on other backends
    "mkldnn_adaptive_avg_pool2d": ("torch.nn.functional.adaptive_avg_pool2d", "oneDNN's adaptive_avg_pool2d "
                                   "kernel (MKL-DNN tensors)."),
    "mkldnn_max_pool2d": ("torch.nn.functional.max_pool2d", "oneDNN's max_pool2d kernel (MKL-DNN tensors)."),
    "mkldnn_max_pool3d": ("torch.nn.functional.max_pool3d", "oneDNN's max_pool3d kernel (MKL-DNN tensors)."),
    "quantized_max_pool3d": ("torch.nn.functional.max_pool3d", "max_pool3d on a quantized tensor."),
    # quantization
    "miopen_ctc_loss": ("torch.nn.functional.ctc_loss", "MIOpen's (AMD GPUs) ctc_loss kernel."),
    "fused_moving_avg_obs_fake_quant": ("torch.ao.quantization.FakeQuantize", "One fused step of a moving-average "
                                        "observer (min/max statistics, then scale and zero point) and fake "
                                        "quantization."),
}

# ATen ops PyTorch does not publish in Python, the public function each serves, what it is.
PAD = "torch.nn.functional.pad"
INTERP = "torch.nn.functional.interpolate"
KERNELS = {
    "col2im": ("torch.nn.functional.fold", "the kernel behind fold: sums columns of sliding local blocks back into "
               "an image"),
    "im2col": ("torch.nn.functional.unfold", "the kernel behind unfold: extracts sliding local blocks of an image as "
               "columns"),
    "reflection_pad1d": (PAD, 'the kernel behind pad(input, pad, {mode = "reflect"}) on the last dimension'),
    "reflection_pad2d": (PAD, 'the kernel behind pad(input, pad, {mode = "reflect"}) on the last 2 dimensions'),
    "reflection_pad3d": (PAD, 'the kernel behind pad(input, pad, {mode = "reflect"}) on the last 3 dimensions'),
    "replication_pad1d": (PAD, 'the kernel behind pad(input, pad, {mode = "replicate"}) on the last dimension'),
    "replication_pad2d": (PAD, 'the kernel behind pad(input, pad, {mode = "replicate"}) on the last 2 dimensions'),
    "replication_pad3d": (PAD, 'the kernel behind pad(input, pad, {mode = "replicate"}) on the last 3 dimensions'),
    "upsample_linear1d": (INTERP, 'the kernel behind interpolate(input, {mode = "linear"})'),
    "upsample_bicubic2d": (INTERP, 'the kernel behind interpolate(input, {mode = "bicubic"})'),
    "upsample_trilinear3d": (INTERP, 'the kernel behind interpolate(input, {mode = "trilinear"})'),
    "upsample_bilinear2d": (INTERP, 'the kernel behind interpolate(input, {mode = "bilinear"})'),
    "upsample_nearest1d": (INTERP, 'the kernel behind interpolate(input, {mode = "nearest"}) for 3-D input'),
    "upsample_nearest2d": (INTERP, 'the kernel behind interpolate(input, {mode = "nearest"}) for 4-D input'),
    "upsample_nearest3d": (INTERP, 'the kernel behind interpolate(input, {mode = "nearest"}) for 5-D input'),
    "conv_depthwise3d": ("torch.nn.functional.conv3d", "a depthwise 3-D convolution kernel (groups = input "
                         "channels), one of conv3d's backends"),
    "slow_conv3d": ("torch.nn.functional.conv3d", "the reference (no vendor library) 3-D convolution kernel"),
    "slow_conv_dilated2d": (CONV, "the reference (no vendor library) dilated 2-D convolution kernel"),
    "slow_conv_dilated3d": ("torch.nn.functional.conv3d", "the reference (no vendor library) dilated 3-D "
                            "convolution kernel"),
    "slow_conv_transpose2d": (CONV_T, "the reference (no vendor library) transposed 2-D convolution kernel"),
    "slow_conv_transpose3d": ("torch.nn.functional.conv_transpose3d", "the reference (no vendor library) "
                              "transposed 3-D convolution kernel"),
    "thnn_conv2d": (CONV, "the reference (no vendor library) 2-D convolution kernel"),
    "convolution_backward_overrideable": (CONV, "the convolution gradient an out-of-tree backend overrides (the "
                                          "backward of convolution_overrideable)"),
    "convolution_overrideable": (CONV, "the convolution entry point an out-of-tree backend overrides"),
    "mkldnn_linear": ("torch.nn.functional.linear", "linear on oneDNN (MKL-DNN) tensors"),
    "mkldnn_reorder_conv2d_weight": (CONV, "reorders a conv2d weight into oneDNN's (MKL-DNN) blocked layout"),
    "mkldnn_reorder_conv3d_weight": ("torch.nn.functional.conv3d", "reorders a conv3d weight into oneDNN's "
                                     "(MKL-DNN) blocked layout"),
    "cross_entropy_loss": ("torch.nn.functional.cross_entropy", "the op behind cross_entropy (reduction as an "
                           "integer: 0 none, 1 mean, 2 sum)"),
    "nll_loss_nd": ("torch.nn.functional.nll_loss", "the op behind nll_loss for input of any rank (reduction as "
                    "an integer: 0 none, 1 mean, 2 sum)"),
    "rrelu_with_noise": ("torch.nn.functional.rrelu", "the kernel behind rrelu: noise receives the random slopes "
                         "drawn for the negative elements"),
    "glu_jvp": ("torch.nn.functional.glu", "the forward-mode (JVP) derivative of glu"),
    "flatten_dense_tensors": ("torch._utils._flatten_dense_tensors", "flattens a list of dense tensors into one "
                              "contiguous 1-D buffer"),
    "unflatten_dense_tensors": ("torch._utils._unflatten_dense_tensors", "views a flat buffer as tensors of the "
                                "given tensors' sizes"),
    "fake_quantize_per_tensor_affine_cachemask": ("torch.fake_quantize_per_tensor_affine", "fake_quantize_per_"
                                                  "tensor_affine that also returns the mask of elements inside the "
                                                  "quantization range (for its backward)"),
    "fake_quantize_per_channel_affine_cachemask": ("torch.fake_quantize_per_channel_affine", "fake_quantize_per_"
                                                   "channel_affine that also returns the mask of elements inside "
                                                   "the quantization range (for its backward)"),
    "unique_dim": ("torch.unique", "unique(input, {dim = dim}): the unique slices along dim"),
    "unique_dim_consecutive": ("torch.unique_consecutive", "unique_consecutive(input, {dim = dim}) along dim"),
    "nonzero_numpy": ("torch.nonzero", "nonzero(input, {as_tuple = true}): one tensor of indices per dimension"),
    "normal_functional": ("torch.Tensor.normal_", "the out-of-place normal_: a tensor shaped like input of samples "
                          "from N(mean, std)"),
    "copy": ("torch.Tensor.copy_", "the out-of-place copy_: a tensor shaped like input holding src's values"),
    "copy_sparse_to_sparse": ("torch.Tensor.copy_", "copy_ from one sparse tensor into another"),
    "alias": ("torch.Tensor.view_as", "a new tensor sharing input's storage, sizes and strides (an alias view)"),
    "slice": ("torch.Tensor.narrow", "the view behind Python's x[start:end:step] along dim (positions from 0, end "
              "excluded)"),
    "matrix_H": ("torch.Tensor.mH", "x.mH as an op: the conjugate transpose of the last two dimensions"),
    "numpy_T": ("torch.Tensor.T", "x.T as an op: the dimensions reversed"),
    "set_data": (None, "what x.data = new does in PyTorch: x takes new's data, keeping its autograd identity"),
    "lift": (None, "a marker for tracing (functionalization) that lifts a tensor into the traced program; "
             "eagerly it returns input"),
    "lift_fresh": (None, "a tracing marker for a tensor constant made inside a traced function; eagerly it returns "
                   "input"),
    "lift_fresh_copy": (None, "lift_fresh that returns a copy of input"),
    "sym_size": ("torch.Tensor.size", "size(input, dim) in the symbolic-shape form tracing uses; eagerly the plain "
                 "size"),
    "sym_stride": ("torch.Tensor.stride", "stride(input, dim) in the symbolic-shape form tracing uses; eagerly the "
                   "plain stride"),
    "sym_numel": ("torch.Tensor.numel", "numel in the symbolic-shape form tracing uses; eagerly the plain count"),
    "sym_storage_offset": ("torch.Tensor.storage_offset", "storage_offset in the symbolic-shape form tracing uses; "
                           "eagerly the plain offset"),
    "output_nr": (None, "the position of this tensor among the outputs of the autograd node "
                  "that made it (its grad_fn); 0 for a leaf"),
    "is_distributed": (None, "always false: a remnant of an old PyTorch tensor kind"),
    "is_vulkan_available": (None, "whether this libtorch was built with the Vulkan backend"),
    "cudnn_is_acceptable": (None, "whether cuDNN can run ops on this tensor (a CUDA tensor of a dtype cuDNN "
                            "supports, with cuDNN available and enabled)"),
}

# *_backward ops whose forward is not simply the name without the suffix.
BACKWARD_OF = {
    "cummaxmin": ("cummax", "torch.cummax", "cummax and cummin"),
    "value_selecting_reduction": ("max", "torch.max", "the reductions that select a value along dim and return "
                                  "its index (max, min, median, mode, kthvalue)"),
    "embedding_dense": ("embedding", "torch.nn.functional.embedding", "embedding (a dense weight gradient)"),
    "embedding_sparse": ("embedding", "torch.nn.functional.embedding", "embedding (a sparse weight gradient)"),
    "infinitely_differentiable_gelu": ("gelu", "torch.nn.functional.gelu", "gelu, written with differentiable "
                                       "ops so that it can itself be differentiated"),
    "lstm_mps": ("lstm", "torch.nn.LSTM", "lstm_mps, the Apple GPU (MPS) LSTM kernel"),
    "mps_convolution": ("convolution", CONV, "mps_convolution, the Apple GPU (MPS) convolution kernel"),
    "mps_convolution_transpose": ("convolution", CONV_T, "mps_convolution_transpose, the Apple GPU (MPS) "
                                  "transposed convolution kernel"),
}

BACKWARD_PART = {"input": "the gradient for input only", "weights": "the gradients for the weights only",
                 "jvp": "its forward-mode (JVP) derivative", "elemt": "its elementwise step",
                 "reduce": "its reduction step"}

NOT_API = "not part of PyTorch's documented Python API."


def documented_name(op, ns):
    """The documented PyTorch name for ATen op `op`, or None."""
    if op in FAMILY:
        return FAMILY[op][0]
    if op in KERNELS and KERNELS[op][0]:
        return KERNELS[op][0]
    for prefix in dict.fromkeys([ns, "torch.nn.functional", "torch"]):
        for c, note in candidates(prefix + "." + op, "function"):
            if note is None and docstring(resolve(c)):
                return c
    return None


def aten_summary(name, kind):
    """The summary of an ATen-internal op PyTorch does not document, or None."""
    ns, short = name.rsplit(".", 1)
    if ns == "torch.Tensor":
        ns = "torch"
    base = short[:-1] if short.endswith("_") and not short.endswith("__") else short
    inplace = base != short
    m = re.match(r"^(.*?)_backward(?:_(input|weights|jvp|elemt|reduce))?$", base)
    if m:
        fwd, part = m.group(1), m.group(2)
        if fwd in BACKWARD_OF:
            op, target, what = BACKWARD_OF[fwd]
        elif aten_exists(fwd):
            op, target, what = fwd, documented_name(fwd, ns), fwd
        else:
            return None
        runs = f"the gradient formula autograd runs for {target or 'aten::' + op}"
        text = f"ATen's backward of {what}" + (f" ({BACKWARD_PART[part]})" if part else "") + f": {runs}; {NOT_API}"
        return text
    m = re.match(r"^(.*)_forward$", base)
    if m and aten_exists(m.group(1)):
        fwd = m.group(1)
        target = documented_name(fwd, ns) or "aten::" + fwd
        return f"ATen's forward kernel of {fwd} (what {target} runs; its extra results, if any, are what the " \
               f"backward uses); {NOT_API}"
    if base in KERNELS:
        target, what = KERNELS[base]
        see = f" See {target}." if target else ""
        text = f"ATen's {base}, {what}; {NOT_API}{see}"
        return ("In-place version of " + base + ". " if inplace else "") + text
    return None


def family_entry(name, kind):
    """An undocumented PyTorch name's entry borrowed from its FAMILY member, or None."""
    short = name.rsplit(".", 1)[1]
    base = short[:-1] if short.endswith("_") and not short.endswith("__") else short
    if base not in FAMILY:
        return None
    source, note = FAMILY[base]
    doc = docstring(resolve(source))
    text = doc and summary(doc)
    if not text:
        return None
    if base != short:
        note = f"In-place version of {base}. {note}"
    return {"sig": aten_signatures(name, kind), "doc": follow(text, source), "args": [], "src": source,
            "note": note}


def aten_entry(name, kind):
    text = aten_summary(name, kind)
    if not text:
        return None
    return {"sig": aten_signatures(name, kind), "doc": text, "args": [], "src": "aten"}


# ---------------------------------------------------------------- output
def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def lua_entry(name, e):
    args = ", ".join("{" + ", ".join(lua_string(x) for x in a) + "}" for a in e["args"])
    sigs = ", ".join(lua_string(s) for s in e["sig"])
    note = f", note = {lua_string(e['note'])}" if e.get("note") else ""
    return (f"  [{lua_string(name)}] = {{ sig = {{ {sigs} }}, doc = {lua_string(e['doc'])},\n"
            f"    args = {{ {args} }}, src = {lua_string(e['src'])}{note} }},\n")


def missing_reason(name, kind):
    """Why a name has no entry: PyTorch has no such object, or has it without a docstring."""
    return "no docstring" if any(resolve(c) is not None for c, _ in candidates(name, kind)) else "not in PyTorch"


def write(path, names, entries):
    kinds = {"pytorch": 0, "borrowed": 0, "aten": 0}
    for n, e in entries.items():
        kinds["aten" if e["src"] == "aten" else "pytorch" if e["src"] == n else "borrowed"] += 1
    documented = kinds["pytorch"] + kinds["borrowed"]
    with open(path, "w") as f:
        f.write(f"-- Generated by tools/gen_help.py from the docstrings of PyTorch {torch.__version__}. DO NOT EDIT.\n")
        f.write("-- Regenerate: .venv/bin/python tools/gen_help.py   (asks build/ltorch for the bound names)\n")
        f.write(f"-- {documented} of {len(names)} bound public names have PyTorch documentation ({kinds['pytorch']} "
                f"their own, {kinds['borrowed']} borrowed); {kinds['aten']} more from ATen's schema.\n")
        f.write("-- entries: name -> sig (ltorch calling form), doc (summary paragraph), args ({name, type, text}),\n")
        f.write("-- src (the PyTorch name the text is from, or \"aten\": generated from the ATen schema), note (how a\n")
        f.write("-- borrowed text relates, written by gen_help.py); missing: name -> why PyTorch has no text for it.\n")
        f.write(f"return {{\nversion = {lua_string(torch.__version__)},\nentries = {{\n")
        for name in sorted(entries):
            f.write(lua_entry(name, entries[name]))
        f.write("},\nmissing = {\n")
        for name, kind in sorted(names):
            if name not in entries or entries[name]["src"] == "aten":
                f.write(f"  [{lua_string(name)}] = {lua_string(missing_reason(name, kind))},\n")
        f.write("},\n}\n")
    return kinds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ltorch", default="build/ltorch", help="the ltorch binary (lists the bound names)")
    ap.add_argument("--out", default="lua/torch/repl/_help_gen.lua")
    opts = ap.parse_args()
    names = ltorch_names(opts.ltorch)
    load_schemas(opts.ltorch)
    entries = {}
    for name, kind in names:
        e = entry(name, kind) or family_entry(name, kind) or aten_entry(name, kind)
        if e:
            entries[name] = e
    kinds = write(opts.out, names, entries)
    print(f"gen_help: {len(entries)} of {len(names)} names have an entry ({kinds}) -> {opts.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
