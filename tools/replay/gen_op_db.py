# tools/replay/gen_op_db.py — PyTorch's OpInfo database (op_db) as replay cases (issue #36).
#
# Why: op_db is PyTorch's own statement of each op's behaviour (sample inputs, error inputs);
# spec/replay/op_db_spec.lua replays it through ltorch's public API and compares.
#
# What: for each OpInfo, the public name a user calls: torch.X / torch.nn.functional.X /
# torch.linalg.X ... (from OpInfo.name), else the Tensor method (method_variant, or the in-place
# one on a fresh tensor), an attribute (x.mT), a reflected operator (__radd__: other + x) or an
# index (__getitem__: x[{items}], the Python index spelled as ltorch's key table).
# Private aten ops that PyTorch's Python exposes (torch._safe_softmax, torch.ops.aten.slice.Tensor,
# op_db's lambda over aten.max_pool2d_with_indices_backward; ATEN) are called as ltorch's torch.X of
# the same name, each sample checked against op_db's own op. Entries with no public spelling
# (CUDA-only jiterators and attention kernels, sparse ops, op_db's own lambdas) are recorded as not replayable with the reason. For CPU float64 (with input gradients where the
# op supports autograd), float32, int64 and complex64 it takes at most CAP[dtype] sample inputs
# (inputs up to MAX_NUMEL elements; one up to MAX_NUMEL_ONE where none is smaller) and records
# the call (positional and keyword arguments, encoded by replay_common.enc), PyTorch's result, and for float64 the gradients of
# sum(out_i * g_i) with respect to every input that requires grad (g_i recorded). Each call runs
# after torch.manual_seed(0), so random ops can be compared too. Up to ERR_CAP error inputs per
# entry are recorded with PyTorch's error, except one that raises only for a float standing for
# an int (Lua's 1.0 is 1): the entry lists it as errors_not_lua. An entry with no CPU sample
# that op_db's own op runs on is marked no_cpu_sample. Prints one JSON object
# {torch, entries, cases}.
#
# Use: .venv/bin/python tools/replay/gen_op_db.py > ops.json   (spec/replay/data.lua runs it
#      and caches the result under ~/.cache/ltorch/replay/)
import json
import sys

import torch

from replay_common import (IndexKey, Unencodable, arg_encoder, enc, error_text, flat_tensors, int_floats,
                           load_testing, numel, record_module_constructors, same)

CAP = {torch.float64: 4, torch.float32: 3, torch.int64: 2, torch.complex64: 2}
MAX_NUMEL = 4000
# where no sample of a dtype is that small (slice_scatter, ctc_loss), one sample up to this size
MAX_NUMEL_ONE = 20000
ERR_CAP = 6
SEED = 0
# their results are uninitialized memory: only dtype and shape are compared
UNINITIALIZED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
                 "empty_permuted"}
# op_db calls these through a lambda that reorders its sample's arguments: the public function's
# positional arguments from (input, args)
SWAP12 = lambda inp, args: [args[0], inp] + list(args[1:])  # noqa: E731
REORDER = {"where": SWAP12, "polygamma": SWAP12, "special.polygamma": SWAP12,
           "nn.functional.embedding": SWAP12, "nn.functional.embedding_bag": SWAP12, "einsum": SWAP12}
# op_db calls these on a product of its sample's two factors (svd_lowrank(a @ b.mT, q=k, M=M)):
# the public function's input is that product, a leaf of its own
FACTORS = {"svd_lowrank", "pca_lowrank"}
PRIVATE = ("_", "torch.ops.", "sparse.", "jiterator_")


def _max_pool2d_backward_call(s):
    """op_db's max_pool2d_with_indices_backward lambda pools its sample (indices, ones as the
    output gradient) and calls the aten op: the same call with those as recorded inputs."""
    if s.args:
        raise Unencodable("max_pool2d_with_indices_backward: positional pooling arguments")
    kw = s.kwargs
    ks, st = kw.get("kernel_size", ()), kw.get("stride", ())
    pad, dil, cm = kw.get("padding", (0,)), kw.get("dilation", (1,)), kw.get("ceil_mode", False)
    with torch.no_grad():
        out, idx = torch.nn.functional.max_pool2d_with_indices(
            s.input, kernel_size=ks, stride=st, padding=pad, dilation=dil, ceil_mode=cm, return_indices=True)
    st = ks if st is None else st
    return SampleFull(torch.ones_like(out), (s.input, ks, st, pad, dil, cm, idx), {})


