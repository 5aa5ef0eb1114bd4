--[[
  spec/optim/sgd_spec.lua — optim.SGD (lua/torch/optim/sgd.lua) and the Optimizer base
  (lua/torch/optim/optimizer.lua) against PyTorch 2.11.

  Covers: every option combination over 6 steps of identical gradients (one parameter skips
  steps 2 and 4), with foreach on and off, against PyTorch's foreach=False implementation;
  per-group options; state_dict layout and round trip; zero_grad; closures; add_param_group;
  misuse errors (bad hyper-parameters, empty/duplicate/shared/non-leaf parameters, mixed
  devices when a second device exists).

  Tolerance: bitwise (atol 0): the same libtorch kernels run in the same order.

  Run:  build/ltorch /usr/bin/busted spec/optim/sgd_spec.lua
]]
local torch = require "torch"
local optim = require "torch.optim"
local H = require "spec.optim.harness"
local approx = require "spec.support.approx"

local TOL = 0

local cases = {
  { name = "plain", cls = "SGD", opts = { lr = 0.1 } },
  { name = "momentum", cls = "SGD", opts = { lr = 0.1, momentum = 0.9 } },
  { name = "dampening", cls = "SGD", opts = { lr = 0.05, momentum = 0.8, dampening = 0.3 } },
  { name = "nesterov", cls = "SGD", opts = { lr = 0.1, momentum = 0.9, nesterov = true } },
  { name = "weight_decay", cls = "SGD", opts = { lr = 0.1, momentum = 0.9, weight_decay = 0.01 } },
  { name = "weight_decay_plain", cls = "SGD", opts = { lr = 0.1, weight_decay = 0.1 } },
  { name = "maximize", cls = "SGD", opts = { lr = 0.1, momentum = 0.5, maximize = true, weight_decay = 0.01 } },
  { name = "nesterov_all", cls = "SGD", opts = { lr = 0.03, momentum = 0.7, nesterov = true, weight_decay = 0.02,
    maximize = true } },
  { name = "groups", cls = "SGD", opts = { lr = 0.1, momentum = 0.9 },
    groups = { { idx = { 1, 3 } }, { idx = { 2 }, opts = { lr = 0.01, momentum = 0, weight_decay = 0.1 } } } },
  { name = "tensor_lr", cls = "SGD", opts = { lr = torch.tensor(0.1), momentum = 0.9, weight_decay = 0.01 } },
}

