#!/usr/bin/env python3
"""tools/gen_api_manifest.py -- PyTorch's public Python API, read from PyTorch itself (issue #24).

Walks the reference PyTorch with inspect.signature and writes spec/porting/api_manifest.lua: one
entry per public callable of

  torch.nn                      the nn.Module subclasses (constructor signature)
  torch.nn.functional           every public function (ATen builtins too, where they have a signature)
  torch.nn.init                 the initialisers
  torch.nn.utils                its functions, plus torch.nn.utils.rnn and .parametrizations
  torch.optim                   the Optimizer subclasses
  torch.optim.lr_scheduler      the LRScheduler subclasses and ReduceLROnPlateau
  torch.utils.data              the names of its __all__ (Dataset classes, DataLoader, samplers, ...)
  torch                         torch.* functions written in Python (not ATen builtins)
  Tensor                        Tensor methods written in Python (torch/_tensor.py, ...)
  torch.cuda                    the functions and classes dir(torch.cuda) lists from torch.cuda's own
                                modules (less Python exception types and the legacy typed
                                constructors such as torch.cuda.FloatTensor); its submodules
                                (nccl, nvtx, jiterator, ...) are not walked, torch.cuda.amp is:
  torch.cuda.amp                its deprecated autocast / GradScaler aliases and decorators
  torch.backends                per submodule (cudnn, cuda, mkldnn, ...) its functions and its
                                flags (kind "flag": PyTorch's ContextProp attributes, and the
                                torch.backends.cuda.matmul switches its cuBLASModule answers),
                                named "cudnn.benchmark", "cuda.matmul.allow_tf32", ...

Each entry: name (as ltorch resolves it), qualified (PyTorch's dotted name), namespace, kind
(module, function, optimizer, scheduler, class, method) and params, a list of
{ name, kind ("pk" positional-or-keyword, "po" positional-only, "ko" keyword-only, "var" *args,
"varkw" **kwargs), default }. A default that Lua can hold (number, boolean, string, None, a
tuple of those) is written as a Lua value (None as the sentinel None, a tuple as a Lua array
marked tuple = true); any other default is written as its Python repr in default_repr.

Regenerate:  .venv/bin/python tools/gen_api_manifest.py > spec/porting/api_manifest.lua
"""
import inspect
import math
import re
import sys
import typing
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.nn.init  # noqa: E402
import torch.nn.utils  # noqa: E402
import torch.nn.utils.parametrizations  # noqa: E402
import torch.nn.utils.rnn  # noqa: E402
import torch.optim  # noqa: E402
import torch.optim.lr_scheduler as lrs  # noqa: E402
import torch.utils.data  # noqa: E402

KIND = {
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
    inspect.Parameter.POSITIONAL_ONLY: "po",
    inspect.Parameter.KEYWORD_ONLY: "ko",
    inspect.Parameter.VAR_POSITIONAL: "var",
    inspect.Parameter.VAR_KEYWORD: "varkw",
}


class Opaque(Exception):
    pass


def lua_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def opaque_repr(v):
    """A stable text for a default Lua cannot hold: a function, class or module by its dotted name
    (its repr carries an address or a path), anything else by its repr less any address."""
    if (inspect.isfunction(v) or inspect.isclass(v) or inspect.isbuiltin(v)) and hasattr(v, "__qualname__"):
        return "%s.%s" % (v.__module__, v.__qualname__)
    if inspect.ismodule(v):
        return v.__name__
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v))


