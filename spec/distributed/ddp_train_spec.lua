-- ddp_train_spec.lua — recipes/ddp_train.lua: 2 ranks reach the single-process accuracy.
--
-- Why: the recipe is the end-to-end proof that launcher, process group, DistributedSampler and
-- DDP fit together; with a global batch split across ranks it must train like one process.
--
-- What: the CI-size run (--ci: 6000 train / 2000 test Fashion-MNIST samples, 2 epochs) alone
-- and under tools/run.lua --nproc-per-node 2; the test accuracies must agree within 0.5 points
-- and beat 75 %; only rank 0 logs; metrics.jsonl and a loadable checkpoint (keys without
-- DDP's "module." prefix) are written. Skipped when the Fashion-MNIST files are absent.
--
-- How: build/ltorch /usr/bin/busted spec/distributed/ddp_train_spec.lua
local torch = require "torch"
local h = dofile("spec/distributed/helpers.lua")
local fmnist = require "torch.data.fashion_mnist_files"

local have_data = io.open(fmnist.paths().train_images) ~= nil

describe("recipes/ddp_train.lua", function()
  if not have_data then
    pending("Fashion-MNIST is not installed (" .. fmnist.package .. ")")
    return
  end

  it("trains to the single-process accuracy on 2 ranks (CI size)", function()
    local d1, d2 = h.tmpname(), h.tmpname()
    local out1, rc1 = h.run(("%s recipes/ddp_train.lua --ci --out %s"):format(h.BIN, h.q(d1)), 240)
    assert.equal(0, rc1, out1)
    local out2, rc2 = h.launch(2, "recipes/ddp_train.lua --ci --out " .. h.q(d2), 240)
    assert.equal(0, rc2, out2)
    local a1 = tonumber(out1:match("result: ddp_train world_size 1 test accuracy (%S+)"))
    local a2 = tonumber(out2:match("%[rank 0%] result: ddp_train world_size 2 test accuracy (%S+)"))
    assert.truthy(a1, out1); assert.truthy(a2, out2)
    assert.is_true(a1 > 0.75, out1)
    assert.is_true(math.abs(a1 - a2) <= 0.005, ("1 process %.4f, 2 ranks %.4f"):format(a1, a2))
    assert.falsy(out2:find("[rank 1]", 1, true), "only rank 0 logs:\n" .. out2)
    local f = assert(io.open(d2 .. "/metrics.jsonl"))
    local lines = {}
    for l in f:lines() do lines[#lines + 1] = l end
    f:close()
    assert.equal(2, #lines)
    assert.truthy(lines[2]:find('"world_size": 2', 1, true))
    local ck = torch.load(d2 .. "/checkpoints/last.pt")
    assert.truthy(ck.model["0.weight"])
    assert.is_nil(ck.model["module.0.weight"])
    assert.equal(2, ck.epoch)
    os.execute("rm -rf " .. h.q(d1) .. " " .. h.q(d2))
  end)
end)
