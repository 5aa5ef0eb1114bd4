-- spec/torch/seed_spec.lua — torch.seed and torch.initial_seed (lua/torch/init.lua,
-- bindings/lt_settings.cpp) as PyTorch defines them.
--
-- Covers: torch.seed() takes no argument, seeds with a fresh non-deterministic value and returns
-- it (an integer below 2^53, so a Lua number holds it exactly); two calls differ; passing a seed
-- is an error that points to manual_seed; torch.initial_seed() returns what manual_seed or seed
-- set, and a fresh process starts from a non-deterministic seed as PyTorch's does (two processes
-- differ); torch.manual_seed(s) with the seed torch.seed() returned repeats the draws.
--
-- Run: build/ltorch /usr/bin/busted spec/torch/seed_spec.lua

local torch = require "torch"
local pytorch = require "spec.support.pytorch"

describe("torch.seed and torch.initial_seed", function()
  after_each(function() torch.manual_seed(0) end)

  it("initial_seed returns the seed manual_seed set", function()
    torch.manual_seed(1234)
    assert.are.equal(1234, torch.initial_seed())
    torch.manual_seed(0)
    assert.are.equal(0, torch.initial_seed())
  end)

  it("seed picks a fresh integer seed below 2^53, returns it, and initial_seed agrees", function()
    local a = torch.seed()
    assert.are.equal("number", type(a))
    assert.are.equal(a, math.floor(a))
    assert.is_true(a >= 0 and a < 2 ^ 53)
    assert.are.equal(a, torch.initial_seed())
    local b = torch.seed()
    assert.are_not.equal(a, b)
    assert.are.equal(b, torch.initial_seed())
  end)

  it("manual_seed with the returned seed repeats the draws", function()
    local s = torch.seed()
    local first = torch.randn(6):tolist()
    torch.manual_seed(s)
    assert.are.same(first, torch.randn(6):tolist())
  end)

  it("rejects an argument and points to manual_seed", function()
    local ok, err = pcall(function() local s = torch.seed(42); return s end)
    assert.is_false(ok)
    assert.matches("seed: takes no argument", err, 1, true)
    assert.matches("torch.manual_seed", err, 1, true)
    assert.matches("seed_spec.lua", err, 1, true)   -- blames the caller's line
  end)

  it("a fresh process starts from a non-deterministic seed, as PyTorch's does", function()
    local ref = pytorch.run [[
import subprocess, sys
code = "import torch; print(torch.initial_seed())"
print(json.dumps([subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout != subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout]))]]
    assert.is_true(ref[1])
    local exe = (_LTORCH and _LTORCH.exe) or "build/ltorch"
    local function fresh()
      local p = assert(io.popen(exe .. [[ -e 'io.write(string.format("%.17g", require("torch").initial_seed()))' 2>&1]]))
      local out = p:read("*a")
      p:close()
      return tonumber(out), out
    end
    local a, out = fresh()
    assert.is_number(a, out)
    assert.is_true(a >= 0 and a == math.floor(a), out)
    assert.are_not.equal(a, (fresh()))
  end)
end)