def lua_value(v):
    """v as Lua source, or Opaque when Lua cannot hold it."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "1/0" if v > 0 else "-1/0"
        return repr(v)
    if isinstance(v, str):
        return lua_str(v)
    if isinstance(v, (tuple, list)) and not hasattr(v, "_fields"):
        return "{ tuple = true, " + "".join(lua_value(x) + ", " for x in v) + "}"
    raise Opaque(opaque_repr(v))


def only_var(ps):
    return bool(ps) and all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in ps)


def params_of(obj, drop_self):
    # F.max_pool2d and kin are boolean_dispatch(return_indices) wrappers taking (*args, **kwargs):
    # their parameters are those of the two functions they choose between.
    if obj in getattr(torch._jit_internal, "boolean_dispatched", {}):
        obj = torch._jit_internal.boolean_dispatched[obj]["if_true"]
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    # nn.RNN / LSTM / GRU declare __init__(self, *args, **kwargs) with @overload'ed real forms:
    # the first overload without *args is the documented signature.
    if inspect.isclass(obj) and only_var(ps):
        for o in typing.get_overloads(obj.__init__):
            ops = list(inspect.signature(o).parameters.values())[1:]
            if not only_var(ops):
                ps = ops
                break
    out = []
    if drop_self and ps and ps[0].name == "self":
        ps = ps[1:]
    for p in ps:
        item = {"name": p.name, "kind": KIND[p.kind]}
        if p.default is not inspect.Parameter.empty:
            try:
                item["default"] = lua_value(p.default)
            except Opaque as e:
                item["default_repr"] = str(e)
        out.append(item)
    return out


def public(name):
    return not name.startswith("_")


def is_torch_module(obj, prefix="torch"):
    mod = getattr(obj, "__module__", None) or ""
    return mod == prefix or mod.startswith(prefix + ".")


ENTRIES = []


def add(namespace, name, qualified, kind, obj, drop_self=False):
    ENTRIES.append({
        "namespace": namespace, "name": name, "qualified": qualified, "kind": kind,
        "params": params_of(obj, drop_self),
    })


def ctor(cls):
    """The constructor's signature: the class's own __init__ where it has one."""
    return cls


def walk_nn():
    for name in sorted(dir(nn)):
        obj = getattr(nn, name)
        if public(name) and inspect.isclass(obj) and issubclass(obj, nn.Module):
            add("torch.nn", name, "torch.nn." + name, "module", ctor(obj))


def functions_of(mod, prefix):
    """Public functions of mod defined in a torch module, and torch's builtins it exposes."""
    for name in sorted(dir(mod)):
        if not public(name):
            continue
        obj = getattr(mod, name)
        if inspect.ismodule(obj) or inspect.isclass(obj):
            continue
        if not callable(obj):
            continue
        if isinstance(obj, (type(len),)) or is_torch_module(obj, prefix) or is_torch_module(obj):
            if getattr(obj, "__module__", None) in ("typing", "builtins") and not isinstance(obj, type(len)):
                continue
            yield name, obj


# Plumbing imported into F, not functional API: __torch_function__ dispatch helpers, an argument checker.
F_SKIP = {"boolean_dispatch", "handle_torch_function", "has_torch_function", "has_torch_function_unary",
          "has_torch_function_variadic", "assert_int_or_pair"}


def walk_functional():
    for name, obj in functions_of(F, "torch.nn.functional"):
        if name in F_SKIP:
            continue
        add("torch.nn.functional", name, "torch.nn.functional." + name, "function", obj)


def walk_init():
    for name in sorted(dir(torch.nn.init)):
        obj = getattr(torch.nn.init, name)
        if public(name) and inspect.isfunction(obj) and obj.__module__ == "torch.nn.init":
            add("torch.nn.init", name, "torch.nn.init." + name, "function", obj)


def walk_utils():
    u = torch.nn.utils
    seen = set()
    for name in sorted(dir(u)):
        obj = getattr(u, name)
        if public(name) and inspect.isfunction(obj) and is_torch_module(obj, "torch.nn.utils"):
            add("torch.nn.utils", name, "torch.nn.utils." + name, "function", obj)
            seen.add(name)
    for sub in ("rnn", "parametrizations"):
        m = getattr(u, sub)
        names = getattr(m, "__all__", None) or [n for n in dir(m) if public(n)]
        for name in sorted(names):
            obj = getattr(m, name)
            if inspect.isfunction(obj) and is_torch_module(obj, "torch.nn.utils"):
                add("torch.nn.utils." + sub, name, "torch.nn.utils.%s.%s" % (sub, name), "function", obj)
            elif inspect.isclass(obj) and is_torch_module(obj, "torch.nn.utils"):
                add("torch.nn.utils." + sub, name, "torch.nn.utils.%s.%s" % (sub, name), "class", ctor(obj))


