# tools/replay/gen_optim_db.py — PyTorch's OptimizerInfo database (optim_db) as replay cases
# (issue #36).
#
# Why: optim_db lists every documented configuration of each optimizer; spec/replay/
# optim_db_spec.lua runs the same configurations through ltorch's torch.optim and compares.
#
# What: for each OptimizerInfo and each of its CPU configurations (optim_inputs_func), a small
# least-squares problem in float64: parameters w [4, 3] and b [4] (w alone for Muon, which takes
# matrices only; an embedding table with sparse gradients for SparseAdam), fixed data x [5, 3],
# y [5, 4], loss = ((x @ w.T + b - y)^2).sum(). STEPS steps of zero_grad, backward, step (LBFGS:
# step(closure)); the parameters after each step are recorded. Keyword values are encoded by
# replay_common.enc (a tensor learning rate is a tensor). A configuration PyTorch itself refuses
# on CPU is recorded as skipped. The construction error inputs (optim_error_inputs_func) are
# recorded with PyTorch's error. Prints one JSON object {torch, entries, cases}.
#
# Use: .venv/bin/python tools/replay/gen_optim_db.py > optims.json   (spec/replay/data.lua)
import json
import sys

import torch

from replay_common import Unencodable, arg_encoder, enc, error_text, load_testing

STEPS = 3


def problem(sparse):
    g = torch.Generator().manual_seed(0)
    if sparse:
        table = torch.randn(6, 3, dtype=torch.float64, generator=g)
        idx = torch.tensor([0, 2, 2, 5])
        y = torch.randn(4, 3, dtype=torch.float64, generator=g)
        return {"params": [table], "idx": idx, "y": y}
    w = torch.randn(4, 3, dtype=torch.float64, generator=g)
    b = torch.randn(4, dtype=torch.float64, generator=g)
    x = torch.randn(5, 3, dtype=torch.float64, generator=g)
    y = torch.randn(5, 4, dtype=torch.float64, generator=g)
    return {"params": [w, b], "x": x, "y": y}


def loss_of(prob, params):
    if "idx" in prob:
        out = torch.nn.functional.embedding(prob["idx"], params[0], sparse=True)
        return ((out - prob["y"]) ** 2).sum()
    out = prob["x"] @ params[0].T
    if len(params) > 1:
        out = out + params[1]
    return ((out - prob["y"]) ** 2).sum()


def run_config(cls, kwargs, prob):
    params = [p.clone().requires_grad_(True) for p in prob["params"]]
    opt = cls(params, **kwargs)
    steps = []
    for _ in range(STEPS):
        def closure():
            opt.zero_grad()
            loss = loss_of(prob, params)
            loss.backward()
            return loss
        if cls.__name__ == "LBFGS":
            opt.step(closure)
        else:
            closure()
            opt.step()
        steps.append([enc(p) for p in params])
    return steps


def error_cases(oi, key):
    """The construction error inputs (optim_error_inputs_func): the params and keywords PyTorch's
    constructor refuses, with its error. Step errors are not replayed."""
    cases = []
    for ei in oi.optim_error_inputs_func(device="cpu", dtype=torch.float64):
        if "CONSTRUCTION" not in str(ei.error_on):
            continue
        oinput = ei.optimizer_error_input
        try:
            # one encoder for the whole list: a tensor in two param groups stays one tensor
            e = arg_encoder([], [oinput.params])
            case = {"entry": key, "params": e(oinput.params), "kw": {k: enc(v) for k, v in oinput.kwargs.items()},
                    "desc": oinput.desc}
        except Exception:
            continue
        try:
            oi.optim_cls(oinput.params, **oinput.kwargs)
        except Exception as err:
            case["error"] = error_text(err)
            cases.append(case)
    return cases


def main():
    _, _, co = load_testing()
    entries, cases = [], []
    for oi in co.optim_db:
        cls = oi.optim_cls
        key = cls.__name__
        entry = {"key": key, "name": key}
        entries.append(entry)
        prob = problem(key == "SparseAdam")
        if key == "Muon":
            prob["params"] = prob["params"][:1]
        skips = {}
        for oinput in oi.optim_inputs_func(device="cpu"):
            kwargs = dict(oinput.kwargs)
            try:
                case = {"kw": {k: enc(v) for k, v in kwargs.items()}, "desc": oinput.desc,
                        "init": [enc(p) for p in prob["params"]],
                        "data": {k: enc(v) for k, v in prob.items() if k != "params"}}
                case["steps"] = run_config(cls, kwargs, prob)
            except Unencodable as u:
                skips[str(u)] = skips.get(str(u), 0) + 1
                continue
            except Exception as err:
                why = "PyTorch raises on CPU: " + error_text(err)[:80]
                skips[why] = skips.get(why, 0) + 1
                continue
            case["entry"] = key
            cases.append(case)
        cases.extend(error_cases(oi, key))
        if skips:
            entry["skipped"] = skips
    json.dump({"torch": torch.__version__, "entries": entries, "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
