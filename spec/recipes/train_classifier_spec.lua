--[[
  spec/recipes/train_classifier_spec.lua — recipes/train_classifier.lua end to end at CI size
  (Fashion-MNIST, 2000 training images, 1 epoch), then its outputs: metrics JSONL, the
  best/last checkpoints, --resume, a CSV table for each task (binary, multiclass, regression:
  small tables written here), and bad flags / configs (one line + usage, exit 2).
  Device and mixed precision: --amp trains in bfloat16 on the CPU; --amp --amp-dtype float16
  trains with a GradScaler whose state is in the checkpoint and comes back with --resume;
  evaluate.lua / inference.lua take --amp; --device cuda on a machine without CUDA, a bad
  --amp-dtype and float16 without --amp are usage errors.
  The protocol other tools use (recipes.classifier_lib.build) is checked directly.

  Run: build/ltorch /usr/bin/busted spec/recipes/train_classifier_spec.lua   (~30 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p " .. tmp)

local function run(args)
  local p = io.popen(bin .. " recipes/train_classifier.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- A small deterministic table: y depends on x1 + x2 (so a model can learn it).
local function table_csv(path, kind)
  local lines, s = { "x1,x2,x3,y" }, 1
  local function rnd() s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 * 2 - 1 end
  for _ = 1, 300 do
    local a, b, c = rnd(), rnd(), rnd()
    local y
    if kind == "binary" then y = a + b > 0 and "yes" or "no"
    elseif kind == "multiclass" then y = a + b < -0.5 and 0 or (a + b < 0.5 and 1 or 2)
    else y = ("%.4f"):format(3 * a - 2 * b + 0.5) end
    lines[#lines + 1] = ("%.4f,%.4f,%.4f,%s"):format(a, b, c, y)
  end
  write(path, table.concat(lines, "\n") .. "\n")
end

describe("recipes/train_classifier.lua", function()
  local out, code
  local dir = tmp .. "/fm"

  setup(function()
    out, code = run("--limit-train 2000 --limit-eval 1000 --epochs 1 --out " .. dir)
  end)

  it("trains and reports on the test set", function()
    assert.are.equal(0, code, out)
    assert.truthy(out:match("loss at init ([%d%.]+) %(uniform guess ln%(10%)"), out)
    local acc = tonumber(out:match("test accuracy ([%d%.]+) %%"))
    assert.is_true(acc ~= nil and acc > 55, out)
    assert.truthy(out:find("macro avg", 1, true), out)
    assert.truthy(out:find("confusion matrix", 1, true), out)
    assert.truthy(out:match("result: fashion_mnist mlp  accuracy 0%.%d+"), out)
    assert.truthy(out:match("samples/s .- eta"), out)
  end)

  it("writes metrics JSONL, best and last checkpoints, and the test report", function()
    local jsonl = read(dir .. "/metrics.jsonl")
    assert.truthy(jsonl and jsonl:match('"val_loss"') and jsonl:match('"train_accuracy"'), jsonl)
    assert.truthy(read(dir .. "/checkpoints/checkpoints.json"))
    assert.truthy(read(dir .. "/test_report.txt"):find("confusion matrix", 1, true))
  end)

  it("resumes from the latest checkpoint", function()
    local o, c = run("--limit-train 2000 --limit-eval 1000 --epochs 2 --resume --out " .. dir)
    assert.are.equal(0, c, o)
    assert.truthy(o:find("resumed from", 1, true), o)
    assert.falsy(o:find("epoch 1  train", 1, true), o)
    assert.truthy(o:find("epoch 2  train", 1, true), o)
    local _, n = read(dir .. "/metrics.jsonl"):gsub("\n", "")
    assert.are.equal(2, n)
  end)

  it("resumes to the same result as a run that never stopped (same batches, same RNG)", function()
    local straight = tmp .. "/straight"
    local o, c = run("--limit-train 2000 --limit-eval 1000 --epochs 2 --out " .. straight)
    assert.are.equal(0, c, o)
    local function epoch2(path)
      local line = select(3, read(path):find("\n([^\n]*)\n$"))
      return { tonumber(line:match('"train_loss":([%d%.eE%-]+)')), tonumber(line:match('"val_loss":([%d%.eE%-]+)')) }
    end
    local a, b = epoch2(straight .. "/metrics.jsonl"), epoch2(dir .. "/metrics.jsonl")
    assert.is_true(a[1] ~= nil and a[2] ~= nil)
    assert.near(a[1], b[1], 1e-6 * math.max(1, a[1]))
    assert.near(a[2], b[2], 1e-6 * math.max(1, a[2]))
  end)

  it("evaluates and predicts from the checkpoint", function()
    local p = io.popen(bin .. " recipes/evaluate.lua " .. dir .. "/checkpoints --json " .. dir .. "/eval.json 2>&1; echo \"exit=$?\"")
    local o = p:read("*a"); p:close()
    assert.truthy(o:match("exit=0"), o)
    assert.truthy(o:match("accuracy [%d%.]+ %%"), o)
    assert.truthy(read(dir .. "/eval.json"):match('"macro"'))
    p = io.popen(bin .. " recipes/inference.lua " .. dir .. "/checkpoints/checkpoint-00000002.pt --output " .. dir .. "/pred.csv 2>&1; echo \"exit=$?\"")
    o = p:read("*a"); p:close()
    assert.truthy(o:match("exit=0"), o)
    local csv = read(dir .. "/pred.csv")
    local _, rows = csv:gsub("\n", "")
    assert.are.equal(10001, rows)
    assert.truthy(csv:match("^index,prediction,probability\n0,[%a%-/ ]+,0%.%d+\n"), csv:sub(1, 200))
  end)

  for _, case in ipairs({ { "binary", "roc_auc", "BCE" }, { "multiclass", "accuracy" }, { "regression", "r2" } }) do
    it("trains on a CSV table: " .. case[1], function()
      local path = tmp .. "/" .. case[1] .. ".csv"
      table_csv(path, case[1])
      local o, c = run(("--data csv:%s --target y --epochs 15 --batch-size 32 --out %s/%s"):format(path, tmp, case[1]))
      assert.are.equal(0, c, o)
      assert.truthy(o:find("task " .. case[1], 1, true), o)
      local v = tonumber(o:match(case[2] .. " (%-?[%d%.]+)"))
      assert.is_true(v ~= nil and v > 0.8, o)
      local e = io.popen(bin .. " recipes/evaluate.lua " .. tmp .. "/" .. case[1] .. "/checkpoints 2>&1"):read("*a")
      assert.truthy(e:match(case[1] == "regression" and "R2 0%.%d+" or "accuracy [%d%.]+ %%"), e)
      local pr = io.popen(bin .. " recipes/inference.lua " .. tmp .. "/" .. case[1] .. "/checkpoints/checkpoint-00000015.pt --input " .. path .. " 2>&1"):read("*a")
      assert.truthy(pr:match("^index,prediction"), pr)
    end)
  end

  describe("bad input: one line, the usage, exit 2", function()
    local cases = {
      { "--epochs abc", "flag 'epochs' expects a number, got 'abc'" },
      { "--bogus 1", "unknown flag 'bogus'" },
      { "--model rnn", "model must be one of cnn|mlp, got 'rnn'" },
      { "--config /nonexistent.lua", "config file not found: /nonexistent.lua" },
      { "--data csv:/nonexistent.csv", "data file not found: /nonexistent.csv" },
      { "--config " .. tmp .. "/bad.lua", "unknown config key 'epoch'" },
      { "--config " .. tmp .. "/badtype.lua", "config key 'lr' expects a number, got string" },
      { "--device tpu", "--device must be auto, cpu, cuda or cuda:N, got 'tpu'" },
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp (mixed precision is off)" },
    }
    if not require("torch").cuda.is_available() then
      cases[#cases + 1] = { "--device cuda", "--device cuda is not available (no CUDA device, or a CPU-only libtorch)" }
    end
    for _, case in ipairs(cases) do
      it(case[1], function()
        write(tmp .. "/bad.lua", "return { epoch = 3 }\n")
        write(tmp .. "/badtype.lua", "lr = '0.1'\n")
        local o, c = run(case[1])
        assert.are.equal(2, c, o)
        assert.truthy(o:find("train_classifier: " .. case[2], 1, true), o)
        assert.truthy(o:find("usage: ltorch recipes/train_classifier.lua", 1, true), o)
        assert.falsy(o:find("traceback", 1, true), o)
      end)
    end
  end)
end)

describe("recipes/train_classifier.lua --amp (CPU)", function()
  local SMALL = "--device cpu --limit-train 500 --limit-eval 200 --batch-size 128 "
  local function sh(cmd)
    local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
    local o = p:read("*a")
    p:close()
    return o, tonumber(o:match("exit=(%d+)%s*$"))
  end

  it("--amp trains in bfloat16; evaluate.lua and inference.lua take --amp", function()
    local dir = tmp .. "/bf16"
    local o, c = run(SMALL .. "--epochs 2 --amp --out " .. dir)
    assert.are.equal(0, c, o)
    assert.truthy(o:find("on cpu, amp bfloat16\n", 1, true), o)
    local l1 = tonumber(o:match("epoch 1  train loss ([%d%.]+)"))
    local l2 = tonumber(o:match("epoch 2  train loss ([%d%.]+)"))
    assert.is_true(l1 ~= nil and l2 ~= nil and l2 < l1, o)
    assert.truthy(read(dir .. "/checkpoints/checkpoint-00000002.pt"))
    o, c = sh(bin .. " recipes/evaluate.lua --amp --device cpu " .. dir .. "/checkpoints")
    assert.are.equal(0, c, o)
    assert.truthy(o:find("on cpu, amp bfloat16)", 1, true), o)
    o, c = sh(bin .. " recipes/inference.lua " .. dir .. "/checkpoints/checkpoint-00000002.pt --amp --device cpu --output " .. dir .. "/p.csv")
    assert.are.equal(0, c, o)
    assert.truthy(read(dir .. "/p.csv"):match("^index,prediction,probability\n0,"))
  end)

  it("--amp --amp-dtype float16 trains with a GradScaler; its state is checkpointed and resumed", function()
    local dir = tmp .. "/fp16"
    local o, c = run(SMALL .. "--epochs 1 --amp --amp-dtype float16 --out " .. dir)
    assert.are.equal(0, c, o)
    assert.truthy(o:find("on cpu, amp float16 + GradScaler\n", 1, true), o)
    assert.truthy(o:find("loss scale 65536, skipped steps 0", 1, true), o)
    local st = require("torch").load(dir .. "/checkpoints/checkpoint-00000001.pt")
    local steps = 4                                            -- 500 samples, batch 128
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(steps, st.scaler._growth_tracker)        -- one update() per step
    assert.truthy(read(dir .. "/metrics.jsonl"):match('"loss_scale":%d+'))
    o, c = run(SMALL .. "--epochs 2 --amp --amp-dtype float16 --resume --out " .. dir)
    assert.are.equal(0, c, o)
    st = require("torch").load(dir .. "/checkpoints/checkpoint-00000002.pt")
    assert.are.equal(2 * steps, st.scaler._growth_tracker)     -- the scaler came back with --resume
  end)

  it("evaluate.lua and inference.lua: --device cuda without CUDA and float16 without --amp are usage errors", function()
    local ckpt = tmp .. "/bf16/checkpoints"
    local o, c = sh(bin .. " recipes/evaluate.lua " .. ckpt .. " --amp-dtype float16")
    assert.are.equal(2, c, o)
    assert.truthy(o:find("evaluate: --amp-dtype float16 needs --amp", 1, true), o)
    if not require("torch").cuda.is_available() then
      o, c = sh(bin .. " recipes/inference.lua " .. ckpt .. "/checkpoint-00000002.pt --device cuda")
      assert.are.equal(2, c, o)
      assert.truthy(o:find("inference: --device cuda is not available", 1, true), o)
      assert.truthy(o:find("usage: ltorch recipes/inference.lua", 1, true), o)
    end
  end)
end)

describe("recipes.classifier_lib.build (the protocol other tools call)", function()
  it("returns model, loss_fn, optimizer, loaders and a plain config", function()
    local lib = require "recipes.classifier_lib"
    local path = tmp .. "/proto.csv"
    table_csv(path, "multiclass")
    local parts = lib.build({ data = "csv:" .. path, target = "y", epochs = 1 })
    for _, k in ipairs({ "model", "loss_fn", "optimizer", "train_loader", "val_loader", "config" }) do
      assert.truthy(parts[k], k)
    end
    local batch = parts.train_loader:iter()()
    local loss = parts.loss_fn(parts.model(batch[1]), batch[2])
    assert.is_true(loss:item() > 0)
    assert.are.equal("multiclass", parts.config.meta.task)
  end)
end)
