--[[
  spec/nn/packed_sequence_spec.lua — torch.nn.utils.rnn (lua/torch/nn/utils_rnn.lua) and the
  PackedSequence path of nn.LSTM / nn.GRU / nn.RNN (lua/torch/nn/rnn.lua) against PyTorch.

  One pytorch.run builds the inputs (a seeded generator), runs every function and the three
  layers on packed input (sorted and unsorted batches, given and default h0, bidirectional, two
  layers), backpropagates a weighted sum of the packed output and the final states, and returns
  inputs and results; ltorch does the same on the same values under the same manual_seed (so the
  layers' default init is PyTorch's) and must agree. Index tensors, lengths and batch_sizes
  must be equal; float64 values to 1e-12. Also PackedSequence's methods and misuse errors.

  Run:  build/ltorch /usr/bin/busted spec/nn/packed_sequence_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local R = nn.utils.rnn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local TOL = { atol = 1e-12, rtol = 1e-12 }
local F64 = { dtype = torch.float64 }

local PY = [[
from torch.nn.utils.rnn import *
g = torch.Generator().manual_seed(3)
def rnd(*s): return torch.randn(*s, generator=g, dtype=torch.float64)
out = {}
x = rnd(5, 3, 2)                          # (T, B, *)
out['x'] = x.tolist()
p = pack_padded_sequence(x, [5, 2, 4], enforce_sorted=False)
out['p_unsorted'] = [p.data.tolist(), p.batch_sizes.tolist(), p.sorted_indices.tolist(), p.unsorted_indices.tolist()]
pb = pack_padded_sequence(x.transpose(0, 1), torch.tensor([5, 4, 2]), batch_first=True)
out['p_sorted'] = [pb.data.tolist(), pb.batch_sizes.tolist()]
pad, lens = pad_packed_sequence(p, batch_first=True, padding_value=-1.0, total_length=7)
out['pad'] = [pad.tolist(), lens.tolist()]
pad2, lens2 = pad_packed_sequence(pb)
out['pad_sorted'] = [pad2.tolist(), lens2.tolist()]
seqs = [rnd(2, 3), rnd(4, 3), rnd(3, 3)]
out['seqs'] = [s.tolist() for s in seqs]
out['pad_seq'] = pad_sequence(seqs).tolist()
out['pad_seq_left'] = pad_sequence(seqs, batch_first=True, padding_value=9.0, padding_side='left').tolist()
ps = pack_sequence(seqs, enforce_sorted=False)
out['pack_seq'] = [ps.data.tolist(), ps.batch_sizes.tolist(), ps.sorted_indices.tolist(), ps.unsorted_indices.tolist()]
out['unpack'] = [s.tolist() for s in unpack_sequence(ps)]
out['unpad'] = [s.tolist() for s in unpad_sequence(pad_sequence(seqs), torch.tensor([2, 4, 3]))]
out['inv'] = invert_permutation(torch.tensor([2, 0, 3, 1])).tolist()

def layer(cls, kw, given, seed):
    torch.manual_seed(seed)
    m = getattr(torch.nn, cls)(3, 4, **kw).double()
    xs = [rnd(2, 3), rnd(4, 3), rnd(3, 3)]
    for s in xs: s.requires_grad_()
    pk = pack_sequence(xs, enforce_sorted=False)
    D = 2 if kw.get('bidirectional') else 1
    L = kw.get('num_layers', 1)
    hx, states = None, []
    if given:
        states = [rnd(D * L, 3, 4).requires_grad_() for _ in range(2 if cls == 'LSTM' else 1)]
        hx = tuple(states) if cls == 'LSTM' else states[0]
    o, h = m(pk, hx)
    fin = list(h) if cls == 'LSTM' else [h]
    loss = (o.data * torch.linspace(-1, 1, o.data.numel(), dtype=torch.float64).view_as(o.data)).sum()
    for k, f in enumerate(fin): loss = loss + (f * (k + 2)).sum()
    loss.backward()
    return {'xs': [s.tolist() for s in xs], 'states': [s.tolist() for s in states],
            'out': [o.data.tolist(), o.batch_sizes.tolist(), o.sorted_indices.tolist(), o.unsorted_indices.tolist()],
            'fin': [f.tolist() for f in fin], 'gx': [s.grad.tolist() for s in xs],
            'gs': [s.grad.tolist() for s in states], 'gw': [p.grad.tolist() for p in m.parameters()]}
out['LSTM'] = layer('LSTM', {'bidirectional': True}, True, 11)
out['LSTM2'] = layer('LSTM', {'num_layers': 2}, False, 12)
out['GRU'] = layer('GRU', {'bidirectional': True, 'num_layers': 2}, True, 13)
out['RNN'] = layer('RNN', {'nonlinearity': 'relu'}, True, 14)
print(json.dumps(out))
]]

local function t64(v) return torch.tensor(v, F64) end

describe("torch.nn.utils.rnn", function()
  local ref
  setup(function() ref = pytorch.run(PY) end)

  it("pack_padded_sequence sorts (enforce_sorted = false) and packs like PyTorch", function()
    local p = R.pack_padded_sequence(t64(ref.x), { 5, 2, 4 }, { enforce_sorted = false })
    approx.check(p.data:tolist(), ref.p_unsorted[1], TOL)
    assert.are.same(ref.p_unsorted[2], p.batch_sizes:tolist())
    assert.are.same(ref.p_unsorted[3], p.sorted_indices:tolist())
    assert.are.same(ref.p_unsorted[4], p.unsorted_indices:tolist())
    local pb = R.pack_padded_sequence(t64(ref.x):transpose(0, 1), torch.tensor({ 5, 4, 2 }), true)
    approx.check(pb.data:tolist(), ref.p_sorted[1], TOL)
    assert.are.same(ref.p_sorted[2], pb.batch_sizes:tolist())
    assert.is_nil(pb.sorted_indices)
    assert.is_nil(pb.unsorted_indices)
    assert.are.equal(torch.int64, pb.batch_sizes.dtype)
  end)

  it("pad_packed_sequence restores the batch order, pads and returns lengths", function()
    local p = R.pack_padded_sequence(t64(ref.x), { 5, 2, 4 }, { enforce_sorted = false })
    local pad, lens = R.pad_packed_sequence(p, { batch_first = true, padding_value = -1.0, total_length = 7 })
    approx.check(pad:tolist(), ref.pad[1], TOL)
    assert.are.same(ref.pad[2], lens:tolist())
    local pb = R.pack_padded_sequence(t64(ref.x):transpose(0, 1), { 5, 4, 2 }, true)
    local pad2, lens2 = R.pad_packed_sequence(pb)
    approx.check(pad2:tolist(), ref.pad_sorted[1], TOL)
    assert.are.same(ref.pad_sorted[2], lens2:tolist())
  end)

  it("pad_sequence, pack_sequence, unpack_sequence, unpad_sequence, invert_permutation", function()
    local seqs = {}
    for i, s in ipairs(ref.seqs) do seqs[i] = t64(s) end
    approx.check(R.pad_sequence(seqs):tolist(), ref.pad_seq, TOL)
    approx.check(R.pad_sequence(seqs, true, 9.0, "left"):tolist(), ref.pad_seq_left, TOL)
    approx.check(R.pad_sequence({ sequences = seqs, batch_first = true, padding_value = 9.0, padding_side = "left" })
      :tolist(), ref.pad_seq_left, TOL)
    local ps = R.pack_sequence(seqs, false)
    approx.check(ps.data:tolist(), ref.pack_seq[1], TOL)
    assert.are.same(ref.pack_seq[2], ps.batch_sizes:tolist())
    assert.are.same(ref.pack_seq[3], ps.sorted_indices:tolist())
    assert.are.same(ref.pack_seq[4], ps.unsorted_indices:tolist())
    local un = R.unpack_sequence(ps)
    assert.are.equal(#ref.unpack, #un)
    for i, s in ipairs(un) do approx.check(s:tolist(), ref.unpack[i], TOL) end
    local unp = R.unpad_sequence(R.pad_sequence(seqs), torch.tensor({ 2, 4, 3 }))
    for i, s in ipairs(unp) do approx.check(s:tolist(), ref.unpad[i], TOL) end
    assert.are.same(ref.inv, R.invert_permutation(torch.tensor({ 2, 0, 3, 1 })):tolist())
    assert.is_nil(R.invert_permutation(nil))
  end)

  local LAYERS = {
    { "LSTM", function() return nn.LSTM(3, 4, { bidirectional = true }) end, true, 11 },
    { "LSTM2", function() return nn.LSTM(3, 4, { num_layers = 2 }) end, false, 12 },
    { "GRU", function() return nn.GRU(3, 4, { bidirectional = true, num_layers = 2 }) end, true, 13 },
    { "RNN", function() return nn.RNN(3, 4, { nonlinearity = "relu" }) end, true, 14 },
  }
  for _, c in ipairs(LAYERS) do
    it(c[1] .. " takes a PackedSequence and returns one, h_n in the caller's batch order, with gradients", function()
      local r = ref[c[1]]
      torch.manual_seed(c[4])
      local m = c[2]():double()
      local xs, states = {}, {}
      for i, v in ipairs(r.xs) do xs[i] = torch.tensor(v, { dtype = torch.float64, requires_grad = true }) end
      for i, v in ipairs(r.states) do states[i] = torch.tensor(v, { dtype = torch.float64, requires_grad = true }) end
      local hx = nil
      if c[3] then hx = m.mode == "LSTM" and states or states[1] end
      local o, h, cn = m(R.pack_sequence(xs, false), hx)
      assert.is_true(R.is_packed_sequence(o))
      local fin = { h, cn }
      local loss = (o.data * torch.linspace(-1, 1, o.data:numel(), F64):view_as(o.data)):sum()
      for k, f in ipairs(fin) do loss = loss + (f * (k + 1)):sum() end
      loss:backward()
      approx.check(o.data:tolist(), r.out[1], TOL)
      assert.are.same(r.out[2], o.batch_sizes:tolist())
      assert.are.same(r.out[3], o.sorted_indices:tolist())
      assert.are.same(r.out[4], o.unsorted_indices:tolist())
      assert.are.equal(#r.fin, #fin)
      for k, f in ipairs(fin) do approx.check(f:tolist(), r.fin[k], TOL) end
      for i, x in ipairs(xs) do approx.check(x.grad:tolist(), r.gx[i], TOL) end
      for i, s in ipairs(states) do approx.check(s.grad:tolist(), r.gs[i], TOL) end
      for i, p in ipairs(m:parameters()) do approx.check(p.grad:tolist(), r.gw[i], TOL) end
    end)
  end
end)

describe("PackedSequence", function()
  it("has PyTorch's fields, constructor and conversion methods", function()
    local p = R.pack_sequence({ torch.ones(3, 2), torch.ones(2, 2) * 2 }, false)
    local d = p:double()
    assert.are.equal(torch.float64, d.data.dtype)
    assert.are.equal(p.batch_sizes, d.batch_sizes)
    assert.are.same(p.sorted_indices:tolist(), d.sorted_indices:tolist())
    assert.are.equal(p, p:float())           -- nothing to change: the same object, as PyTorch's
    assert.are.equal(p, p:cpu())
    assert.is_false(p.is_cuda)
    local q = R.PackedSequence(p.data, p.batch_sizes, torch.tensor({ 1, 0 }))
    assert.are.same({ 1, 0 }, q.unsorted_indices:tolist())   -- inverted from sorted_indices
    local r = R.PackedSequence({ p.data, p.batch_sizes })
    assert.is_nil(r.sorted_indices)
    assert.matches("^PackedSequence%(data=tensor%(", tostring(p))
    assert.matches("batch_sizes=tensor%(%[2, 2, 1%]%), sorted_indices=tensor%(%[0, 1%]%)", tostring(p))
  end)

  describe("misuse", function()
    it("gives PyTorch's errors at the caller's line", function()
      local x = torch.randn(4, 2, 3)
      assert.matches("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True",
        err(R.pack_padded_sequence, x, { 2, 4 }))
      local p = R.pack_padded_sequence(x, { 4, 2 })
      assert.matches("pad_packed_sequence: Expected total_length to be at least the length of the longest sequence "
        .. "in input, but got total_length=2 and max sequence length being 4", err(R.pad_packed_sequence, p, false, 0, 2))
      assert.matches("bad argument #1 to 'pad_packed_sequence' %(PackedSequence expected, got Tensor%)",
        err(R.pad_packed_sequence, x))
      assert.matches("pad_sequence: Expected padding_side to be one of left or right, but got middle",
        err(R.pad_sequence, { x }, { padding_side = "middle" }))
      assert.matches("pack_padded_sequence: unexpected keyword argument 'batchfirst'",
        err(R.pack_padded_sequence, x, { 4, 2 }, { batchfirst = true }))
      assert.matches("PackedSequence: data must be a Tensor, got string", err(R.PackedSequence, "x", torch.tensor({ 1 })))
    end)

    it("the layers check packed data and h0", function()
      local m = nn.GRU(3, 4)
      local p = R.pack_sequence({ torch.randn(3, 3), torch.randn(2, 3) })
      assert.matches("GRU%(3, 4%): expected h0 of shape %[1, 2, 4%] %(num_layers%*num_directions, batch, hidden_size%), "
        .. "got %[1, 3, 4%]", err(m, p, torch.zeros(1, 3, 4)))
      assert.matches("GRU%(3, 4%): for a PackedSequence input, h0 should be 3%-D, got %[2, 4%]", err(m, p, torch.zeros(2, 4)))
      assert.matches("GRU%(3, 4%): expected input with last dim 3 %(input_size%), got %[5, 2%]",
        err(m, R.pack_sequence({ torch.randn(3, 2), torch.randn(2, 2) })))
      assert.matches("LSTM%(3, 4%): expected hx as a table {h0, c0} of two Tensors, got a Tensor",
        err(nn.LSTM(3, 4), p, torch.zeros(1, 2, 4)))
      local ok, msg = pcall(function() local y = m(p, torch.zeros(1, 3, 4)); return y end)
      assert.is_false(ok)
      assert.matches("packed_sequence_spec%.lua:%d+: GRU%(3, 4%): expected h0 of shape", msg)   -- the caller's line
    end)
  end)
end)
