# tools/replay/replay_common.py — what the three replay generators share (issue #36).
#
# Why: tools/replay/gen_{op,module,optim}_db.py turn PyTorch's own test databases into cases that
# spec/replay/ replays through ltorch. They need the same value encoding (the Lua side,
# spec/replay/codec.lua, decodes it) and the same way to import torch.testing._internal.
#
# What: load_testing() imports the databases (with a stand-in for `expecttest`, a test-only
# dependency the wheel does not install); enc(x) encodes a Python value as JSON:
#   tensor          {"T": dtype, "s": shape, "v": flat values, "rg": requires_grad}
#                   (complex through view_as_real, "c": true; half, bfloat16 and float8 as
#                   floats; uint64 as decimal strings, exact); a
#                   non-contiguous one as its storage's b values + "st" strides, "off" offset
#   None            null            dtype    {"dtype": name}     device  "cpu"
#   memory format   {"mf": name}    layout   {"layout": name}    Size    list
#   a torch / torch.nn.functional function   {"fn": "torch.nn.functional.gelu"}
#   a torch.nn module   {"module": class name, "args", "kw"} (record_module_constructors())
#   tuple / list    list            dict     {"D": {key: value}}
# and raises Unencodable(reason) for what Lua has no spelling of (a complex Python scalar, a
# slice, a Generator, a lambda, a module instance...): the case is then skipped with that reason.
# int_floats(x) turns every float with an integral value into an int: Lua has one number type
# and ltorch reads an integral number as a Python int, so the reference is computed that way.
#
# Use: imported by the generators, not run.
import math
import sys
import types
import unittest

import torch
import torch.nn.functional as F


class Unencodable(Exception):
    pass


def load_testing():
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            stub = types.ModuleType("expecttest")
            stub.TestCase = unittest.TestCase
            sys.modules["expecttest"] = stub
    import torch.testing._internal.common_methods_invocations as cmi
    import torch.testing._internal.common_modules as cm
    import torch.testing._internal.common_optimizers as co
    return cmi, cm, co


def record_module_constructors():
    """Every nn.Module built from now on keeps its constructor's arguments (enc spells a module
    passed as an argument, e.g. TransformerEncoder's layer, as the call that built it)."""
    def new(cls, *args, **kwargs):
        obj = object.__new__(cls)
        object.__setattr__(obj, "_replay_ctor", (args, kwargs))
        return obj
    torch.nn.Module.__new__ = new


_FN_NAMES = {}


def _fn_name(f):
    if not _FN_NAMES:
        for prefix, ns in (("torch.nn.functional.", F), ("torch.", torch)):
            for k in dir(ns):
                v = getattr(ns, k, None)
                if callable(v) and not isinstance(v, type):
                    _FN_NAMES.setdefault(id(v), prefix + k)
    return _FN_NAMES.get(id(f))


def enc_tensor(t, views=False, sid=None):
    t = t.detach()
    if t.device.type != "cpu":
        raise Unencodable("a tensor on the %s device" % t.device.type)
    if t.layout != torch.strided:
        raise Unencodable("a %s tensor" % str(t.layout).replace("torch.", ""))
    if t._is_zerotensor():
        t = torch.zeros(t.shape, dtype=t.dtype)
    d = {"T": str(t.dtype)[6:], "s": list(t.shape)}
    if sid is not None:
        d["sid"] = sid
    if views and (sid is not None or not t.is_contiguous() or t.storage_offset() != 0) and t.numel() > 0:
        # a view: the values of its storage, then as_strided(size, stride, offset) over them
        n = t.untyped_storage().nbytes() // t.element_size()
        d["st"], d["off"] = list(t.stride()), t.storage_offset()
        t, d["b"] = t.as_strided((n,), (1,), 0), n
    if t.is_complex():
        t = torch.view_as_real(t.resolve_conj())
        d["c"] = True
    elif t.dtype.is_floating_point and t.dtype.itemsize <= 2:   # half, bfloat16, float8
        t = t.double()
    d["v"] = t.reshape(-1).tolist()
    if t.dtype == torch.uint64:   # exact as decimal strings: JSON readers make numbers doubles
        d["v"] = [str(v) for v in d["v"]]
    return d


