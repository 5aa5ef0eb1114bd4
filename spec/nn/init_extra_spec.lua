--[[
  spec/nn/init_extra_spec.lua — nn.init (lua/torch/nn/initializers.lua) against PyTorch: dirac_
  (3-, 4-, 5-d, with groups), sparse_, and every random initialiser bit-for-bit under the same
  seed (the numbers drawn after them too, so the generator is left where PyTorch leaves it);
  PyTorch's deprecated names without the underscore (same values, PyTorch's FutureWarning text,
  once); arguments by keyword; misuse errors.

  Tolerance: none — the values must be PyTorch's to the last bit (same libtorch generator, same
  calls in the same order).

  Run:  build/ltorch /usr/bin/busted spec/nn/init_extra_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"
local approx = require "spec.support.approx"
local err = require("spec.support.errors").err

local init = nn.init

-- name -> { shape, dtype, function(t) (ltorch call), Python call on t }
local DRAWS = {
  { "uniform", { 3, 4 }, function(t) init.uniform_(t, -0.5, 2) end, "nn.init.uniform_(t, -0.5, 2)" },
  { "normal", { 5 }, function(t) init.normal_(t, { std = 3, mean = 1 }) end, "nn.init.normal_(t, std=3, mean=1)" },
  { "xavier_uniform", { 4, 3, 2 }, function(t) init.xavier_uniform_(t, 2) end, "nn.init.xavier_uniform_(t, 2)" },
  { "xavier_normal", { 6, 2 }, function(t) init.xavier_normal_(t, { gain = 0.5 }) end, "nn.init.xavier_normal_(t, gain=0.5)" },
  { "kaiming_uniform", { 4, 5 }, function(t) init.kaiming_uniform_(t, { a = math.sqrt(5) }) end,
    "nn.init.kaiming_uniform_(t, a=math.sqrt(5))" },
  { "kaiming_normal", { 4, 5, 3 }, function(t) init.kaiming_normal_(t, 0, "fan_out", "relu") end,
    "nn.init.kaiming_normal_(t, 0, 'fan_out', 'relu')" },
  { "trunc_normal", { 7 }, function(t) init.trunc_normal_(t, 0.5, 2, -1, 3) end, "nn.init.trunc_normal_(t, 0.5, 2, -1, 3)" },
  { "orthogonal", { 3, 5 }, function(t) init.orthogonal_(t, 1.5) end, "nn.init.orthogonal_(t, 1.5)" },
  { "orthogonal_tall", { 6, 2, 2 }, function(t) init.orthogonal_(t) end, "nn.init.orthogonal_(t)" },
  { "sparse", { 7, 5 }, function(t) init.sparse_(t, 0.3, 0.5) end, "nn.init.sparse_(t, 0.3, 0.5)" },
  { "sparse_kw", { 4, 6 }, function(t) init.sparse_(t, { sparsity = 0.5 }) end, "nn.init.sparse_(t, sparsity=0.5)" },
  { "sparse_none", { 3, 3 }, function(t) init.sparse_(t, 0) end, "nn.init.sparse_(t, 0)" },
  { "sparse_all", { 3, 2 }, function(t) init.sparse_(t, 1) end, "nn.init.sparse_(t, 1)" },
}

-- { shape, groups }
local DIRACS = { { { 4, 3, 5 }, 1 }, { { 6, 2, 3, 3 }, 2 }, { { 6, 4, 3, 4 }, 3 }, { { 2, 3, 3, 3, 3 }, 1 },
  { { 3, 5, 2, 2 }, 1 }, { { 4, 2, 1, 1, 1 }, 4 } }

local DTYPES = { float32 = torch.float32, float64 = torch.float64 }

local function python_code()
  local lines = { "import math, warnings", "nn = torch.nn", "out = {}" }
  for dname in pairs(DTYPES) do
    for i, d in ipairs(DRAWS) do
      lines[#lines + 1] = ("torch.manual_seed(%d); t = torch.empty(%s, dtype=torch.%s); %s; "
        .. "out['%s_%s'] = [t.flatten().tolist(), torch.rand(3, dtype=torch.float64).tolist()]")
        :format(100 + i, approx.py(d[2]), dname, d[4], d[1], dname)
    end
  end
  for i, d in ipairs(DIRACS) do
    lines[#lines + 1] = ("t = torch.full(%s, 7.0); nn.init.dirac_(t, %d); out['dirac%d'] = t.flatten().tolist()")
      :format(approx.py(d[1]), d[2], i)
  end
  lines[#lines + 1] = [[
names = ['uniform', 'normal', 'constant', 'eye', 'dirac', 'xavier_uniform', 'xavier_normal',
         'kaiming_uniform', 'kaiming_normal', 'orthogonal', 'sparse']
msgs = {}
for n in names:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        args = {'constant': (torch.empty(2, 2), 0.5), 'eye': (torch.empty(2, 2),), 'dirac': (torch.empty(2, 2, 3),),
                'sparse': (torch.empty(3, 3), 0.5)}.get(n, (torch.empty(3, 3),))
        getattr(nn.init, n)(*args)
        msgs[n] = [str(w[0].message), w[0].category.__name__]
out['warnings'] = msgs
torch.manual_seed(5); t = torch.empty(4, 3); nn.init.kaiming_uniform(t, a=1); out['alias_kaiming'] = t.flatten().tolist()
print(json.dumps(out))]]
  return table.concat(lines, "\n")
