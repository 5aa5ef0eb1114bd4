# spec/parity/reference.py — the PyTorch side of the parity suite (one process for all cases).
#
# Why: spec/parity/runner.lua runs every case in ltorch, then hands this program the same
# inputs, so PyTorch (Debian's python3-torch) computes the reference outputs and gradients.
#
# What: runner.lua prepends `import torch, json` and `DATA = '<path>'`; DATA is a JSON list of
# cases {ns, name, py, args, kw, gout}. Tensors arrive as {k: "T", shape, dtype, v (flat values),
# view, vshape, rg}: the base tensor is rebuilt from the exact values, made a leaf that requires
# grad when rg, then viewed (t: transpose(-2, -1), s: [..., ::2], e: expand(vshape)). The op is
# called, its outputs encoded as {shape, dtype, v} (complex via view_as_real), then
# sum(out_i * g_i) over the grad outputs ltorch drew (gout: [index, values]) is backpropagated
# and each leaf's .grad encoded. Errors are caught per case. Prints ONE JSON list.
#
# Use: not run by hand; spec/parity/parity_spec.lua runs it through spec/support/pytorch.lua.
import math
import torch.nn.functional as F

NS = {"f": torch, "linalg": torch.linalg, "special": torch.special, "fft": torch.fft,
      "F": F, "nn": torch._C._nn}


def dtype(name):
    return getattr(torch, name)


def make(d, leaves):
    if isinstance(d, list):
        return [make(x, leaves) for x in d]
    if not isinstance(d, dict):
        return d
    k = d["k"]
    if k == "L":
        return [make(x, leaves) for x in d["items"]]
    if k == "D":
        return dtype(d["name"])
    t = torch.tensor(d["v"], dtype=dtype(d["dtype"])).reshape(d["shape"])
    if d.get("rg"):
        t.requires_grad_(True)
        leaves.append(t)
    view = d.get("view")
    if view == "t":
        t = t.transpose(-2, -1)
    elif view == "s":
        t = t[..., ::2]
    elif view == "e":
        t = t.expand(d["vshape"])
    return t


def enc(x):
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x._is_zerotensor():  # an efficient zero (e.g. sgn's grad of a real input) has no storage
            x = torch.zeros(x.shape, dtype=x.dtype)
        name = str(x.dtype)[6:]
        if x.is_complex():
            x = torch.view_as_real(x.resolve_conj())
        return {"shape": list(x.shape), "dtype": name, "v": x.reshape(-1).tolist()}
    if isinstance(x, (list, tuple)):
        return [enc(y) for y in x]
    if isinstance(x, torch.dtype):
        return "dtype:" + str(x)[6:]
    return x


def flat(x, acc):
    if isinstance(x, torch.Tensor):
        acc.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            flat(y, acc)
    return acc


def callable_for(c, args):
    if c.get("py"):
        return eval(c["py"]), args
    if c["ns"] == "m":
        return getattr(args[0], c["name"]), args[1:]
    mod = NS[c["ns"]]
    fn = getattr(mod, c["name"], None)
    if fn is None and c["ns"] == "f":
        fn = getattr(torch._C._nn, c["name"], None) or getattr(torch.ops.aten, c["name"])
    return fn, args


def run(c):
    leaves = []
    args = make(c["args"], leaves)
    kw = {k: make(v, leaves) for k, v in c["kw"]}
    r = {}
    try:
        fn, args = callable_for(c, args)
        out = fn(*args, **kw)
        r["out"] = enc(out)
        r["rg"] = [o.requires_grad for o in flat(out, [])]
    except Exception as e:  # a PyTorch error is a result to compare, not a crash
        r["err"] = type(e).__name__ + ": " + str(e).split("\n")[0]
        return r
    if c["gout"]:
        try:
            outs = flat(out, [])
            loss = 0
            for i, g in c["gout"]:
                o = outs[i]
                if o.is_complex():
                    o = torch.view_as_real(o.resolve_conj())
                g = torch.tensor(g["v"], dtype=dtype(g["dtype"])).reshape(g["shape"])
                loss = loss + (o * g).sum()
            loss.backward()
            r["grads"] = [enc(x.grad) if x.grad is not None else None for x in leaves]
        except Exception as e:
            r["gerr"] = type(e).__name__ + ": " + str(e).split("\n")[0]
    return r


with open(DATA) as f:
    cases = json.load(f)
print(json.dumps([run(c) for c in cases]))