def walk_optim():
    for name in sorted(dir(torch.optim)):
        obj = getattr(torch.optim, name)
        if (public(name) and inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer)
                and obj is not torch.optim.Optimizer):
            add("torch.optim", name, "torch.optim." + name, "optimizer", ctor(obj))
    for name in sorted(dir(lrs)):
        obj = getattr(lrs, name)
        if (public(name) and inspect.isclass(obj) and obj.__module__ == lrs.__name__
                and (issubclass(obj, lrs.LRScheduler) or obj is lrs.ReduceLROnPlateau)
                and obj is not lrs.LRScheduler):
            add("torch.optim.lr_scheduler", name, "torch.optim.lr_scheduler." + name, "scheduler", ctor(obj))


# torch.utils.data's DataPipe API (deprecated, moved out to torchdata) is not part of the manifest.
DATA_SKIP = {"DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe",
             "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
             "runtime_validation_disabled", "argument_validation"}


def walk_data():
    d = torch.utils.data
    for name in sorted(d.__all__):
        if not public(name) or name in DATA_SKIP:
            continue
        obj = getattr(d, name)
        if inspect.isclass(obj):
            add("torch.utils.data", name, "torch.utils.data." + name, "class", ctor(obj))
        elif inspect.isfunction(obj):
            add("torch.utils.data", name, "torch.utils.data." + name, "function", obj)


# torch.* entries: Python functions of torch's own modules that torch.__all__ (or torch.functional's
# __all__, for torch.unique and its kin) exports or torch/__init__.py defines (set_default_dtype is
# in no __all__), less the symbolic-shape helpers (sym_*, used by torch.compile's tracing, not by
# programs) and torch/__init__.py's internal plumbing.
TORCH_ALL = set(torch.__all__) | set(torch.functional.__all__)
TORCH_INTERNAL = {"classproperty", "get_file_path", "prepare_multiprocessing_environment",
                  "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12"}

# Tensor methods that only raise "has been removed" in PyTorch 2.
TENSOR_REMOVED = {"eig", "lstsq", "solve", "symeig", "reinforce"}


def walk_torch():
    for name in sorted(dir(torch)):
        if not public(name) or name.startswith("sym_") or name in TORCH_INTERNAL:
            continue
        obj = getattr(torch, name)
        if name not in TORCH_ALL and getattr(obj, "__module__", None) != "torch":
            continue
        if inspect.isfunction(obj) and is_torch_module(obj):
            add("torch", name, "torch." + name, "function", obj)


def walk_tensor():
    for name in sorted(dir(torch.Tensor)):
        if not public(name) or name in TENSOR_REMOVED:
            continue
        obj = inspect.getattr_static(torch.Tensor, name)
        if inspect.isfunction(obj) and is_torch_module(obj):
            add("Tensor", name, "torch.Tensor." + name, "method", obj, drop_self=True)


def is_legacy_typed(name, obj):
    """torch.cuda.FloatTensor, torch.cuda.FloatStorage, ...: PyTorch 0.x's typed constructors."""
    return obj.__module__ == "torch.cuda" and (name.endswith("Tensor") or name.endswith("Storage"))


def walk_cuda():
    c = torch.cuda
    for name in sorted(dir(c)):
        if not public(name):
            continue
        obj = getattr(c, name)
        if inspect.ismodule(obj) or not is_torch_module(obj, "torch.cuda"):
            continue
        if inspect.isclass(obj):
            if issubclass(obj, BaseException) or is_legacy_typed(name, obj):
                continue
            add("torch.cuda", name, "torch.cuda." + name, "class", ctor(obj))
        elif callable(obj):
            add("torch.cuda", name, "torch.cuda." + name, "function", obj)
    import torch.cuda.amp as amp
    for name in sorted(amp.__all__):
        obj = getattr(amp, name)
        add("torch.cuda.amp", name, "torch.cuda.amp." + name, "class" if inspect.isclass(obj) else "function", obj)