end

describe("nn.init against PyTorch", function()
  local ref
  setup(function() ref = pytorch.run(python_code()) end)

  for dname, dtype in pairs(DTYPES) do
    for i, d in ipairs(DRAWS) do
      it(("%s (%s) draws PyTorch's numbers, bit for bit, and leaves the generator where PyTorch does")
        :format(d[1], dname), function()
        torch.manual_seed(100 + i)
        local t = torch.empty(d[2], { dtype = dtype })
        d[3](t)
        local want = ref[d[1] .. "_" .. dname]
        approx.check(t:flatten(), want[1], 0)
        approx.check(torch.rand(3, { dtype = torch.float64 }), want[2], 0)
      end)
    end
  end

  for i, d in ipairs(DIRACS) do
    it(("dirac_ of shape [%s] with groups=%d is PyTorch's"):format(table.concat(d[1], ", "), d[2]), function()
      local t = torch.full(d[1], 7.0)
      assert.are.equal(t, init.dirac_(t, { groups = d[2] }))
      approx.check(t:flatten(), ref["dirac" .. i], 0)
    end)
  end

  it("the deprecated names call the new ones and warn once each, with PyTorch's FutureWarning text", function()
    local saved, seen = init._warn, {}
    init._warn = function(msg) seen[#seen + 1] = msg end
    local ok, e = pcall(function()
      for name, w in pairs(ref.warnings) do
        assert.are.equal("FutureWarning", w[2])
        local args = ({ constant = { torch.empty(2, 2), 0.5 }, eye = { torch.empty(2, 2) }, dirac = { torch.empty(2, 2, 3) },
          sparse = { torch.empty(3, 3), 0.5 } })[name] or { torch.empty(3, 3) }
        local before = #seen
        init[name](unpack(args))
        init[name](unpack(args))
        assert.are.equal(before + 1, #seen)
        assert.are.equal(w[1], seen[#seen])
      end
      torch.manual_seed(5)
      local t = torch.empty(4, 3)
      assert.are.equal(t, init.kaiming_uniform(t, { a = 1 }))
      approx.check(t:flatten(), ref.alias_kaiming, 0)
    end)
    init._warn = saved
    assert(ok, e)
  end)
end)

describe("nn.init misuse", function()
  it("dirac_ needs a 3-, 4- or 5-d tensor and groups dividing dim 0", function()
    assert.matches("only tensors with 3, 4, or 5 dimensions are supported", err(init.dirac_, torch.empty(3, 3)))
    assert.matches("dim 0 must be divisible by groups", err(init.dirac_, torch.empty(5, 2, 3), 2))
    assert.matches("groups must be a positive integer", err(init.dirac_, torch.empty(4, 2, 3), 0))
  end)

  it("sparse_ needs a 2-d tensor and a sparsity", function()
    assert.matches("only tensors with 2 dimensions are supported", err(init.sparse_, torch.empty(3, 3, 3), 0.1))
    assert.matches("missing required argument 'sparsity'", err(init.sparse_, torch.empty(3, 3)))
    assert.matches("number expected, got string", err(init.sparse_, torch.empty(3, 3), "0.1"))
  end)

  it("refuses an explicit generator, an unknown keyword and a non-tensor, at the caller's line", function()
    local msg = err(function() init.normal_(torch.empty(3), { generator = {} }) end)
    assert.matches("explicit generators are not supported", msg)
    assert.matches("init_extra_spec.lua:%d+:", msg)
    assert.matches("unexpected keyword argument 'sparsty' %(did you mean 'sparsity'%?%)",
      err(init.sparse_, torch.empty(3, 3), { sparsty = 0.1 }))
    assert.matches("missing required argument 'tensor'", err(init.uniform_))
    assert.matches("Tensor expected, got number", err(init.zeros_, 3))
    assert.matches("mode fan_inn not supported", err(init.kaiming_uniform_, torch.empty(2, 2), { mode = "fan_inn" }))
  end)
end)
