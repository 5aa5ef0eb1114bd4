-- spec/support/pytorch_spec.lua — checks the PyTorch parity helper (spec/support/pytorch.lua).
--
-- Needs Debian's python3-torch (installed by scripts/setup.sh). Run with the suite:
-- `bash scripts/test.sh spec/support`.

local pytorch = require "spec.support.pytorch"

describe("spec.support.pytorch", function()
  it("finds PyTorch", function()
    assert.is_true(pytorch.available())
  end)

  it("returns the decoded JSON value a snippet prints", function()
    local sums = pytorch.run [[print(json.dumps(torch.arange(6).reshape(2, 3).sum(0).tolist()))]]
    assert.are.same({ 3, 5, 7 }, sums)
  end)

  it("decodes objects and nested arrays", function()
    local v = pytorch.run [[
x = torch.ones(2, 2)
print(json.dumps({"shape": list(x.shape), "rows": x.tolist(), "dtype": str(x.dtype)}))
]]
    assert.are.same({ 2, 2 }, v.shape)
    assert.are.same({ { 1, 1 }, { 1, 1 } }, v.rows)
    assert.are.equal("torch.float32", v.dtype)
  end)

  it("raises a Lua error carrying the Python exception", function()
    local ok, err = pcall(pytorch.run, [[raise ValueError("parity helper test")]])
    assert.is_false(ok)
    assert.matches("ValueError: parity helper test", err, 1, true)
  end)

  it("raises when the snippet prints something that is not JSON", function()
    local ok, err = pcall(pytorch.run, [[print("not json")]])
    assert.is_false(ok)
    assert.matches("not one JSON value", err, 1, true)
  end)

  it("rejects a non-string snippet", function()
    assert.has_error(function() pytorch.run(42) end,
      "bad argument #1 to 'run' (string expected, got number)")
  end)
end)
