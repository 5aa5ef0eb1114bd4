-- spec/doctor/capture_spec.lua — torch.doctor.capture and torch.doctor.script: a training
-- script runs under instrumentation, stops at the step budget (or at its end, or at os.exit),
-- gets its own arguments, and every wrapped method is the original again afterwards.
local torch = require "torch"
local script = require "torch.doctor.script"
local F = torch.nn.functional
local Module = require("torch.nn.module").Module
local Optimizer = require("torch.optim.optimizer").Optimizer
local DataLoader = require "torch.data.dataloader"
local LRScheduler = require("torch.optim.lr_scheduler_base").LRScheduler

-- a script file; loadfile does not care about the extension, so os.tmpname's own file serves
local function tmpscript(text)
  local p = os.tmpname()
  local f = io.open(p, "w"); f:write(text); f:close()
  return p
end

-- a tiny training loop: STEPS from arg[1] (default forever), OPT_LINE after the step
local function loop_script(extra)
  return tmpscript([[
local torch = require "torch"
local nn, F = torch.nn, torch.nn.functional
local steps = tonumber(arg[1]) or math.huge
torch.manual_seed(0)
local x, y = torch.randn(16, 4), torch.randint(3, { 16 })
local model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
local opt = torch.optim.SGD(model:parameters(), { lr = 0.1 })
local i = 0
while i < steps do
  opt:zero_grad()
  F.cross_entropy(model(x), y):backward()
  opt:step()
  i = i + 1
  ]] .. (extra or "") .. "\nend\n")
end

local function originals()
  return {
    Module.new, Module.zero_grad, Optimizer.new, Optimizer.step, Optimizer.zero_grad, torch.Tensor.backward,
    F.cross_entropy, F.mse_loss, rawget(DataLoader, "iter"), LRScheduler.step, os.exit, print,
    torch.nn.Linear.__instance_mt.__call, torch.nn.Sequential.__instance_mt.__call,
  }
end

describe("torch.doctor.script", function()
  it("stops an endless loop at the step budget and restores every wrapped method", function()
    local before = originals()
    local p = loop_script()
    local s = script.load(p, {}, { budget = 7 })
    os.remove(p)
    assert.are.equal(7, s.trace.steps)
    assert.are.equal(7, s.trace.zero_grads)
    assert.are.equal(0, s.trace.accumulated)
    assert.are.equal("CrossEntropyLoss", s.loss_name)
    assert.are.equal(7, #s.train_loader)
    local after = originals()
    for i = 1, #before do assert.is_true(rawequal(before[i], after[i]), "wrap " .. i .. " not restored") end
  end)

  it("passes the script its arguments and ends with the script", function()
    local p = loop_script()
    local s = script.load(p, { "3" }, { budget = 50 })
    assert.are.equal(3, s.trace.steps)
    -- the caller's arg is back
    assert.are_not.equal(p, arg and arg[0])
    os.remove(p)
  end)

  it("treats os.exit in the script as its end", function()
    local p = loop_script("if i == 2 then os.exit(0) end")
    local s = script.load(p, {}, { budget = 50 })
    os.remove(p)
    assert.are.equal(2, s.trace.steps)
  end)

  it("gives a fresh copy of the model as it was at its first forward", function()
    local p = loop_script()
    local s = script.load(p, {}, { budget = 5 })
    os.remove(p)
    local a, b = s.model(), s.model()
    assert.are_not.equal(a, b)
    assert.is_true(torch.equal(a:get(0).weight, b:get(0).weight))
    assert.is_false(torch.equal(a:get(0).weight, s.trace.model:get(0).weight))   -- the trained one moved
    assert.is_true(a.training)
  end)

  it("reports a script that fails before training, and one that never trains", function()
    local before = originals()
    local p = tmpscript("error('boom')")
    assert.has_error(function() script.load(p, {}, {}) end)
    local _, err = pcall(script.load, p, {}, {})
    assert.matches("failed before its first optimizer step: .*boom", err)
    os.remove(p)
    p = tmpscript("return 1")
    local ok, err2 = pcall(script.load, p, {}, {})
    assert.is_false(ok)
    assert.matches("without an optimizer step and returned no setup table", err2)
    os.remove(p)
    local after = originals()
    for i = 1, #before do assert.is_true(rawequal(before[i], after[i]), "wrap " .. i .. " not restored") end
  end)

  it("sees through a reshape between the model and the loss", function()
    local capture = require "torch.doctor.capture"
    local y1 = torch.zeros(8)
    assert.are.same({ tail = {}, per_row = 1 }, capture.loss_view(torch.zeros(8, 1), torch.zeros(8), y1))
    assert.are.same({ tail = { 5 }, per_row = 3 }, capture.loss_view(torch.zeros(4, 3, 5), torch.zeros(12, 5), torch.zeros(12)))
    assert.is_nil(capture.loss_view(torch.zeros(8, 1), torch.zeros(8, 1), y1))
    -- a sequence model whose (B, T, V) logits are flattened for cross_entropy: clean
    local p = tmpscript([[
local torch = require "torch"
local nn, F = torch.nn, torch.nn.functional
torch.manual_seed(0)
local x = torch.randint(12, { 64, 6 })
local y = x:remainder(4)                                   -- next "token": learnable from x
local model = nn.Sequential(nn.Embedding(12, 16), nn.Linear(16, 4))
local opt = torch.optim.Adam(model:parameters(), { lr = 1e-2 })
for s = 0, 1000 do
  local i = (s % 4) * 16
  local xb, yb = x:narrow(0, i, 16), y:narrow(0, i, 16)
  opt:zero_grad()
  F.cross_entropy(model(xb):reshape(-1, 4), yb:reshape(-1)):backward()
  opt:step()
end
]])
    local r = require("torch.doctor").run(p, { quiet = true, out_dir = false,
      checks = { "target_format", "softmax_before_loss", "init_loss", "loss_coverage", "overfit_batch" } })
    os.remove(p)
    for _, f in ipairs(r.findings) do assert.are.equal("ok", f.verdict, f.id .. ": " .. tostring(f.evidence)) end
  end)

  it("returns a setup table unchanged (the explicit path)", function()
    local p = tmpscript([[return dofile("spec/doctor/fixtures.lua").classification()]])
    local s = script.load(p, {}, {})
    os.remove(p)
    assert.is_nil(s.trace)
    assert.is_function(s.model)
  end)
end)
