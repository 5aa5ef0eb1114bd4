--[[
  spec/recipes/lora_finetune_spec.lua — recipes/lora_finetune.lua end to end at CI size
  (60 pretraining steps on Moby Dick, 30 LoRA steps on Hamlet act I): the LoRA model starts
  exactly at the pretrained loss (B = 0), fine-tuning lowers the Hamlet validation loss, only
  the adapters train; a missing corpus is one line and exit 2.
  Needs the corpora: bash recipes/fetch_lm_data.sh (skipped with a note when absent).

  Run: build/ltorch /usr/bin/busted spec/recipes/lora_finetune_spec.lua   (~25 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local cache = os.getenv("LTORCH_DATA_CACHE") or ((os.getenv("HOME") or "/tmp") .. "/.cache/ltorch/datasets")
local have = io.open(cache .. "/hamlet/hamlet-act-1.txt", "rb") and io.open(cache .. "/moby-dick/package/data/chapter_1.txt", "rb")

local function run(args)
  local p = io.popen(bin .. " recipes/lora_finetune.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("recipes/lora_finetune.lua", function()
  local dir = os.tmpname()
  os.remove(dir)

  local it_data = have and it or pending
  it_data("pretrains, then LoRA lowers the Hamlet loss with the base frozen", function()
    local out, code = run("--pretrain-steps 60 --finetune-steps 30 --eval-batches 4 --out " .. dir)
    assert.are.equal(0, code, out)
    local init = tonumber(out:match("loss at init ([%d%.]+)"))
    assert.is_true(init ~= nil and math.abs(init - math.log(256)) < 0.5, out)
    local start, pre = out:match("LoRA start check: Hamlet val ([%d%.]+) %(equal to the pretrained ([%d%.]+)")
    assert.are.equal(pre, start, out)
    local before, after = out:match("hamlet_val_before ([%d%.]+)  hamlet_val_after ([%d%.]+)")
    assert.is_true(tonumber(after) < tonumber(before), out)
    local trainable, total = out:match("(%d+) trainable of (%d+) parameters")
    assert.is_true(tonumber(trainable) < 0.2 * tonumber(total), out)
    assert.truthy(io.open(dir .. "/lora.pt", "rb"))
  end)

  it("names a missing corpus in one line and exits 2", function()
    local out, code = run("--hamlet /nonexistent/hamlet.txt")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("lora_finetune: Hamlet act I not found: /nonexistent/hamlet.txt", 1, true), out)
  end)
end)
