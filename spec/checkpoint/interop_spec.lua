-- spec/checkpoint/interop_spec.lua — torch.save/torch.load against Debian's PyTorch 1.13, both
-- ways, for .pt (PyTorch's zip) and .safetensors (read/written in Python by a few lines of
-- reference code; the safetensors package is not in Debian). One Python run for everything.
-- Tolerance: none — every tensor must match bit for bit (floats travel through JSON as repr).
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local dir = os.tmpname() .. ".d"
os.execute("mkdir -p " .. dir)

local PY = [==[
import struct, pickle, collections, io
D = %q
def st_read(path):
    b = open(path, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8+n])
    meta = h.pop('__metadata__', {}); out = {}
    dt = {'F32': torch.float32, 'F64': torch.float64, 'I64': torch.int64, 'F16': torch.float16, 'BOOL': torch.bool}
    for k, e in h.items():
        s, t = e['data_offsets']
        out[k] = torch.frombuffer(bytearray(b[8+n+s:8+n+t]), dtype=dt[e['dtype']]).reshape(e['shape']) if t > s else torch.empty(e['shape'], dtype=dt[e['dtype']])
    return out, meta
def st_write(path, tensors, meta):
    codes = {torch.float32: 'F32', torch.float64: 'F64', torch.int64: 'I64'}
    h, off, blobs = {}, 0, []
    for k, t in tensors.items():
        raw = t.contiguous().numpy().tobytes(); h[k] = {'dtype': codes[t.dtype], 'shape': list(t.shape), 'data_offsets': [off, off + len(raw)]}
        off += len(raw); blobs.append(raw)
    h['__metadata__'] = meta
    hb = json.dumps(h).encode(); hb += b' ' * ((8 - len(hb) %% 8) %% 8)
    open(path, 'wb').write(struct.pack('<Q', len(hb)) + hb + b''.join(blobs))
# weights_only subset with floats: 1.13's weights_only loader has no BINFLOAT at all (it rejects
# PyTorch's own optimizer files), so float-carrying files are checked with the same whitelist.
ALLOWED = {('collections', 'OrderedDict'), ('torch._utils', '_rebuild_tensor_v2')} | {('torch', n) for n in ['FloatStorage', 'DoubleStorage', 'LongStorage', 'HalfStorage', 'IntStorage', 'BoolStorage', 'ByteStorage']}
class Strict(pickle.Unpickler):
    def find_class(self, m, n):
        if (m, n) not in ALLOWED: raise pickle.UnpicklingError('refused ' + m + '.' + n)
        return super().find_class(m, n)
class StrictModule:
    Unpickler = Strict
    load = pickle.load
res = {}
sd = torch.load(D + '/lt_model.pt', weights_only=True)
res['model_keys'] = sorted(sd.keys())
res['model'] = {k: v.flatten().tolist() for k, v in sd.items()}
res['model_dtypes'] = {k: str(v.dtype) for k, v in sd.items()}
full = torch.load(D + '/lt_full.pt', pickle_module=StrictModule)
net = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
net.load_state_dict(full['model'])
opt = torch.optim.SGD(net.parameters(), lr=0.5, momentum=0.9)
opt.load_state_dict(full['optimizer'])
x = torch.tensor(full['x'])
res['pt_forward'] = net(x).flatten().tolist()
res['opt_lr'] = opt.param_groups[0]['lr']
res['opt_buf'] = opt.state[opt.param_groups[0]['params'][0]]['momentum_buffer'].flatten().tolist()
res['plain'] = {k: full[k] for k in ['epoch', 'name', 'flag', 'nested']}
st, meta = st_read(D + '/lt.safetensors')
res['st'] = {k: v.flatten().tolist() for k, v in st.items()}
res['st_meta'] = json.loads(meta['ltorch'])
torch.manual_seed(1)
py_sd = {'a.weight': torch.randn(3, 2), 'a.bias': torch.zeros(3, dtype=torch.float64), 'idx': torch.arange(6)[1:6:2], 't': torch.randn(2, 3).t()}
m2 = torch.nn.Linear(2, 2); o2 = torch.optim.Adam(m2.parameters(), lr=1e-3); m2(torch.ones(1, 2)).sum().backward(); o2.step()
torch.save({'sd': py_sd, 'opt': o2.state_dict(), 'count': 7, 'none': None, 'tup': (1, 2.5)}, D + '/py.pt')
st_write(D + '/py.safetensors', {'w': py_sd['a.weight'], 'i': torch.arange(4)}, {'note': 'hi'})
res['py_sd'] = {k: v.flatten().tolist() for k, v in py_sd.items()}
res['py_opt_step'] = float(o2.state_dict()['state'][0]['step'])
res['py_exp_avg'] = o2.state_dict()['state'][0]['exp_avg'].flatten().tolist()
print(json.dumps(res))
]==]

