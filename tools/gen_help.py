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
spelled `logsigmoid`. Borrowed text keeps no signature (the REPL shows ATen's). Names with
no PyTorch documentation at all (autograd internals such as `*_backward`) are left out; the
REPL still shows their ATen schema.

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
        default = None if p.default is p.empty else repr(p.default)
        out.append((p.name, default, "kw" if p.kind == p.KEYWORD_ONLY else "pos"))
    return out


def call_form(display, params, returns):
    positional = [n for n, d, k in params if k == "var" or (d is None and k == "pos")]
    options = [f"{n} = {lua_value(d) if d is not None else 'nil'}" for n, d, k in params
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


# ---------------------------------------------------------------- output
def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def lua_entry(name, e):
    args = ", ".join("{" + ", ".join(lua_string(x) for x in a) + "}" for a in e["args"])
    sigs = ", ".join(lua_string(s) for s in e["sig"])
    return (f"  [{lua_string(name)}] = {{ sig = {{ {sigs} }}, doc = {lua_string(e['doc'])},\n"
            f"    args = {{ {args} }}, src = {lua_string(e['src'])} }},\n")


def missing_reason(name, kind):
    """Why a name has no entry: PyTorch has no such object, or has it without a docstring."""
    return "no docstring" if any(resolve(c) is not None for c, _ in candidates(name, kind)) else "not in PyTorch"


def write(path, names, entries):
    documented = sum(1 for n, _ in names if n in entries)
    with open(path, "w") as f:
        f.write(f"-- Generated by tools/gen_help.py from the docstrings of PyTorch {torch.__version__}. DO NOT EDIT.\n")
        f.write("-- Regenerate: .venv/bin/python tools/gen_help.py   (asks build/ltorch for the bound names)\n")
        f.write(f"-- {documented} of {len(names)} bound public names have PyTorch documentation.\n")
        f.write("-- entries: name -> sig (ltorch calling form), doc (summary paragraph), args ({name, type, text}),\n")
        f.write("-- src (the PyTorch name the text is from); missing: name -> why it has no entry.\n")
        f.write(f"return {{\nversion = {lua_string(torch.__version__)},\nentries = {{\n")
        for name in sorted(entries):
            f.write(lua_entry(name, entries[name]))
        f.write("},\nmissing = {\n")
        for name, kind in sorted(names):
            if name not in entries:
                f.write(f"  [{lua_string(name)}] = {lua_string(missing_reason(name, kind))},\n")
        f.write("},\n}\n")
    return documented


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ltorch", default="build/ltorch", help="the ltorch binary (lists the bound names)")
    ap.add_argument("--out", default="lua/torch/repl/_help_gen.lua")
    opts = ap.parse_args()
    names = ltorch_names(opts.ltorch)
    entries = {}
    for name, kind in names:
        e = entry(name, kind)
        if e:
            entries[name] = e
    documented = write(opts.out, names, entries)
    print(f"gen_help: {documented} of {len(names)} names documented -> {opts.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
