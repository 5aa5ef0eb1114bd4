--[[
  spec/torch/determinism_spec.lua — torch.use_deterministic_algorithms and friends, and the
  float32 matmul precision (lua/torch/_determinism.lua, bindings/lt_context.cpp): they set
  libtorch's global context, so libtorch acts on them (deterministic mode fills torch.empty with
  NaN and integers' maximum, as PyTorch does), and they read back as PyTorch's do.

  Run:  build/ltorch /usr/bin/busted spec/torch/determinism_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local err = require("spec.support.errors").err

describe("deterministic algorithms and matmul precision", function()
  after_each(function()
    torch.use_deterministic_algorithms(false)
    torch.set_float32_matmul_precision("highest")
  end)

  it("use_deterministic_algorithms sets libtorch's context, as in PyTorch", function()
    local ref = pytorch.run [[
out = [torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode()]
torch.use_deterministic_algorithms(True)
out += [torch.empty(3).isnan().all().item(), torch.empty(2, dtype=torch.int64).tolist()]
out += [torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_deterministic_debug_mode()]
torch.use_deterministic_algorithms(True, warn_only=True)
out += [torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_deterministic_debug_mode()]
torch.set_deterministic_debug_mode("default")
out += [torch.are_deterministic_algorithms_enabled(), torch.empty(3).isnan().any().item() and False]
torch.set_deterministic_debug_mode(2)
out += [torch.get_deterministic_debug_mode()]
print(json.dumps(out))
]]
    local got = { torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode() }
    torch.use_deterministic_algorithms(true)
    got[#got + 1] = torch.empty(3):isnan():all():item()
    got[#got + 1] = torch.empty(2, { dtype = torch.int64 }):tolist()
    got[#got + 1] = torch.are_deterministic_algorithms_enabled()
    got[#got + 1] = torch.is_deterministic_algorithms_warn_only_enabled()
    got[#got + 1] = torch.get_deterministic_debug_mode()
    torch.use_deterministic_algorithms(true, { warn_only = true })
    got[#got + 1] = torch.is_deterministic_algorithms_warn_only_enabled()
    got[#got + 1] = torch.get_deterministic_debug_mode()
    torch.set_deterministic_debug_mode("default")
    got[#got + 1] = torch.are_deterministic_algorithms_enabled()
    got[#got + 1] = false
    torch.set_deterministic_debug_mode(2)
    got[#got + 1] = torch.get_deterministic_debug_mode()
    assert.same(ref, got)
  end)

  it("set_float32_matmul_precision round-trips PyTorch's names", function()
    for _, p in ipairs { "high", "medium", "highest" } do
      torch.set_float32_matmul_precision(p)
      assert.equals(p, torch.get_float32_matmul_precision())
    end
  end)

  it("rejects what PyTorch rejects, and an unknown precision", function()
    assert.matches("argument 'mode' must be bool, not number", err(torch.use_deterministic_algorithms, 1))
    assert.matches("argument 'warn_only' must be bool", err(torch.use_deterministic_algorithms, true, { warn_only = "yes" }))
    assert.matches("takes at most 1 positional arguments", err(torch.use_deterministic_algorithms, true, true))
    assert.matches("expected 0, 1, or 2, but got 3", err(torch.set_deterministic_debug_mode, 3))
    assert.matches("expected one of `default`, `warn`, `error`, but got x", err(torch.set_deterministic_debug_mode, "x"))
    assert.matches("debug_mode must be str or int", err(torch.set_deterministic_debug_mode, true))
    assert.matches("'bogus' is not one of 'highest', 'high', or 'medium'", err(torch.set_float32_matmul_precision, "bogus"))
    assert.equals("highest", torch.get_float32_matmul_precision())
  end)
end)
