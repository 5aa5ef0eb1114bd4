--[[
  spec/torch/tensor_python_spec.lua — Tensor methods PyTorch writes in Python
  (lua/torch/_tensor_python.lua): resize / resize_as (deprecated: warn once per call site, then
  work, gradient included), module_load, dim_order and register_post_accumulate_grad_hook,
  against PyTorch 2.11 on the same tensors.

  Run:  build/ltorch /usr/bin/busted spec/torch/tensor_python_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

-- Runs a Lua chunk in a fresh ltorch and returns its stderr.
local function stderr_of(code)
  local script, errfile = os.tmpname(), os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(code)
  f:close()
  os.execute(("%q %q 2>%q >/dev/null"):format(_LTORCH.exe, script, errfile))
  local e = assert(io.open(errfile)):read("*a")
  os.remove(script); os.remove(errfile)
  return e
end

local function count(text, needle)
  local n, at = 0, 1
  while true do
    local i = text:find(needle, at, true)
    if not i then return n end
    n, at = n + 1, i + 1
  end
end

describe("Tensor methods from PyTorch's Python", function()
  local ref
  setup(function()
    ref = pytorch.run [[
import warnings
warnings.simplefilter("ignore")
x = torch.arange(6.).requires_grad_()
y = x.resize(2, 3)
(y * torch.arange(6.).reshape(2, 3)).sum().backward()
t = torch.arange(6.).reshape(2, 3).t()
def err(f):
    try:
        f()
    except Exception as e:
        return str(e)
p = torch.zeros(3)
loaded = p.module_load(torch.tensor([1., 2., 3.]))
q = torch.zeros(3)
assigned = q.module_load(torch.tensor([1, 2, 3]), assign=True)
d = torch.randn(2, 3, 4, 5)
cl = d.contiguous(memory_format=torch.channels_last)
print(json.dumps({"resize": y.tolist(), "grad": x.grad.tolist(), "resize_t": t.resize(6).tolist(),
  "resize_as": torch.arange(6.).resize_as(torch.ones(3, 2)).tolist(),
  "resize_err": err(lambda: torch.arange(6.).reshape(2, 3).resize(4)),
  "load": [loaded.tolist(), p.tolist(), loaded.requires_grad], "assign": [assigned.tolist(), str(assigned.dtype), q.tolist()],
  "dim_order": [list(d.dim_order()), list(d.permute(0, 2, 3, 1).dim_order()), list(torch.randn(2, 1, 3).dim_order()),
                list(torch.randn(3, 4).t().dim_order()), list(cl.dim_order(ambiguity_check=[torch.channels_last, torch.contiguous_format])),
                list(torch.randn(4, 4)[:, ::2].dim_order()), list(torch.randn(3, 1).expand(3, 4).dim_order())],
  "ambiguous": err(lambda: torch.randn(2, 1, 3).dim_order(ambiguity_check=True))}))
]]
  end)

  it("resize and resize_as keep the elements in the new shape, with the gradient", function()
    local x = torch.arange(6, { dtype = torch.float32 }):requires_grad_()
    local y = x:resize(2, 3)
    assert.same(ref.resize, y:tolist())
    ;(y * torch.arange(6, { dtype = torch.float32 }):reshape(2, 3)):sum():backward()
    assert.same(ref.grad, x.grad:tolist())
    assert.same(ref.resize_t, torch.arange(6, { dtype = torch.float32 }):reshape(2, 3):t():resize({ 6 }):tolist())
    assert.same(ref.resize_as, torch.arange(6, { dtype = torch.float32 }):resize_as(torch.ones(3, 2)):tolist())
    local msg = err(function() local r = torch.arange(6, { dtype = torch.float32 }):reshape(2, 3):resize(4); return r end)
    assert.is_truthy(msg:find(ref.resize_err:gsub("%s+$", ""), 1, true), msg)
    assert.matches("tensor_python_spec.lua:%d+:", msg)
  end)

  it("resize warns once per call site, like Python's deprecation warning", function()
    local e = stderr_of [[
local torch = require "torch"
for _ = 1, 5 do local r = torch.ones(4):resize(2, 2) end
local r = torch.ones(4):resize(4)
local s = torch.ones(4):resize_as(torch.ones(2, 2))
]]
    assert.equals(2, count(e, "UserWarning: non-inplace resize is deprecated"), e)
    assert.equals(1, count(e, "UserWarning: non-inplace resize_as is deprecated"), e)
    assert.matches(":2: UserWarning: non%-inplace resize is deprecated", e)
  end)

  it("module_load copies into self (or returns other with assign) and detaches", function()
    local p = torch.zeros(3)
    local loaded = p:module_load(torch.tensor({ 1, 2, 3 }, { dtype = torch.float32 }))
    assert.same(ref.load, { loaded:tolist(), p:tolist(), loaded.requires_grad })
    local q = torch.zeros(3)
    local assigned = q:module_load(torch.tensor({ 1, 2, 3 }), { assign = true })
    assert.same(ref.assign, { assigned:tolist(), tostring(assigned.dtype), q:tolist() })
    assert.matches("argument 'other' must be Tensor", err(function() local r = p:module_load({ 1 }); return r end))
  end)

  it("dim_order gives PyTorch's order and its ambiguity errors", function()
    torch.manual_seed(0)
    local d = torch.randn(2, 3, 4, 5)
    local cl = d:permute({ 0, 2, 3, 1 }):contiguous():permute({ 0, 3, 1, 2 })
    local got = { d:dim_order(), d:permute({ 0, 2, 3, 1 }):dim_order(), torch.randn(2, 1, 3):dim_order(),
      torch.randn(3, 4):t():dim_order(), cl:dim_order({ ambiguity_check = { "channels_last", "contiguous_format" } }),
      torch.randn(4, 4)[{ ":", "::2" }]:dim_order(), torch.randn(3, 1):expand(3, 4):dim_order() }
    assert.same(ref.dim_order, got)
    assert.equals(ref.ambiguous, err(function() local r = torch.randn(2, 1, 3):dim_order({ ambiguity_check = true }); return r end):match(": (The tensor.*)$"))
    assert.matches("ambiguity_check must be a bool or a list of memory formats", err(d.dim_order, d, { ambiguity_check = 1 }))
  end)

  it("register_post_accumulate_grad_hook runs after the grad is accumulated, in order, and removes", function()
    local p = torch.ones(3, { requires_grad = true })
    local seen = {}
    local h1 = p:register_post_accumulate_grad_hook(function(t) seen[#seen + 1] = { "a", t.grad:tolist() } end)
    local h2 = p:register_post_accumulate_grad_hook(function(t) seen[#seen + 1] = { "b", t.grad:tolist() } end)
    ;(p * 2):sum():backward()
    assert.same({ { "a", { 2, 2, 2 } }, { "b", { 2, 2, 2 } } }, seen)
    h1:remove()
    ;(p * 3):sum():backward()
    assert.same({ "b", { 5, 5, 5 } }, seen[3])
    assert.equals(3, #seen)
    h2:remove()
    ;(p * 3):sum():backward()
    assert.equals(3, #seen)
    -- the optimizer-in-backward pattern: the hook frees the grad as soon as it is made
    local q = torch.ones(2, { requires_grad = true })
    q:register_post_accumulate_grad_hook(function(t) t.grad = nil end)
    ;(q * 2):sum():backward()
    assert.is_nil(q.grad)
    torch.autograd.grad((q * 2):sum(), { q })   -- no accumulation: the hook does not run
  end)

  it("register_post_accumulate_grad_hook refuses what PyTorch refuses", function()
    assert.matches("doesn't require gradient", err(function() local r = torch.ones(2):register_post_accumulate_grad_hook(print); return r end))
    local p = torch.ones(2, { requires_grad = true })
    assert.matches("non%-leaf", err(function() local r = (p * 2):register_post_accumulate_grad_hook(print); return r end))
    assert.matches("function expected", err(function() local r = p:register_post_accumulate_grad_hook(1); return r end))
  end)
end)