describe("optim.SGD", function()
  H.describe_cases(cases, TOL, { { 2, true, 3 }, { 9, false, 2 } })

  it("state_dict has PyTorch's layout", function()
    local ps = H.fresh_params()
    local opt = H.make(cases[9], ps, true)
    H.steps(opt, ps, 1, 1)
    local sd = opt:state_dict()
    assert.same({ 0, 1 }, sd.param_groups[1].params)
    assert.same({ 2 }, sd.param_groups[2].params)
    assert.equals(0.01, sd.param_groups[2].lr)
    assert.equals(0.9, sd.param_groups[1].momentum)
    assert.is_true(torch.is_tensor(sd.state[0].momentum_buffer))
    -- tensors are shared with the optimizer, as PyTorch's state_dict
    assert.is_true(sd.state[0].momentum_buffer:data_ptr() == opt.state[ps[1]].momentum_buffer:data_ptr())
    -- loading restores hyper-parameters too
    local opt2 = H.make(cases[9], H.fresh_params(), true)
    sd.param_groups[2].lr = 0.5
    opt2:load_state_dict(sd)
    assert.equals(0.5, opt2.param_groups[2].lr)
    assert.equals(0.9, opt2.param_groups[1].momentum)
  end)

  it("keeps no state without momentum, as PyTorch 2.11 (an empty state in state_dict)", function()
    local ps = H.fresh_params()
    local opt = optim.SGD({ { params = { ps[1] } }, { params = { ps[2] }, momentum = 0.9 } }, { lr = 0.1 })
    H.steps(opt, ps, 1, 2)
    assert.is_nil(opt.state[ps[1]])
    assert.is_true(torch.is_tensor(opt.state[ps[2]].momentum_buffer))
    local sd = opt:state_dict()
    assert.is_nil(sd.state[0])
    assert.is_not_nil(sd.state[1])
  end)

  it("load_state_dict rejects a state dict of another shape", function()
    local opt = optim.SGD(H.fresh_params(), { lr = 0.1 })
    local other = optim.SGD({ H.fresh_params()[1] }, { lr = 0.1 }):state_dict()
    local ok, err = pcall(opt.load_state_dict, opt, other)
    assert.is_false(ok)
    assert.matches("SGD: loaded state dict's parameter group 0 has 1 parameters, the optimizer's has 3", err, 1, true)
    ok, err = pcall(opt.load_state_dict, opt, { state = {}, param_groups = {} })
    assert.is_false(ok)
    assert.matches("has 0 parameter groups, the optimizer has 1", err, 1, true)
  end)

  it("zero_grad sets gradients to nil by default, or zeroes them", function()
    local ps = H.fresh_params()
    local opt = optim.SGD(ps, { lr = 0.1 })
    for i, p in ipairs(ps) do p.grad = H.G[1][i] and H.G[1][i]:clone() end
    opt:zero_grad(false)
    assert.equals(0, ps[1].grad:abs():sum():item())
    assert.equals(0, ps[2].grad:abs():sum():item())
    opt:zero_grad()
    for _, p in ipairs(ps) do assert.is_nil(p.grad) end
    -- a step without gradients changes nothing
    local before = H.values(ps)
    opt:step()
    assert.same(before, H.values(ps))
  end)

  it("step(closure) evaluates the closure with grad enabled and returns its loss", function()
    local w = torch.tensor({ 1.0, -2.0 }, { dtype = torch.float32, requires_grad = true })
    local opt = optim.SGD({ w }, { lr = 0.5 })
    local loss = torch.no_grad(function()
      return opt:step(function()
        opt:zero_grad()
        local l = (w * w):sum()
        l:backward()
        return l
      end)
    end)
    assert.equals(5, loss:item())
    approx.check(w, { 0, 0 }, 0)    -- w - 0.5 * 2w
  end)

  it("add_param_group adds a group with defaults filled in", function()
    local ps = H.fresh_params()
    local opt = optim.SGD({ ps[1] }, { lr = 0.1, momentum = 0.9 })
    opt:add_param_group({ params = ps[2], lr = 0.2 })
    assert.equals(2, #opt.param_groups)
    assert.equals(0.2, opt.param_groups[2].lr)
    assert.equals(0.9, opt.param_groups[2].momentum)
    assert.equals(ps[2], opt.param_groups[2].params[1])
  end)

  it("accepts torch.optim and model:parameters()", function()
    local net = torch.nn.Linear(3, 2)
    local opt = torch.optim.SGD(net:parameters(), { lr = 0.1 })
    assert.equals(2, #opt.param_groups[1].params)
    assert.matches("^SGD %(\nParameter Group 0\n    dampening: 0\n", tostring(opt))
  end)

  it("leaves the gradients untouched (PyTorch's foreach nesterov adds into them)", function()
    local ps = H.fresh_params()
    local opt = optim.SGD(ps, { lr = 0.1, momentum = 0.9, nesterov = true })
    H.steps(opt, ps, 1, 2)
    approx.check(ps[1].grad, H.G[2][1]:tolist(), 0)
  end)

  it("keeps its state across torch.scope-wrapped steps, and memory stays flat", function()
    local net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    local x = torch.randn(4, 8)
    for _, make in ipairs({
      function(p) return optim.SGD(p, { lr = 0.01, momentum = 0.9 }) end,
      function(p) return optim.Adam(p, { amsgrad = true }) end,
      function(p) return optim.RMSprop(p, { momentum = 0.9, centered = true, foreach = false }) end,
      function(p) return optim.Adagrad(p) end,
    }) do
      local opt = make(net:parameters())
      local function step()
        opt:zero_grad()
        net(x):pow(2):mean():backward()
        opt:step()
      end
      for _ = 1, 3 do torch.scope(step) end
      torch.scope(function() opt:load_state_dict(opt:state_dict()) end)
      torch.collect()
      local before = torch.memory_stats().live_bytes
      for _ = 1, 20 do torch.scope(step) end
      torch.collect()
      assert.equals(before, torch.memory_stats().live_bytes)
    end
  end)

  describe("errors", function()
    local err_of = require("spec.support.errors").err
    local p = torch.zeros(2, { requires_grad = true })

    it("names bad hyper-parameters and blames the caller", function()
      local e = err_of(function() optim.SGD({ p }, { lr = -1 }) end)
      assert.matches("sgd_spec.lua:%d+: SGD: invalid learning rate: %-1$", e)
      assert.matches("SGD: invalid momentum value: %-0.5",
        err_of(function() optim.SGD({ p }, { lr = 1, momentum = -0.5 }) end))
      assert.matches("SGD: invalid weight_decay value: %-1",
        err_of(function() optim.SGD({ p }, { lr = 1, weight_decay = -1 }) end))
      assert.matches("Nesterov momentum requires a momentum and zero dampening",
        err_of(function() optim.SGD({ p }, { lr = 1, nesterov = true }) end))
      assert.equals(1e-3, optim.SGD({ p }).param_groups[1].lr)   -- PyTorch 2.11's default
      assert.matches("SGD: unexpected keyword argument 'momentun' %(did you mean 'momentum'%?%)", err_of(function() optim.SGD({ p }, { lr = 1, momentun = 0.9 }) end))
      assert.matches("SGD: invalid learning rate: expected a number, got string",
        err_of(function() optim.SGD({ p }, { lr = "0.1" }) end))
      assert.matches("SGD: invalid nesterov: expected a boolean",
        err_of(function() optim.SGD({ p }, { lr = 1, nesterov = 1 }) end))
      -- per-group options are checked too
      assert.matches("sgd_spec.lua:%d+: SGD: invalid learning rate: %-2",
        err_of(function() optim.SGD({ { params = { p }, lr = -2 } }, { lr = 1 }) end))
    end)

    it("rejects bad parameter lists", function()
      assert.matches("SGD: optimizer got an empty parameter list", err_of(function() optim.SGD({}, { lr = 1 }) end))
      assert.matches("should be an array of Tensors or of parameter group tables, but got Tensor",
        err_of(function() optim.SGD(p, { lr = 1 }) end))
      assert.matches("but got Module %(pass model:parameters%(%)%)",
        err_of(function() optim.SGD(torch.nn.Linear(2, 2), { lr = 1 }) end))
      assert.matches("can't optimize a non%-leaf Tensor", err_of(function() optim.SGD({ p * 2 }, { lr = 1 }) end))
      assert.matches("parameter 1 is a string", err_of(function() optim.SGD({ p, "w" }, { lr = 1 }) end))
      assert.matches("parameter 1 appears twice in one parameter group",
        err_of(function() optim.SGD({ p, p }, { lr = 1 }) end))
      assert.matches("some parameters appear in more than one parameter group",
        err_of(function() optim.SGD({ { params = { p } }, { params = { p } } }, { lr = 1 }) end))
      local opt = optim.SGD({ p }, { lr = 1 })
      assert.matches("sgd_spec.lua:%d+: SGD: some parameters appear in more than one parameter group",
        err_of(function() opt:add_param_group({ params = { p } }) end))
    end)

    it("rejects parameters on different devices in one group", function()
      local other
      if torch.cuda.is_available() then other = "cuda" end
      if other == nil then
        pending("only one device in this build")
        return
      end
      local q = torch.zeros(2, { device = other, requires_grad = true })
      assert.matches("all parameters of a group must be on one device: parameter 0 is on cpu, parameter 1 on cuda",
        err_of(function() optim.SGD({ p, q }, { lr = 1 }) end))
    end)
  end)
end)
