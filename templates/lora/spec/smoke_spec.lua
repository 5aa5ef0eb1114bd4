--[[
  spec/smoke_spec.lua — LoRALinear's contract (starts as the base layer, only adapters train,
  merge / unmerge keep the output, adapters save alone) and one short run of train.lua.
  Run from the project folder: ltorch /usr/bin/busted spec    (~10 s)
]]
local torch = require "torch"
local lora = require "lora"
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("lora.lua", function()
  local function model()
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
  end

  it("starts as the base model and trains only the adapters", function()
    local m, x = model(), torch.randn(5, 6)
    local before = m(x)
    local params = lora.apply(m, { rank = 2, alpha = 4, targets = { "0", "2" } })
    assert.are.equal(4, #params)                        -- A and B of two layers
    assert.are.equal(2 * 6 + 8 * 2 + 2 * 8 + 3 * 2, m:num_parameters(true))
    assert.is_true(torch.allclose(before, m(x)))
  end)

  it("merge and unmerge keep the output", function()
    local m, x = model(), torch.randn(5, 6)
    lora.apply(m, { rank = 2, alpha = 4, targets = { "0", "2" } })
    torch.no_grad(function() for _, p in ipairs(m:parameters()) do if p.requires_grad then p:normal_() end end end)
    local y = m(x)
    local w = m:children()[1].base.weight:clone()
    lora.merge(m)
    assert.is_true(torch.allclose(y, m(x), { rtol = 1e-4, atol = 1e-5 }))
    lora.unmerge(m)
    assert.is_true(torch.allclose(w, m:children()[1].base.weight, { rtol = 1e-5, atol = 1e-6 }))
    assert.is_true(torch.allclose(y, m(x), { rtol = 1e-4, atol = 1e-5 }))
  end)

  it("saves and loads the adapters alone", function()
    local m = model()
    lora.apply(m, { rank = 2, alpha = 4, targets = { "2" } })
    local sd = lora.adapters(m):state_dict()
    local keys = {}
    for k in pairs(sd) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.are.same({ "2.lora_A", "2.lora_B" }, keys)
    assert.has_error(function() lora.apply(model(), { rank = 2, alpha = 4, targets = { "nope" } }) end)
  end)
end)

describe("train.lua", function()
  it("pretrains, fine-tunes the adapters and saves them", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --limit-steps 20 --out runs/smoke")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("loss at init [%d%.]+ %(uniform"), out)
    assert.truthy(out:match("%d+ trainable of %d+ parameters"), out)
    local before, after = out:match("val loss ([%d%.]+) %-> ([%d%.]+) after LoRA")
    assert.is_true(tonumber(after) < tonumber(before), out)
    assert.truthy(io.open("runs/smoke/adapters.pt", "rb"), "adapters.pt")
  end)

  it("rejects a bad flag with exit 2", function()
    local out, code = sh(bin .. " train.lua --rank two")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)
end)
