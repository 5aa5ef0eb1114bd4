--[[
  spec/torch/warnings_spec.lua — libtorch's warnings printed like Python's default filter prints
  PyTorch's (bindings/lt_warnings.cpp, runtime/warnings.c, lua/torch/_warnings.lua): once per
  call site of the user's code, the site named; every time under torch.set_warn_always(true).
  Each case runs a script in a fresh `ltorch` and counts the lines of its stderr.

  Run:  build/ltorch /usr/bin/busted spec/torch/warnings_spec.lua
]]
local torch = require "torch"
local err = require("spec.support.errors").err

local RESIZED = "An output with one or more elements was resized"

-- Runs a Lua script in a fresh ltorch; returns its stderr and the script's path.
local function run(code)
  local script, errfile = os.tmpname(), os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write("local torch = require 'torch'\n", code)
  f:close()
  local ok = os.execute(("%q %q 2>%q >/dev/null"):format(_LTORCH.exe, script, errfile))
  local e = assert(io.open(errfile)):read("*a")
  os.remove(script); os.remove(errfile)
  assert(ok == 0 or ok == true, "the script failed:\n" .. e)
  return e, script
end

local function lines_with(text, needle)
  local n = 0
  for line in text:gmatch("[^\n]+") do if line:find(needle, 1, true) then n = n + 1 end end
  return n
end

-- A loss whose backward resizes an output (input (N, 1), target (N): ATen's mse_loss broadcasts,
-- and its backward warns through Resize.cpp, once per shape it resizes).
local LOOP = [[
local x = torch.randn(8, 1, {requires_grad = true})
local t = torch.randn(8, {requires_grad = true})
for i = 1, 20 do
  local loss = torch._nn.mse_loss(x, t)
  loss:backward()
end
]]

describe("libtorch's warnings", function()
  it("print once per call site in a loop of 20 backward passes", function()
    local e, script = run(LOOP)
    assert.equals(2, lines_with(e, RESIZED), e)   -- one per distinct message: input's and target's grad
    assert.matches(script:match("[^/]+$") .. ":6: UserWarning: " .. RESIZED, e)
    assert.matches("Triggered internally at .*Resize%.cpp", e)
  end)

  it("print every time under torch.set_warn_always(true)", function()
    local e = run("torch.set_warn_always(true)\n" .. LOOP)
    assert.equals(40, lines_with(e, RESIZED), e)
  end)

  it("print once more for a second call site", function()
    local e = run(LOOP .. "local loss = torch._nn.mse_loss(x, t)\nloss:backward()\n")
    assert.equals(4, lines_with(e, RESIZED), e)
  end)

  it("reach backward's call site when backward runs off the Lua thread (a Lua hook is registered)", function()
    local e = run("local h = torch.ones(1, {requires_grad = true}); h:register_hook(function(g) return g end)\n" .. LOOP)
    assert.equals(2, lines_with(e, RESIZED), e)
    assert.matches(":7: UserWarning: " .. RESIZED, e)
  end)

  it("of forward ops print once per site too", function()
    local e = run [[
for i = 1, 10 do torch.add(torch.ones(2), torch.ones(2), {out = torch.empty(3)}) end
torch.add(torch.ones(2), torch.ones(2), {out = torch.empty(3)})
]]
    assert.equals(2, lines_with(e, RESIZED), e)
    assert.matches(":2: UserWarning: " .. RESIZED, e)
    assert.matches(":3: UserWarning: " .. RESIZED, e)
  end)

  it("set_warn_always / is_warn_always_enabled round-trip and check their argument", function()
    assert.is_false(torch.is_warn_always_enabled())
    torch.set_warn_always(true)
    assert.is_true(torch.is_warn_always_enabled())
    torch.set_warn_always(false)
    assert.is_false(torch.is_warn_always_enabled())
    assert.matches("expects a bool, but got number", err(torch.set_warn_always, 1))
  end)
end)