local function flat(t) return t:flatten():tolist() end

describe("checkpoint interop with PyTorch", function()
  local res, model, opt, x

  setup(function()
    torch.manual_seed(0)
    local nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
    opt = torch.optim.SGD(model:parameters(), { lr = 0.5, momentum = 0.9 })
    x = torch.randn(3, 4)
    model(x):sum():backward()
    opt:step()
    torch.save(model:state_dict(), dir .. "/lt_model.pt")
    torch.save({ model = model:state_dict(), optimizer = opt:state_dict(), x = x:tolist(), epoch = 4,
      name = "run-a", flag = true, nested = { 1, { a = 2.5 } } }, dir .. "/lt_full.pt")
    torch.save({ w = model:state_dict()["0.weight"], i = torch.arange(5), epoch = 4, cfg = { lr = 0.5 } },
      dir .. "/lt.safetensors")
    res = pytorch.run(PY:format(dir))
  end)

  teardown(function() os.execute("rm -rf " .. dir) end)

  it("PyTorch reads an ltorch state dict with weights_only=True, bit for bit", function()
    local sd = model:state_dict()
    local keys = {}
    for k in pairs(sd) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.same(keys, res.model_keys)
    for k, v in pairs(sd) do
      assert.same(flat(v), res.model[k])
      assert.equal("torch.float32", res.model_dtypes[k])
    end
  end)

  it("PyTorch loads an ltorch model + optimizer state into nn.Module and optim.SGD", function()
    assert.same(flat(model(x):detach()), res.pt_forward)
    assert.equal(0.5, res.opt_lr)
    local sd = opt:state_dict()
    assert.same(flat(sd.state[0].momentum_buffer), res.opt_buf)
    assert.same({ epoch = 4, name = "run-a", flag = true, nested = { 1, { a = 2.5 } } }, res.plain)
  end)

  it("PyTorch's reference safetensors reader reads ltorch's file", function()
    assert.same(flat(model:state_dict()["0.weight"]), res.st.w)
    assert.same({ 0, 1, 2, 3, 4 }, res.st.i)
    assert.same({ epoch = 4, cfg = { lr = 0.5 } }, res.st_meta)
  end)

  it("ltorch reads PyTorch's .pt: state dict, Adam state, plain values, views", function()
    local v = torch.load(dir .. "/py.pt")
    for k, t in pairs(v.sd) do assert.same(res.py_sd[k], flat(t)) end
    assert.same({ 3, 2 }, v.sd["a.weight"]:size())
    assert.same({ 3, 2 }, v.sd.t:size())
    assert.equal(torch.float64, v.sd["a.bias"].dtype)
    assert.equal(7, v.count)
    assert.is_nil(v.none)   -- a dict value None loads as an absent key
    assert.same({ 1, 2.5 }, v.tup)
    assert.same(res.py_exp_avg, flat(v.opt.state[0].exp_avg))
    assert.equal(0.001, v.opt.param_groups[1].lr)
    assert.same({ 0, 1 }, v.opt.param_groups[1].params)
  end)

  it("ltorch reads a safetensors file written by reference code", function()
    local v = torch.load(dir .. "/py.safetensors", { map_location = "cpu" })
    assert.same(res.py_sd["a.weight"], flat(v.w))
    assert.same({ 0, 1, 2, 3 }, flat(v.i))
    assert.equal("hi", v.note)
  end)

  it("round-trips within ltorch: dtypes, scalars, empty tensors, nesting", function()
    local p = dir .. "/rt.pt"
    local value = { a = torch.randn(2, 3):t(), h = torch.ones(3, { dtype = torch.float16 }),
      b = torch.tensor({ true, false }), e = torch.empty(0, 4), s = torch.tensor(2.5),
      list = { torch.arange(3), 4, "x" }, big = 2 ^ 50, neg = -70000, f = 1e-300 }
    torch.save(value, p)
    local r = torch.load(p)
    for _, k in ipairs({ "a", "h", "b", "e", "s" }) do
      assert.is_true(torch.equal(value[k], r[k]), k)
      assert.equal(value[k].dtype, r[k].dtype)
    end
    assert.is_true(torch.equal(value.list[1], r.list[1]))
    assert.same({ 4, "x", 2 ^ 50, -70000, 1e-300 }, { r.list[2], r.list[3], r.big, r.neg, r.f })
    local q = dir .. "/rt.safetensors"
    torch.save({ a = value.a, s = value.s, e = value.e }, q)
    local rq = torch.load(q)
    for _, k in ipairs({ "a", "s", "e" }) do assert.is_true(torch.equal(value[k], rq[k]), k) end
  end)
end)