# Private aten ops (and op_db lambdas over them) that PyTorch's Python exposes as torch.X or
# torch.ops.aten.X, and ltorch binds as torch.X: op name -> (ltorch's torch.X, PyTorch's callable,
# sample rewrite or None). Each sample's result is checked against op_db's own op (run_sample).
_aten = torch.ops.aten
ATEN = {
    "_softmax_backward_data": ("_softmax_backward_data", torch._softmax_backward_data, None),
    "_native_batch_norm_legit": ("_native_batch_norm_legit", torch._native_batch_norm_legit, None),
    "_batch_norm_with_update": ("_batch_norm_with_update", _aten._batch_norm_with_update.default, None),
    "_upsample_bilinear2d_aa": ("_upsample_bilinear2d_aa", _aten._upsample_bilinear2d_aa, None),
    "torch.ops.aten._safe_softmax.default": ("_safe_softmax", torch._safe_softmax, None),
    "_unsafe_masked_index": ("_unsafe_masked_index", torch._unsafe_masked_index, None),
    "_unsafe_masked_index_put_accumulate": ("_unsafe_masked_index_put_accumulate",
                                            torch._unsafe_masked_index_put_accumulate, None),
    "_chunk_cat": ("_chunk_cat", torch._chunk_cat, None),
    "slice": ("slice", _aten.slice.Tensor, None),
    "native_dropout_backward": ("native_dropout_backward", _aten.native_dropout_backward.default, None),
    "_segment_reduce": ("segment_reduce", torch.segment_reduce, None),
    "max_pool2d_with_indices_backward": ("max_pool2d_with_indices_backward",
                                         _aten.max_pool2d_with_indices_backward.default,
                                         _max_pool2d_backward_call),
}
ATTRS = {"T", "H", "mT", "mH"}
# x.__rop__(other) is `other op x`: a Lua user writes the torch function with the operands swapped
ROPS = {"__radd__": "add", "__rsub__": "sub", "__rmul__": "mul", "__rdiv__": "div",
        "__rmod__": "remainder", "__rpow__": "pow", "__rmatmul__": "matmul",
        "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor"}


def resolve(op):
    """(kind, name, python callable taking (input, *args, **kw)) or (None, reason, None)."""
    name = op.name
    if name == "__getitem__":   # x[{items}]: the sample's index as an IndexKey
        return "index", name, lambda x, key: x[key.idx]
    if name in ATTRS:
        return "attr", name, lambda x: getattr(x, name)
    if name in ROPS:
        f = getattr(torch, ROPS[name])
        return "rop", ROPS[name], lambda x, other: f(other, x)
    if name in ATEN:
        return "fn", "torch." + ATEN[name][0], ATEN[name][1]
    if name.startswith("jiterator_"):
        return None, "CUDA-only (a jiterator: a CUDA kernel compiled at run time)", None
    if name.startswith("sparse."):
        return None, "a sparse-layout op (its samples are sparse tensors, not replayed)", None
    if name.startswith("torch.ops."):
        return None, "a CUDA-only aten kernel (no CPU implementation)", None
    if name.startswith(PRIVATE):
        return None, "not public API (private or CUDA-only op)", None
    if name.startswith("torch."):   # torch._scaled_mm: op_db names a few by their full path
        name = name[len("torch."):]
    obj = torch
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if op.variant_test_name == "in_place" and getattr(op.inplace_variant, "__name__", None):
        mname = op.inplace_variant.__name__   # normal.in_place: x.normal_(mean, std)
        return "method", mname, lambda x, *a, **k: getattr(x, mname)(*a, **k)
    if obj is not None and callable(obj) and not isinstance(obj, type):
        return "fn", "torch." + name, obj
    if getattr(torch.Tensor, name, None) is not None:   # item: x.item()
        return "method", name, lambda x, *a, **k: getattr(x, name)(*a, **k)
    for v in (op.method_variant, op.inplace_variant):
        mname = getattr(v, "__name__", None)
        if mname and getattr(torch.Tensor, mname, None) is not None and mname != "<lambda>":
            return "method", mname, lambda x, *a, **k: getattr(x, mname)(*a, **k)
    return None, "no public function: op_db calls it through its own lambda", None