def enc(x, views=False, sid=None):
    """views: a non-contiguous tensor keeps its layout (arguments); else its values (results).
    sid: the tensor shares its storage with another argument (the same sid)."""
    if isinstance(x, torch.Tensor):
        d = enc_tensor(x, views, sid)
        if x.requires_grad:
            d["rg"] = True
        return d
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x
    if isinstance(x, complex):
        raise Unencodable("a complex Python scalar")
    if isinstance(x, torch.dtype):
        return {"dtype": str(x)[6:]}
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, torch.memory_format):
        return {"mf": str(x)[6:]}
    if isinstance(x, torch.layout):
        return {"layout": str(x)[6:]}
    if isinstance(x, (list, tuple)):  # torch.Size is a tuple
        return [enc(y, views) for y in x]
    if isinstance(x, dict):
        return {"D": {str(k): enc(v, views) for k, v in x.items()}}
    if isinstance(x, torch.nn.Module):
        ctor = x.__dict__.get("_replay_ctor")
        if ctor is None or type(x).__module__.split(".")[:2] != ["torch", "nn"]:
            raise Unencodable("an nn.Module instance as an argument")
        return {"module": type(x).__name__, "args": enc(list(ctor[0])),
                "kw": {k: enc(v) for k, v in ctor[1].items() if v is not None}}
    if callable(x):
        name = _fn_name(x)
        if name is None:
            raise Unencodable("a Python callable (%s)" % getattr(x, "__name__", type(x).__name__))
        return {"fn": name}
    raise Unencodable("a Python %s" % type(x).__name__)


def arg_encoder(grad_inputs, values):
    """enc for call arguments (all of them in `values`): a tensor that requires grad is appended
    to grad_inputs and gets "gi", its index there; the same tensor passed twice keeps one gi (the
    Lua side passes one tensor twice, so both uses add to its gradient). Tensors that share a
    storage (an out= argument aliasing the input) get one "sid" and are rebuilt over one storage."""
    seen, ptrs = {}, {}
    for t in flat_tensors(values, []):
        if t.layout == torch.strided and t.device.type == "cpu" and t.numel() > 0:
            p = t.untyped_storage().data_ptr()
            ptrs.setdefault(p, []).append(id(t))
    shared = {p: i + 1 for i, p in enumerate(p for p, ids in ptrs.items() if len(ids) > 1)}

    def sid_of(x):
        if x.layout != torch.strided or x.device.type != "cpu" or x.numel() == 0:
            return None
        return shared.get(x.untyped_storage().data_ptr())

    def e(x):
        if isinstance(x, IndexKey):
            return {"ix": [e(k) for k in x.items]}
        if isinstance(x, slice):
            return {"sl": [e(x.start), e(x.stop), e(x.step)]}
        if x is Ellipsis:
            return "..."
        if isinstance(x, torch.Tensor):
            d = enc(x, True, sid_of(x))
            if x.requires_grad:
                if id(x) not in seen:
                    grad_inputs.append(x)
                    seen[id(x)] = len(grad_inputs)
                d["gi"] = seen[id(x)]
            return d
        if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
            return [e(y) for y in x]
        if isinstance(x, dict):
            return {"D": {str(k): e(v) for k, v in x.items()}}
        return enc(x, True)
    return e


class IndexKey:
    """x[idx] as ltorch spells it: always a table of items (x[{...}]); None is "None", a Python
    list of ints is the index tensor it means."""
    def __init__(self, idx):
        self.idx = idx
        items = list(idx) if isinstance(idx, tuple) else [idx]
        self.items = ["None" if k is None else torch.tensor(k) if isinstance(k, list) else k
                      for k in items]


def int_floats(x):
    if isinstance(x, float) and math.isfinite(x) and x == int(x):
        return int(x)
    if isinstance(x, list):
        return [int_floats(y) for y in x]
    if isinstance(x, tuple) and not isinstance(x, torch.Size):
        return tuple(int_floats(y) for y in x)
    if isinstance(x, dict):
        return {k: int_floats(v) for k, v in x.items()}
    return x


def flat_tensors(x, acc):
    if isinstance(x, torch.Tensor):
        acc.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            flat_tensors(y, acc)
    elif isinstance(x, dict):
        for y in x.values():
            flat_tensors(y, acc)
    return acc


def numel(x):
    return sum(t.numel() for t in flat_tensors(x, []))


def same(a, b):
    """Whether two results are equal (dtype, shape, values; NaN equal to NaN)."""
    ta, tb = flat_tensors(a, []), flat_tensors(b, [])
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if not torch.equal(x.detach(), y.detach()):
            if not (x.is_floating_point() or x.is_complex()):
                return False
            if not torch.allclose(x.detach(), y.detach(), equal_nan=True):
                return False
    if not ta:
        return repr(a) == repr(b)
    return True


def error_text(e):
    return ("%s: %s" % (type(e).__name__, e)).split("\n")[0][:300]
