# tools/replay/gen_module_db.py — PyTorch's ModuleInfo database (module_db) as replay cases
# (issue #36).
#
# Why: module_db lists, for each nn module, constructor and forward inputs in training and eval
# mode; spec/replay/module_db_spec.lua builds the same module through ltorch's torch.nn and
# compares.
#
# What: for each ModuleInfo, in float64, training then eval, at most CAP module inputs: the
# constructor's positional and keyword arguments, PyTorch's state_dict (keys in order, values;
# a Lazy module is first run once on the forward input so that its parameters exist), the forward
# arguments, the output, the gradients of sum(out_i * g_i) for every parameter (by name) and
# every input that requires grad (g_i recorded), and the buffers after the forward (running
# statistics). Each forward runs after torch.manual_seed(0). A module input that Lua cannot spell
# (a lambda) is recorded as skipped with the reason. A None constructor argument is null, which
# the Lua side passes as false (ltorch's spelling of None for an option).
# The module's error inputs (module_error_inputs_func) are recorded with PyTorch's error, raised
# by the constructor or the forward. Prints one JSON object {torch, entries, cases}.
#
# Use: .venv/bin/python tools/replay/gen_module_db.py > modules.json   (spec/replay/data.lua)
import json
import sys

import torch

from replay_common import (Unencodable, arg_encoder, enc, error_text, flat_tensors, int_floats, load_testing,
                           record_module_constructors)

CAP = 4


def error_case(mi, err_input):
    """An ErrorModuleInput: the same call, and PyTorch's error (at construction or forward)."""
    mi_input = err_input.module_error_input
    cargs = int_floats(mi_input.constructor_input.args)
    ckw = int_floats(dict(mi_input.constructor_input.kwargs))
    fargs, fkw = mi_input.forward_input.args, mi_input.forward_input.kwargs
    e = arg_encoder([], [fargs, fkw])
    case = {"train": True, "cargs": enc(cargs), "cn": len(cargs), "ckw": {k: enc(v) for k, v in ckw.items()},
            "fargs": [e(a) for a in fargs], "fn": len(fargs),
            "fkw": {k: e(v) for k, v in fkw.items() if v is not None}}
    try:
        m = mi.module_cls(*cargs, **ckw).to(torch.float64)
        m(*fargs, **fkw)
    except Exception as err:
        case["error"] = error_text(err)
        return case
    return None


def module_case(mi, mode_train, mi_input):
    cargs = int_floats(mi_input.constructor_input.args)
    ckw = int_floats({k: v for k, v in mi_input.constructor_input.kwargs.items()})
    fargs, fkw = mi_input.forward_input.args, mi_input.forward_input.kwargs
    case = {"train": mode_train, "cargs": enc(cargs), "cn": len(cargs),
            "ckw": {k: enc(v) for k, v in ckw.items()}}
    grad_inputs = []

    e = arg_encoder(grad_inputs, [fargs, fkw])
    case["fargs"], case["fn"] = [e(a) for a in fargs], len(fargs)
    case["fkw"] = {k: e(v) for k, v in fkw.items() if v is not None}
    torch.manual_seed(0)
    m = mi.module_cls(*cargs, **ckw).to(torch.float64)
    m.train(mode_train)
    if isinstance(m, torch.nn.modules.lazy.LazyModuleMixin):
        with torch.no_grad():
            m(*fargs, **fkw)
        case["lazy"] = True
    sd = m.state_dict()
    case["keys"] = list(sd.keys())
    case["sd"] = {k: enc(v) for k, v in sd.items()}
    torch.manual_seed(0)
    out = m(*fargs, **fkw)
    case["out"] = enc(out)
    case["buffers"] = {k: enc(v) for k, v in m.named_buffers()}
    outs = [t for t in flat_tensors(out, []) if t.requires_grad and t.dtype.is_floating_point]
    names = [n for n, p in m.named_parameters()]
    wrt = [p for n, p in m.named_parameters()] + grad_inputs
    if outs and wrt:
        gen = torch.Generator().manual_seed(1)
        gout = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t in outs]
        try:
            grads = torch.autograd.grad(outs, wrt, gout, allow_unused=True)
            case["gout"] = [enc(g) for g in gout]
            case["pgrads"] = {n: enc(g) for n, g in zip(names, grads) if g is not None}
            case["grads"] = [enc(g) if g is not None else None for g in grads[len(names):]]
        except Exception as err:
            case["gerr"] = error_text(err)
    return case


def main():
    _, cm, _ = load_testing()
    record_module_constructors()
    entries, cases = [], []
    for mi in cm.module_db:
        key = mi.module_cls.__name__
        entry = {"key": key, "name": key}
        entries.append(entry)
        skips = {}
        n = 0
        for mode_train in (True, False):
            try:
                inputs = mi.module_inputs_func(mi, device="cpu", dtype=torch.float64,
                                               requires_grad=True, training=mode_train)
            except Exception as err:
                skips["module_inputs_func failed: " + error_text(err)] = 1
                continue
            taken = 0
            for mi_input in inputs:
                if taken >= CAP:
                    break
                try:
                    case = module_case(mi, mode_train, mi_input)
                except Unencodable as u:
                    skips[str(u)] = skips.get(str(u), 0) + 1
                    continue
                except Exception as err:
                    why = "PyTorch raises: " + error_text(err)[:80]
                    skips[why] = skips.get(why, 0) + 1
                    continue
                case["entry"] = key
                cases.append(case)
                taken += 1
                n += 1
        if mi.module_error_inputs_func is not None:
            try:
                err_inputs = list(mi.module_error_inputs_func(mi, device="cpu", dtype=torch.float64,
                                                              requires_grad=False, training=True))
            except Exception:
                err_inputs = []
            for ei in err_inputs:
                try:
                    case = error_case(mi, ei)
                except Exception:
                    continue
                if case is not None:
                    case["entry"] = key
                    cases.append(case)
        if skips:
            entry["skipped"] = skips
        if n == 0:
            entry["skip"] = "no replayable module input: " + ", ".join(skips)
    json.dump({"torch": torch.__version__, "entries": entries, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