def dtypes_for(op):
    try:
        sup = op.supported_dtypes("cpu")
    except Exception:
        sup = set()
    return [d for d in CAP if d in sup]


def positional(sample, order):
    return order(sample.input, sample.args) if order else [sample.input] + list(sample.args)


def encode_call(sample, grad_inputs, order=None):
    """Encodes input + args + kwargs; tensors requiring grad get "gi" (their index in grad_inputs)."""
    e = arg_encoder(grad_inputs, [sample.input, sample.args, sample.kwargs])
    args = [e(a) for a in positional(sample, order)]
    kw = {k: e(v) for k, v in sample.kwargs.items() if v is not None}
    return args, kw


def run_sample(fn, sample, want_grad, order=None, max_numel=MAX_NUMEL, check=None):
    if numel([sample.input, sample.args, sample.kwargs]) > max_numel:
        return None
    args, kwargs = int_floats(sample.args), int_floats(sample.kwargs)
    if repr((args, kwargs)) != repr((sample.args, sample.kwargs)):
        results = []
        for a, k in ((sample.args, sample.kwargs), (args, kwargs)):
            x = sample.input.detach().clone() if isinstance(sample.input, torch.Tensor) else sample.input
            torch.manual_seed(SEED)
            try:
                results.append(fn(*positional(SampleArgs(x, a), order), **k))
            except Exception as err:
                results.append(type(err))
        if not same(results[0], results[1]):
            raise Unencodable("a float argument with an integral value (2.0): PyTorch's result "
                              "differs for the int, and Lua has one number type")
        sample.args, sample.kwargs = args, kwargs
    grad_inputs = []
    args, kw = encode_call(sample, grad_inputs, order)
    case = {"args": args, "n": len(args), "kw": kw}
    torch.manual_seed(SEED)
    try:
        out = fn(*positional(sample, order), **sample.kwargs)
    except Exception as err:
        raise Unencodable("PyTorch's public function raises for op_db's sample (op_db calls it "
                          "through its own lambda): " + error_text(err)[:80])
    case["out"] = enc(out)
    if want_grad and grad_inputs:
        outs = [t for t in flat_tensors(out, []) if t.requires_grad and t.dtype.is_floating_point]
        if outs:
            gen = torch.Generator().manual_seed(1)
            gout = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t in outs]
            try:
                grads = torch.autograd.grad(outs, grad_inputs, gout, allow_unused=True)
                case["gout"] = [enc(g) for g in gout]
                case["grads"] = [enc(g) if g is not None else None for g in grads]
            except Exception as err:
                case["gerr"] = error_text(err)
    if check is not None:   # an ATEN entry: op_db's own op on its sample gives the same result
        torch.manual_seed(SEED)
        if not same(out, check()):
            raise Unencodable("torch.X differs from op_db's op on its sample")
    return case


class SampleArgs:
    def __init__(self, inp, args):
        self.input, self.args = inp, args


class SampleFull:
    def __init__(self, inp, args, kwargs):
        self.input, self.args, self.kwargs = inp, tuple(args), dict(kwargs)


class SampleInput:
    def __init__(self, inp, kwargs):
        self.input, self.args, self.kwargs = inp, (), dict(kwargs)


def entry_cases(op, fn, inplace):
    cases, skips = [], {}
    for dtype in dtypes_for(op):
        taken = dtype_cases(op, fn, inplace, dtype, CAP[dtype], MAX_NUMEL, cases, skips)
        if taken == 0:
            dtype_cases(op, fn, inplace, dtype, 1, MAX_NUMEL_ONE, cases, skips)
    if not cases:
        # an op whose CPU dtypes are none of CAP's (_scaled_mm: float8 only): two samples of each
        try:
            others = sorted(op.supported_dtypes("cpu"), key=str)
        except Exception:
            others = []
        for dtype in others:
            dtype_cases(op, fn, inplace, dtype, 2, MAX_NUMEL, cases, skips)
    return cases, skips


