-- spec/tools/check_dataset_spec.lua — tool check-dataset (lua/torch/tools/check_dataset.lua): a
-- clean dataset passes; each contract violation is found (exit 1); bad scripts/flags exit 2.
local tools = require "torch.tools"
local json = require "torch.serialization.json"

local function run(argv)
  local out = tools.collector()
  local code = tools.run("check-dataset", argv, out)
  return code, out.text()
end

local function tmpfile(text)
  local p = os.tmpname()
  local f = io.open(p, "w"); f:write(text); f:close()
  return p
end

local header = [[local torch = require "torch"
local data = torch.utils.data
local x = torch.randn(20, 3)
local y = torch.arange(20):remainder(3)
]]

local function check(body, argv)
  local p = tmpfile(header .. body)
  local args = { p }
  for _, a in ipairs(argv or {}) do args[#args + 1] = a end
  local code, text = run(args)
  os.remove(p)
  return code, text
end

describe("tool check-dataset", function()
  it("passes a clean TensorDataset and reports fields and label balance", function()
    local code, text = check("return data.TensorDataset(x, y)")
    assert.are.equal(0, code, text)
    assert.matches("length 20, 20 samples checked", text, 1, true)
    assert.matches("float32[3]", text, 1, true)
    assert.matches("3 classes, range [0, 2], imbalance 1.2x  {0: 7, 1: 7, 2: 6}", text, 1, true)
    code, text = check("return { dataset = function() return data.TensorDataset(x, y) end }",
      { "--max-samples", "5", "--json" })
    assert.are.equal(0, code, text)
    local r = json.decode(text)
    assert.are.equal(5, r.checked)
    assert.are.equal(20, r.length)
  end)

  it("finds labels out of range, NaN, varying shapes and a non-deterministic get (exit 1)", function()
    local code, text = check("return data.TensorDataset(x, y)", { "--num-classes", "2" })
    assert.are.equal(1, code, text)
    assert.matches("label 2 is outside [0, 2)", text, 1, true)
    code, text = check("x[{4, 1}] = 0/0\nreturn data.TensorDataset(x, y)")
    assert.are.equal(1, code, text)
    assert.matches("sample 4 has 1 non-finite value", text, 1, true)
    code, text = check([[local D = data.Dataset:extend("Ragged")
function D:len() return 4 end
function D:get(i) return { torch.zeros(i + 1), 0 } end
return D()]])
    assert.are.equal(1, code, text)
    assert.matches("sample 1 differs from sample 0: 1 float32[2]", text, 1, true)
    code, text = check([[local D = data.Dataset:extend("Noisy")
function D:len() return 4 end
function D:get() return { torch.randn(2), 1 } end
return D()]])
    assert.are.equal(1, code, text)
    assert.matches("get(0) twice gives different samples", text, 1, true)
    code, text = check([[local D = data.Dataset:extend("Empty")
function D:len() return 0 end
function D:get() return 1 end
return D()]])
    assert.are.equal(1, code, text)
    assert.matches("len() must give a whole number >= 1, got 0", text, 1, true)
  end)

  it("rejects bad flags, missing and malformed scripts with exit 2", function()
    assert.are.equal(2, (run({})))
    assert.are.equal(2, (run({ "/nonexistent/ds.lua" })))
    for _, body in ipairs({ "return 42", "error('boom')", "return function() error('no data') end", "return {" }) do
      local code, text = check(body)
      assert.are.equal(2, code, body .. " -> " .. text)
      assert.matches("usage:", text)
    end
    assert.are.equal(2, (check("return data.TensorDataset(x, y)", { "--bogus" })))
    assert.are.equal(2, (check("return data.TensorDataset(x, y)", { "--max-samples", "1" })))
    assert.are.equal(2, (check("return data.TensorDataset(x, y)", { "--num-classes", "x" })))
    assert.are.equal(0, (run({ "--help" })))
  end)
end)
