--[[
  spec/autograd/module_hook_spec.lua — Module:register_full_backward_hook
  (lua/torch/nn/_backward_hook.lua): fn(module, grad_input, grad_output) sees the gradients at the
  module's boundary, may replace grad_input, can be removed, runs when no input requires grad
  (empty grad_input), and an error inside it is raised at backward().

  Run:  build/ltorch /usr/bin/busted spec/autograd/module_hook_spec.lua
]]
local torch = require "torch"
local nn = torch.nn

local function close(a, b) return (a - b):abs():max():item() < 1e-6 end

describe("Module:register_full_backward_hook", function()
  it("sees grad_input and grad_output of a Linear", function()
    local lin = nn.Linear(3, 2)
    local got
    local h = lin:register_full_backward_hook(function(_, gin, gout) got = { gin[1]:clone(), gout[1]:clone() } end)
    local x = torch.randn(4, 3, { requires_grad = true })
    local w = torch.randn(4, 2)
    ;(lin(x) * w):sum():backward()
    assert.is_true(close(got[2], w))
    assert.is_true(close(got[1], w:matmul(lin.weight:detach())))
    assert.is_true(close(got[1], x.grad))
    h:remove()
    got = nil
    lin(x):sum():backward()
    assert.is_nil(got)
  end)

  it("may replace grad_input", function()
    local lin = nn.Linear(3, 3)
    lin:register_full_backward_hook(function(_, gin) return { gin[1] * 0 } end)
    local x = torch.randn(2, 3, { requires_grad = true })
    lin(x):sum():backward()
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 } }, x.grad:tolist())
    assert.is_not_nil(lin.weight.grad)
  end)

  it("runs with an empty grad_input when no input requires grad", function()
    local lin = nn.Linear(3, 2)
    local n_in, gout
    lin:register_full_backward_hook(function(_, gin, go) n_in, gout = #gin, go[1] end)
    lin(torch.randn(5, 3)):sum():backward()
    assert.equal(0, n_in)
    assert.same({ 5, 2 }, { gout.shape[1], gout.shape[2] })
  end)

  it("an error in the hook is raised at backward()", function()
    local lin = nn.Linear(2, 2)
    lin:register_full_backward_hook(function() error("planted module hook failure") end)
    local ok, err = pcall(function() lin(torch.randn(1, 2, { requires_grad = true })):sum():backward() end)
    assert.is_false(ok)
    assert.matches("planted module hook failure", err)
  end)
end)