def dtype_cases(op, fn, inplace, dtype, cap, max_numel, cases, skips):
    """Appends up to cap cases of dtype with inputs up to max_numel elements; returns how many."""
    want_grad = dtype == torch.float64 and op.supports_autograd and not inplace
    taken = 0
    try:
        it = iter(op.sample_inputs("cpu", dtype, requires_grad=want_grad))
    except Exception as err:
        skips["sample_inputs failed: " + error_text(err)] = 1
        return taken
    while taken < cap:
        try:
            sample = next(it)
        except StopIteration:
            break
        except Exception as err:
            skips["sample_inputs failed: " + error_text(err)] = 1
            break
        if op.name == "__getitem__":
            sample.args = (IndexKey(sample.args[0]),)
        if op.name in FACTORS:
            a, b = sample.input, sample.args[0]
            sample = SampleInput((a @ b.mT).detach().requires_grad_(a.requires_grad), sample.kwargs)
        check = None
        if op.name in ATEN:
            orig = (sample.input, tuple(sample.args), dict(sample.kwargs))
            check = lambda orig=orig: op.op(orig[0], *orig[1], **orig[2])  # noqa: E731
            if ATEN[op.name][2]:
                try:
                    sample = ATEN[op.name][2](sample)
                except Unencodable as u:
                    skips[str(u)] = skips.get(str(u), 0) + 1
                    continue
        try:
            case = run_sample(fn, sample, want_grad, REORDER.get(op.name), max_numel, check)
        except Unencodable as u:
            skips[str(u)] = skips.get(str(u), 0) + 1
            continue
        except Exception as err:
            why = "not encodable: " + error_text(err)
            skips[why] = skips.get(why, 0) + 1
            continue
        if case is None:
            continue
        case["dtype"] = str(dtype)[6:]
        cases.append(case)
        taken += 1
    return taken


def error_cases(op, fn):
    """(cases, unexpressible): an error input whose error is only Python's float-for-an-int
    (linspace(0, 3, 1.0)) is not a Lua call: Lua's 1.0 is 1, which PyTorch accepts."""
    order = REORDER.get(op.name)
    cases, unexpressible = [], []
    try:
        eis = list(op.error_inputs("cpu"))
    except Exception:
        return cases, unexpressible
    for ei in eis[:ERR_CAP]:
        si = ei.sample_input
        try:
            args, kw = encode_call(si, [], order)
        except Exception:
            continue
        try:
            fn(*positional(si, order), **si.kwargs)
        except Exception as err:
            ints = SampleArgs(si.input, int_floats(si.args))
            ints_kw = int_floats(si.kwargs)
            if repr((ints.args, ints_kw)) != repr((si.args, si.kwargs)):
                try:
                    fn(*positional(ints, order), **ints_kw)
                    unexpressible.append(error_text(err)[:80])
                    continue
                except Exception:
                    pass
            cases.append({"args": args, "n": len(args), "kw": kw, "error": error_text(err)})
    return cases, unexpressible


def has_cpu_sample(op):
    """Whether op_db has a CPU sample, in any dtype it declares on CPU, that its own op runs on
    (jiterators, the flash/efficient attention kernels, _scaled_mm_v2 and batch_norm.without_cudnn
    have none): the entries without one are left out of the "with CPU samples" share."""
    try:
        dts = sorted(op.supported_dtypes("cpu"), key=str)
    except Exception:
        return False
    for d in dts:
        try:
            s = next(iter(op.sample_inputs("cpu", d)))
            op.op(s.input, *s.args, **s.kwargs)
            return True
        except Exception:
            continue
    return False


def main():
    cmi, _, _ = load_testing()
    record_module_constructors()   # triplet_margin_with_distance_loss's distance_function module
    entries, cases = [], []
    for op in cmi.op_db:
        key = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
        kind, name, fn = resolve(op)
        entry = {"key": key, "kind": kind, "name": name}
        entries.append(entry)
        if kind is None:
            entry["skip"] = name
            if not has_cpu_sample(op):
                entry["no_cpu_sample"] = True
            continue
        inplace = name.endswith("_")
        cs, skips = entry_cases(op, fn, inplace)
        if skips:
            entry["skipped"] = skips
        if op.name in UNINITIALIZED:
            entry["meta_only"] = True
        for c in cs:
            c["entry"] = key
        cases.extend(cs)
        ecs, unexpressible = error_cases(op, fn)
        if unexpressible:
            entry["errors_not_lua"] = unexpressible
        for c in ecs:
            c["entry"] = key
            cases.append(c)
        if not cs:
            entry["skip"] = "no replayable sample: " + (", ".join(skips) or "none on CPU")
            if not has_cpu_sample(op):
                entry["no_cpu_sample"] = True

    json.dump({"torch": torch.__version__, "entries": entries, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
