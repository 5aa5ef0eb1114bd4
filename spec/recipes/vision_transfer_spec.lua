--[[
  spec/recipes/vision_transfer_spec.lua — recipes/vision_transfer.lua and recipes/resnet.lua.

  What it checks:
    - an end-to-end run at CI size (600 Fashion-MNIST PNGs written here, 32x32, one epoch per
      phase): trainable counts of both phases, loss at init, val accuracy above chance, the
      metrics JSONL and the checkpoint (model + optimizer + epoch + config);
    - --weights takes that checkpoint, a state dict from torch.save(model:state_dict()) as .pt
      and as .safetensors, and replaces the head; phase 1 leaves the frozen backbone (BatchNorm
      statistics included) unchanged;
    - the ResNet-18's state-dict keys, against a list built here by hand (always) and against
      torchvision's resnet18 (torchvision 0.26 in the setup's .venv): its
      state dict saved by PyTorch loads with strict keys, and eval-mode outputs on the same
      input agree within 1e-4; a torchvision 1000-class file gets a new 10-class head;
    - bad flags and files: one line, the usage, exit 2, no traceback.
    - --amp on the CPU (40 images, the head phase only: ResNet-18 in bfloat16 is slow on a CPU
      without bfloat16 instructions): bfloat16 trains (finite losses, a checkpoint); float16 adds
      a GradScaler whose state is in the checkpoint; --device cuda without CUDA, a bad
      --amp-dtype and float16 without --amp are usage errors.
    - image_data.resize_crop: shorter side to S, centre crop, uint8 (3, S, S).

  Run: build/ltorch /usr/bin/busted spec/recipes/vision_transfer_spec.lua   (~40 s on 2 cores)
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"
local resnet = require "recipes.resnet"
local image_data = require "recipes.image_data"

local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p " .. tmp)

local function run(args)
  local p = io.popen(bin .. " recipes/vision_transfer.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- The first n Fashion-MNIST test images as grayscale PNGs in dir/<class>/.
local function image_folder(dir, n)
  local fm = require "torch.data.fashion_mnist_files"
  local images, labels = fm.load("test")
  for c = 0, 9 do os.execute(("mkdir -p %s/%d"):format(dir, c)) end
  for i = 0, n - 1 do
    torch.utils.data.image.write_png(("%s/%d/%05d.png"):format(dir, labels[i]:item(), i), images:select(0, i))
  end
end

local data = tmp .. "/png"
local CI = "--data " .. data .. " --image-size 32 --epochs-head 1 --epochs-finetune 1 --batch-size 64 "

describe("recipes/vision_transfer.lua", function()
  local out, code
  local dir = tmp .. "/run"

  setup(function()
    image_folder(data, 600)
    out, code = run(CI .. "--out " .. dir)
  end)

  it("runs both phases at CI size and beats chance", function()
    assert.are.equal(0, code, out)
    assert.truthy(out:find("10 classes, 480 train / 120 val images at 32x32", 1, true), out)
    assert.truthy(out:match("loss at init [%d%.]+ %(uniform guess ln%(10%) = 2%.3026%)"), out)
    assert.truthy(out:find("phase 1 (head only): 5130 of 11181642 parameters trainable", 1, true), out)
    assert.truthy(out:find("head epoch 1/1  train loss", 1, true), out)
    assert.truthy(out:find("phase 2 (fine-tune all): 11181642 of 11181642 parameters trainable; backbone lr 0.0001, head lr 0.001", 1, true), out)
    assert.truthy(out:find("finetune epoch 1/1  train loss", 1, true), out)
    local acc, base = out:match("final val accuracy ([%d%.]+) %% %(majority%-class baseline ([%d%.]+) %%%)")
    assert.is_true(tonumber(acc) ~= nil and tonumber(acc) > 15, out)   -- chance: 10 %
    assert.is_true(tonumber(base) < 20, out)
  end)

  it("writes metrics JSONL and a checkpoint with model, optimizer, epoch and config", function()
    local jsonl = read(dir .. "/metrics.jsonl")
    assert.truthy(jsonl:match('"phase":"head"') and jsonl:match('"phase":"finetune"'), jsonl)
    local st = torch.load(dir .. "/checkpoint.pt")
    assert.are.equal(2, st.epoch)
    assert.are.equal(10, st.config.num_classes)
    assert.are.equal(32, st.config.image_size)
    assert.are.equal("0", st.config.classes[1])
    assert.truthy(st.model["layer4.1.bn2.running_var"])
    assert.are.equal(2, #st.optimizer.param_groups)   -- backbone and head
  end)

  it("--weights takes this recipe's checkpoint and plain state dicts (.pt, .safetensors)", function()
    local m = resnet.resnet18({ num_classes = 7 })
    torch.save(m:state_dict(), tmp .. "/sd7.pt")
    torch.save(m:state_dict(), tmp .. "/sd7.safetensors")
    for _, case in ipairs({ { dir .. "/checkpoint.pt", 10 }, { tmp .. "/sd7.pt", 7 }, { tmp .. "/sd7.safetensors", 7 } }) do
      local o, c = run(CI .. "--limit-train 64 --epochs-finetune 0 --weights " .. case[1] .. " --out " .. tmp .. "/w")
      assert.are.equal(0, c, o)
      assert.truthy(o:find(("from weights %s (strict keys; head %d -> 10 classes)"):format(case[1], case[2]), 1, true), o)
      assert.truthy(o:find("phase 1 (head only): 5130 of", 1, true), o)
    end
    -- phase 1 only: the frozen backbone, BatchNorm running statistics included, is unchanged
    local after, before = torch.load(tmp .. "/w/checkpoint.pt").model, m:state_dict()
    for _, k in ipairs({ "conv1.weight", "layer1.0.bn1.running_var", "layer4.1.bn2.running_mean",
        "layer2.0.downsample.1.num_batches_tracked" }) do
      assert.is_true(after[k]:equal(before[k]), k)
    end
    assert.is_false(after["fc.weight"]:size(0) == before["fc.weight"]:size(0))
  end)

  describe("bad input: one line, the usage, exit 2", function()
    local cases = {
      { "--bogus 1", "unknown flag 'bogus'" },
      { "--data " .. tmp .. "/missing", "data folder not found: " .. tmp .. "/missing" },
      { "--image-size 20", "--data DIR is required" },
      { "--data " .. data .. " --image-size 16", "--image-size must be at least 32" },
      { "--data " .. data .. " --weights " .. tmp .. "/none.pt", "weights file not found: " .. tmp .. "/none.pt" },
      { "--data " .. data .. " --weights " .. tmp .. "/junk.pt", "cannot read --weights " .. tmp .. "/junk.pt: " },
      { "--data " .. data .. " --weights " .. tmp .. "/other.pt", "is not a resnet18 state dict (no tensor 'fc.weight')" },
      { "--data " .. data .. " --weights " .. tmp .. "/wrong.pt", "does not match resnet18: 120 missing keys (bn1.weight, bn1.bias, bn1.running_mean, ...); 1 unexpected keys (extra.weight)" },
    }
    setup(function()
      local f = assert(io.open(tmp .. "/junk.pt", "wb")); f:write("not a checkpoint\n"); f:close()
      torch.save({ w = torch.zeros(2) }, tmp .. "/other.pt")
      torch.save({ ["conv1.weight"] = torch.zeros(64, 3, 7, 7), ["fc.weight"] = torch.zeros(10, 512),
        ["extra.weight"] = torch.zeros(1) }, tmp .. "/wrong.pt")
    end)
    for _, case in ipairs(cases) do
      it(case[1], function()
        local o, c = run(case[1])
        assert.are.equal(2, c, o)
        local first = o:match("^[^\n]*")
        assert.truthy(first:find("vision_transfer: ", 1, true) == 1, o)
        assert.truthy(first:find(case[2], 1, true), o)
        assert.truthy(o:find("usage: ltorch recipes/vision_transfer.lua", 1, true), o)
        assert.falsy(o:find("traceback", 1, true), o)
      end)
    end
  end)
end)

describe("recipes/vision_transfer.lua --amp (CPU)", function()
  local small = tmp .. "/png40"
  local TINY = "--device cpu --data " .. small .. " --limit-train 16 --batch-size 16 --epochs-finetune 0 "
  setup(function() image_folder(small, 40) end)

  it("--amp trains the head in bfloat16 and writes the checkpoint", function()
    local o, c = run(TINY .. "--amp --out " .. tmp .. "/bf16")
    assert.are.equal(0, c, o)
    assert.truthy(o:find("from random init on cpu, amp bfloat16\n", 1, true), o)
    local tl, vl = o:match("head epoch 1/1  train loss ([%d%.]+)  train acc [%d%.]+ %%  val loss ([%d%.]+)")
    assert.is_true(tonumber(tl) ~= nil and tonumber(vl) ~= nil and tonumber(vl) < 10, o)   -- finite
    local st = torch.load(tmp .. "/bf16/checkpoint.pt")
    assert.is_nil(st.scaler)
    assert.is_true(st.config.amp)
  end)

  it("--amp --amp-dtype float16 adds a GradScaler, its state in the checkpoint", function()
    local o, c = run(TINY .. "--amp --amp-dtype float16 --out " .. tmp .. "/fp16")
    assert.are.equal(0, c, o)
    assert.truthy(o:find("on cpu, amp float16 + GradScaler\n", 1, true), o)
    assert.truthy(o:match("head epoch 1/1  train loss [%d%.]+ .- loss scale %d+, skipped steps %d+"), o)
    local st = torch.load(tmp .. "/fp16/checkpoint.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(1, st.scaler._growth_tracker)   -- 16 images, batch 16: one update()
  end)

  it("--device cuda without CUDA, a bad --amp-dtype, float16 without --amp: one line, usage, exit 2", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
      { "--device cuda:x", "--device must be auto, cpu, cuda or cuda:N, got 'cuda:x'" },
    }
    if not torch.cuda.is_available() then cases[#cases + 1] = { "--device cuda", "--device cuda is not available" } end
    for _, case in ipairs(cases) do
      local o, c = run("--data " .. small .. " " .. case[1])
      assert.are.equal(2, c, o)
      assert.truthy(o:find("vision_transfer: " .. case[2], 1, true) == 1, o)
      assert.truthy(o:find("usage: ltorch recipes/vision_transfer.lua", 1, true), o)
    end
  end)
end)

describe("recipes/resnet.lua", function()
  -- torchvision's resnet18 state-dict keys, in its order, written out from resnet.py.
  local function torchvision_keys()
    local keys = {}
    local function bn(p)
      for _, s in ipairs({ "weight", "bias", "running_mean", "running_var", "num_batches_tracked" }) do keys[#keys + 1] = p .. s end
    end
    keys[1] = "conv1.weight"; bn("bn1.")
    for layer = 1, 4 do
      for block = 0, 1 do
        local p = ("layer%d.%d."):format(layer, block)
        keys[#keys + 1] = p .. "conv1.weight"; bn(p .. "bn1.")
        keys[#keys + 1] = p .. "conv2.weight"; bn(p .. "bn2.")
        if layer > 1 and block == 0 then keys[#keys + 1] = p .. "downsample.0.weight"; bn(p .. "downsample.1.") end
      end
    end
    keys[#keys + 1] = "fc.weight"; keys[#keys + 1] = "fc.bias"
    return keys
  end

  it("has torchvision's 122 state-dict keys in its order, and its parameter count", function()
    local m = resnet.resnet18({ num_classes = 10 })
    assert.are.same(torchvision_keys(), m:state_dict_keys())
    assert.are.equal(11181642, m:num_parameters())
    assert.are.equal(11689512, resnet.resnet18():num_parameters())   -- torchvision's 1000-class figure
  end)

  it("loads torchvision's resnet18 with strict keys and matches its eval outputs (tol 1e-4)", function()
    if not pytorch.available() or not pcall(pytorch.run, "import torchvision\nprint(1)") then
      pending("needs torchvision in " .. pytorch.python .. " (bash scripts/setup.sh installs it)")
      return
    end
    local keys = pytorch.run(([[
import torchvision
torch.manual_seed(0)
m = torchvision.models.resnet18(num_classes=10)
with torch.no_grad():
    for _ in range(2): m(torch.randn(4, 3, 64, 64))   # move BatchNorm running stats off their init
m.eval()
x = torch.randn(2, 3, 64, 64)
with torch.no_grad(): y = m(x)
torch.save(m.state_dict(), "%s/tv10.pt")
torch.save({"x": x, "y": y}, "%s/io.pt")
torch.save(torchvision.models.resnet18().state_dict(), "%s/tv1000.pt")
print(json.dumps(list(m.state_dict().keys())))]]):format(tmp, tmp, tmp))
    local m = resnet.resnet18({ num_classes = 10 })
    assert.are.same(keys, m:state_dict_keys())
    local report = m:load_state_dict(torch.load(tmp .. "/tv10.pt"), true)
    assert.are.same({}, report.missing_keys)
    assert.are.same({}, report.unexpected_keys)
    m:eval()
    local io_ = torch.load(tmp .. "/io.pt")
    local y = torch.inference_mode(function() return m(io_.x) end)
    assert.is_true((y - io_.y):abs():max():item() < 1e-4)
    local o, c = run(CI .. "--limit-train 64 --epochs-head 0 --epochs-finetune 0 --weights " .. tmp .. "/tv1000.pt --out " .. tmp .. "/tv")
    assert.are.equal(0, c, o)
    assert.truthy(o:find("(strict keys; head 1000 -> 10 classes)", 1, true), o)
  end)
end)

describe("recipes/image_data.lua resize_crop", function()
  it("resizes the shorter side to S and centre-crops, as uint8 (3, S, S)", function()
    local big = torch.randint(0, 256, { 40, 50, 3 }):to(torch.uint8)
    local small = torch.full({ 20, 28, 3 }, 7):to(torch.uint8)
    local a, b = image_data.resize_crop(big, 32), image_data.resize_crop(small, 32)
    assert.are.same({ 3, 32, 32 }, { a:size(0), a:size(1), a:size(2) })
    assert.are.equal(torch.uint8, b.dtype)
    assert.are.equal(7, b:min():item())   -- a constant image stays constant
    assert.are.equal(7, b:max():item())
    local same = torch.randint(0, 256, { 32, 32, 3 }):to(torch.uint8)
    assert.is_true(image_data.resize_crop(same, 32):equal(same:permute(2, 0, 1)))
  end)
end)
