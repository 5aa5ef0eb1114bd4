-- graph_spec.lua — `:graph expr` in the REPL and `:where expr` in the debugger print the whole
-- autograd graph above a tensor (issue #30 item 4), with piped input.
--
-- Why: when a training step gives a weight no gradient, the question is which path from the
-- loss reaches it; the tree of grad_fn nodes (PyTorch's next_functions) answers it.
--
-- What: `ltorch -i` sessions build graphs (an MLP under MSELoss, a branch used twice, a
-- multi-output op, a chain deeper than the limit) and the tree lines are compared exactly:
-- indentation, node names, "None (needs no grad)" edges, input_nr, "(see above)" for a node met
-- again, AccumulateGrad leaves with shape/dtype/device/requires_grad and the parameter name
-- (model.0.weight) or variable name (w) from the session's scope, the depth-limit note. Under
-- `ltorch --debug`, :where names leaves after the failing frame's local module (net.bias).
-- torch.repl.commands.graph_tree is also called in-process for the line limit.
-- spec/repl/terminal_spec.lua drives :graph on a terminal.
--
-- How (from the repo root):  build/ltorch /usr/bin/busted spec/repl/graph_spec.lua
-- The binary is $LTORCH_BIN, default build/ltorch.

local torch = require "torch"
local commands = require "torch.repl.commands"

local R = require "spec.support.repl_run"
local q, tmpfile, run = R.q, R.tmpfile, R.run

local function has(s, text) assert.truthy(s:find(text, 1, true), s) end
local function block(lines) return "\n" .. table.concat(lines, "\n") .. "\n" end

teardown(R.cleanup)

describe(":graph", function()
  it("prints an MLP's graph under MSELoss with parameter names", function()
    local out, err, rc = run("-i", table.concat({
      "model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))",
      "x = torch.randn(2, 4)",
      "loss = torch.nn.functional.mse_loss(model(x), torch.zeros(2, 1))",
      ":graph loss",
      "",
    }, "\n"))
    assert.are.equal(0, rc, err)
    has(out, "loss: Tensor[] float32 cpu requires_grad grad_fn=<MseLossBackward0>")
    has(out, "\n  made by <MseLossBackward0> (a non-leaf")
    has(out, block({
      "  autograd graph (10 nodes, 4 leaf tensors):",
      "    MseLossBackward0",
      "      AddmmBackward0",
      "        AccumulateGrad -> model.2.bias: Tensor[1] float32 cpu requires_grad",
      "        ReluBackward0",
      "          AddmmBackward0",
      "            AccumulateGrad -> model.0.bias: Tensor[3] float32 cpu requires_grad",
      "            None (needs no grad)",
      "            TBackward0",
      "              AccumulateGrad -> model.0.weight: Tensor[3, 4] float32 cpu requires_grad",
      "        TBackward0",
      "          AccumulateGrad -> model.2.weight: Tensor[1, 3] float32 cpu requires_grad",
      "      None (needs no grad)",
    }))
  end)

  it("prints a shared node once, input_nr of a multi-output op, leaf variable names and .grad", function()
    local out, err, rc = run("-i", table.concat({
      "w = torch.ones(3, {requires_grad = true}); h = w:exp(); y = (h * h + h):sum()",
      ":graph y",
      "y:backward(nil, {retain_graph = true})",
      ":graph h",
      "m = torch.ones(2, 3, {requires_grad = true}); parts = m:unbind(0)",
      ":graph parts[1] + parts[2]",
      ":graph w",
      "",
    }, "\n"))
    assert.are.equal(0, rc, err)
    has(out, block({
      "  autograd graph (5 nodes, 1 leaf tensor):",
      "    SumBackward0",
      "      AddBackward0",
      "        MulBackward0",
      "          ExpBackward0",
      "            AccumulateGrad -> w: Tensor[3] float32 cpu requires_grad",
      "          ExpBackward0 (see above)",
      "        ExpBackward0 (see above)",
    }))
    has(out, block({
      "  autograd graph (2 nodes, 1 leaf tensor):",
      "    ExpBackward0",
      "      AccumulateGrad -> w: Tensor[3] float32 cpu requires_grad (.grad set)",
    }))
    has(out, block({
      "  autograd graph (3 nodes, 1 leaf tensor):",
      "    AddBackward0",
      "      UnbindBackward0",
      "        AccumulateGrad -> m: Tensor[2, 3] float32 cpu requires_grad",
      "      UnbindBackward0 (input_nr=1) (see above)",
    }))
    -- a leaf keeps its old report
    has(out, "\nw: Tensor[3] float32 cpu requires_grad min=1 max=1 mean=1 nan=0 inf=0\n"
      .. "  a leaf that requires grad: backward() accumulates into its .grad = Tensor[3] float32 cpu")
  end)

  it("stops at the depth limit with a note", function()
    local out, err, rc = run("-i", table.concat({
      "w = torch.ones(3, {requires_grad = true}); z = w; for i = 1, 40 do z = z * 2 end",
      ":graph z",
      "",
    }, "\n"))
    assert.are.equal(0, rc, err)
    has(out, ("  autograd graph (%d nodes, 0 leaf tensors, cut short):\n    MulBackward0\n      MulBackward0\n")
      :format(commands.GRAPH_DEPTH + 1))
    has(out, "\n" .. ("  "):rep(commands.GRAPH_DEPTH + 2)
      .. ("  ... (2 inputs below the depth limit of %d levels)\n"):format(commands.GRAPH_DEPTH))
    assert.falsy(out:find("AccumulateGrad", 1, true), out)
  end)

  it("stops at the line limit with a note (graph_tree)", function()
    local leaves = {}
    for i = 1, commands.GRAPH_LINES + 10 do leaves[i] = torch.ones(1, { requires_grad = true }) end
    local y = torch.cat(leaves)  -- CatBackward0 with one AccumulateGrad per leaf
    local lines, nodes, n_leaves, cut = commands.graph_tree(y.grad_fn, "", nil)
    assert.is_true(cut)
    assert.equal(commands.GRAPH_LINES + 1, #lines)
    assert.equal(commands.GRAPH_LINES, nodes)
    assert.equal(commands.GRAPH_LINES - 1, n_leaves)
    assert.equal("CatBackward0", lines[1])
    assert.equal("  AccumulateGrad -> Tensor[1] float32 cpu requires_grad", lines[2])
    assert.equal(("... (the graph goes on: only the first %d lines are shown)"):format(commands.GRAPH_LINES),
      lines[#lines])
  end)
end)

describe(":where in the debugger", function()
  it("names leaves after the frame's local module", function()
    local script = tmpfile([[
local torch = require "torch"
local function step(net, x)
  local h = net(x):relu()
  local loss = (h * h):mean()
  local y = loss:matmul(torch.ones(3, 3))
  return y
end
local model = torch.nn.Linear(2, 3)
step(model, torch.ones(4, 2))
]])
    local out = run("--debug " .. q(script), ":where loss\n:c\n")
    has(out, block({
      "  autograd graph (7 nodes, 2 leaf tensors):",
      "    MeanBackward0",
      "      MulBackward0",
      "        ReluBackward0",
      "          AddmmBackward0",
      "            AccumulateGrad -> net.bias: Tensor[3] float32 cpu requires_grad",
      "            None (needs no grad)",
      "            TBackward0",
      "              AccumulateGrad -> net.weight: Tensor[3, 2] float32 cpu requires_grad",
      "        ReluBackward0 (see above)",
    }))
  end)
end)
