-- spec/tools/inspect_checkpoint_spec.lua — tool inspect-checkpoint (lua/torch/tools/inspect_checkpoint.lua):
-- parameter counts per module, the optimizer summary and metadata of a small saved checkpoint,
-- NaN found (exit 1), unreadable files and bad flags (exit 2).
local torch = require "torch"
local tools = require "torch.tools"
local json = require "torch.serialization.json"

local function run(argv)
  local out = tools.collector()
  local code = tools.run("inspect-checkpoint", argv, out)
  return code, out.text()
end

local function model()
  torch.manual_seed(0)
  return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
end

describe("tool inspect-checkpoint", function()
  local base = os.tmpname()
  local pt, st = base .. ".pt", base .. ".safetensors"
  setup(function()
    local m = model()
    local opt = torch.optim.Adam(m:parameters(), { lr = 1e-3 })
    m:forward(torch.randn(2, 3)):sum():backward()
    opt:step()
    torch.save({ model = m:state_dict(), optimizer = opt:state_dict(), epoch = 3, config = { lr = 1e-3 } }, pt)
    torch.save(m:state_dict(), st)
  end)
  teardown(function() os.remove(pt); os.remove(st); os.remove(base) end)

  it("counts parameters per top-level module, summarises the optimizer and the metadata", function()
    local code, text = run({ pt })
    assert.are.equal(0, code, text)
    assert.matches("model (model): 26 parameters", text, 1, true)     -- 3*4+4 and 4*2+2
    assert.matches("\n  0%s+16%s+61.5%%", text)
    assert.matches("\n  2%s+10%s+38.5%%", text)
    assert.matches("optimizer (optimizer): state for 4 parameters {exp_avg, exp_avg_sq, step}, step 1", text, 1, true)
    assert.matches("lr=0.001", text, 1, true)
    assert.matches("epoch = 3", text, 1, true)
    assert.matches("model.0.weight%s+%[4, 3%]%s+torch.float32", text)
    local _, js = run({ pt, "--json" })
    local r = json.decode(js)
    assert.are.equal(26, r.model.total)
    assert.are.equal(4, r.optimizer.params_with_state)
    code, text = run({ pt, "--max-keys", "2" })
    assert.are.equal(0, code)
    assert.matches("... 14 more (--max-keys)", text, 1, true)
  end)

  it("reads a flat safetensors state dict as the model", function()
    local code, text = run({ st })
    assert.are.equal(0, code, text)
    assert.matches("model (the file): 26 parameters", text, 1, true)
  end)

  it("exits 1 when a tensor holds NaN/Inf", function()
    local p = base .. "-nan.pt"
    local w = torch.ones(3); w[1] = 0 / 0
    torch.save({ model = { ["fc.weight"] = w }, step = 7 }, p)
    local code, text = run({ p })
    assert.are.equal(1, code, text)
    assert.matches("non-finite values in model.fc.weight", text, 1, true)
    os.remove(p)
  end)

  it("rejects bad flags, missing and unreadable files with exit 2", function()
    local junk = base .. "-junk.pt"
    local f = io.open(junk, "w"); f:write("not a checkpoint"); f:close()
    for _, argv in ipairs({ {}, { "/nonexistent/ck.pt" }, { junk }, { pt, "--bogus" }, { pt, "--max-keys", "-1" },
      { pt, pt } }) do
      local code, text = run(argv)
      assert.are.equal(2, code, table.concat(argv, " ") .. ": " .. text)
      assert.matches("usage:", text)
    end
    os.remove(junk)
    assert.are.equal(0, (run({ "--help" })))
  end)
end)