# torch.backends.cuda.matmul is a cuBLASModule whose __getattr__ answers these names
# (torch/backends/cuda/__init__.py); they are not attributes inspect can list.
MATMUL_FLAGS = ["allow_tf32", "allow_fp16_reduced_precision_reduction",
                "allow_fp16_reduced_precision_reduction_split_k", "allow_bf16_reduced_precision_reduction",
                "allow_bf16_reduced_precision_reduction_split_k", "allow_fp16_accumulation", "fp32_precision"]
BACKENDS = ["cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps", "nnpack",
            "openmp", "opt_einsum", "quantized"]


def context_props(m):
    return sorted(k for k, v in type(m).__dict__.items() if type(v).__name__ == "ContextProp")


def walk_backends():
    import importlib
    b = torch.backends
    entries = [(name, "flag", None) for name in context_props(b)]
    for sub in BACKENDS:
        m = importlib.import_module("torch.backends." + sub)
        modname = "torch.backends." + sub
        real = m.m if isinstance(m, torch.backends.PropModule) else m   # a PropModule wraps the module
        for name in sorted(dir(real)):
            if not public(name):
                continue
            obj = getattr(real, name)
            if (inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj)
                    or getattr(obj, "__module__", None) != modname):
                continue
            entries.append((sub + "." + name, "function", obj))
        entries += [(sub + "." + name, "flag", None) for name in context_props(m)]
        if sub == "cuda":
            entries += [("cuda.matmul." + name, "flag", None) for name in MATMUL_FLAGS]
        if sub == "cudnn":
            entries += [("cudnn.%s.fp32_precision" % op, "flag", None) for op in ("conv", "rnn")]
    for name, kind, obj in sorted(entries):
        if kind == "flag":
            ENTRIES.append({"namespace": "torch.backends", "name": name, "qualified": "torch.backends." + name,
                            "kind": "flag", "params": None})
        else:
            add("torch.backends", name, "torch.backends." + name, kind, obj)


def write(out):
    w = out.write
    w("-- spec/porting/api_manifest.lua — GENERATED by tools/gen_api_manifest.py from PyTorch %s; do not edit.\n"
      % torch.__version__)
    w("-- Regenerate:  .venv/bin/python tools/gen_api_manifest.py > spec/porting/api_manifest.lua\n")
    w("-- PyTorch's public Python API (issue #24): per entry its namespace, name, kind and parameters\n")
    w("-- { name, kind = pk|po|ko|var|varkw, default | default_repr }; None is the sentinel M.None.\n")
    w("local None = setmetatable({}, { __tostring = function() return \"None\" end })\n")
    w("local M = { version = %s, None = None }\n" % lua_str(torch.__version__))
    w("M.entries = {\n")
    for e in ENTRIES:
        w("  { namespace = %s, name = %s, qualified = %s, kind = %s,\n"
          % (lua_str(e["namespace"]), lua_str(e["name"]), lua_str(e["qualified"]), lua_str(e["kind"])))
        if e["params"] is None:
            w("    params = nil },\n")
            continue
        w("    params = {\n")
        for p in e["params"]:
            extra = ""
            if "default" in p:
                extra = ", default = " + p["default"]
            elif "default_repr" in p:
                extra = ", default_repr = " + lua_str(p["default_repr"])
            w("      { name = %s, kind = %s%s },\n" % (lua_str(p["name"]), lua_str(p["kind"]), extra))
        w("    } },\n")
    w("}\n")
    w("return M\n")


def main():
    walk_nn()
    walk_functional()
    walk_init()
    walk_utils()
    walk_optim()
    walk_data()
    walk_torch()
    walk_tensor()
    walk_cuda()
    walk_backends()
    write(sys.stdout)


if __name__ == "__main__":
    main()
