--[[
  spec/examples/train_mlp_spec.lua — the foundation's end-to-end check: the Fashion-MNIST MLP
  example (plain SGD in Lua) runs under build/ltorch, its loss at init is near ln(10), the
  training loss falls epoch over epoch and the test accuracy beats 80 %.

  Run: build/ltorch /usr/bin/busted spec/examples/train_mlp_spec.lua   (~10 s)
]]
describe("examples/train_mlp_fashion_mnist.lua", function()
  local output, ok

  setup(function()
    local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
    local p = io.popen(bin .. " examples/train_mlp_fashion_mnist.lua 3 128 0.1 0 2>&1; echo \"exit=$?\"")
    output = p:read("*a")
    p:close()
    ok = output:match("exit=(%d+)%s*$") == "0"
  end)

  it("exits 0", function()
    assert.is_true(ok, output)
  end)

  it("starts near the loss of a uniform guess over 10 classes", function()
    local init = tonumber(output:match("loss at init ([%d%.]+)"))
    assert.is_number(init, output)
    assert.is_true(math.abs(init - math.log(10)) < 0.3, "loss at init " .. tostring(init))
  end)

  it("lowers the training loss every epoch", function()
    local losses = {}
    for l in output:gmatch("train loss ([%d%.]+)") do losses[#losses + 1] = tonumber(l) end
    assert.are.equal(3, #losses, output)
    assert.is_true(losses[1] < math.log(10), output)
    for i = 2, #losses do assert.is_true(losses[i] < losses[i - 1], output) end
  end)

  it("beats 80 % test accuracy", function()
    local acc = tonumber(output:match("final test accuracy ([%d%.]+) %%"))
    assert.is_number(acc, output)
    assert.is_true(acc > 80, "test accuracy " .. tostring(acc))
  end)
end)
