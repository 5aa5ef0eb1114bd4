--[[
  spec/recipes/train_transformer_spec.lua — recipes/train_transformer.lua end to end at CI size
  (300 fortunes per language, 1 epoch): it trains, starts near ln(6), beats the majority
  baseline, prints the per-language report, writes metrics and checkpoints; a bad flag exits 2.
  Needs the fortunes packages (scripts/fetch_datasets.sh; pl and br: fortunes-pl fortunes-br).

  Run: build/ltorch /usr/bin/busted spec/recipes/train_transformer_spec.lua   (~15 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
-- pl and pt come from fortunes-pl / fortunes-br (bash recipes/fetch_lm_data.sh installs them)
local have = io.open("/usr/share/games/fortunes/brasil", "rb") and io.open("/usr/share/games/fortunes/pl", "rb")

local function run(args)
  local p = io.popen(bin .. " recipes/train_transformer.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("recipes/train_transformer.lua", function()
  local dir = os.tmpname()
  os.remove(dir)

  local it_data = have and it or pending
  it_data("trains a language-ID transformer and reports per language", function()
    local out, code = run("--epochs 1 --per-language 300 --out " .. dir)
    assert.are.equal(0, code, out)
    local init = tonumber(out:match("loss at init ([%d%.]+)"))
    assert.is_true(init ~= nil and math.abs(init - math.log(6)) < 0.3, out)
    local acc, base = out:match("test accuracy ([%d%.]+) %% %(majority%-class baseline ([%d%.]+) %%%)")
    assert.is_true(acc ~= nil and tonumber(acc) > tonumber(base), out)
    for _, l in ipairs({ "en", "de", "es", "it", "pl", "pt" }) do
      assert.truthy(out:match("\n" .. l .. " +[%d%.]+ +[%d%.]+"), l)
    end
    assert.truthy(io.open(dir .. "/metrics.jsonl", "rb"))
    assert.truthy(io.open(dir .. "/checkpoints/checkpoints.json", "rb"))
  end)

  it("rejects a bad flag with one line and exit 2", function()
    local out, code = run("--layers two")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("train_transformer: flag 'layers' expects a number", 1, true), out)
  end)
end)
