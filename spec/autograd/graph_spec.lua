--[[
  spec/autograd/graph_spec.lua — x.grad_fn as PyTorch's autograd Node (issue #30 item 4): name(),
  next_functions (a list of {node, input_nr} pairs, nil for an input that needs no grad),
  .variable on AccumulateGrad (the leaf tensor itself), == for the same node, and the node
  keeping the graph above it alive after its tensor is gone.

  Parity: for a few graphs (mul/add/sum chains, an input that needs no grad, Linear + ReLU +
  MSELoss, a branch used twice, a multi-output op read through two outputs) the tree walked
  through next_functions — each node's name and input_nr, a node met again marked "(seen)",
  leaves with their shape — equals the one PyTorch builds (spec/support/pytorch.lua runs the same
  graphs in the venv's PyTorch, on the same libtorch, so node names are identical). Pending when
  PyTorch is not installed.

  Run:  build/ltorch /usr/bin/busted spec/autograd/graph_spec.lua
]]
local torch = require "torch"
local F = require "torch.nn.functional"
local pytorch = require "spec.support.pytorch"

-- The tree above grad_fn as text lines, in the same form as the Python `tree` below.
local function tree(fn)
  local lines, seen = {}, {}
  local function walk(node, nr, depth)
    local pad = ("  "):rep(depth)
    if node == nil then
      lines[#lines + 1] = pad .. "None " .. nr
      return
    end
    local text = pad .. node:name() .. " " .. nr
    local leaf = node.variable
    if leaf ~= nil then text = text .. " shape=[" .. table.concat(leaf.shape, ",") .. "]" end
    for _, s in ipairs(seen) do
      if s == node then
        lines[#lines + 1] = text .. " (seen)"
        return
      end
    end
    seen[#seen + 1] = node
    lines[#lines + 1] = text
    for _, e in ipairs(node.next_functions) do walk(e[1], e[2], depth + 1) end
  end
  walk(fn, 0, 0)
  return table.concat(lines, "\n")
end

-- The same graphs in ltorch, by name.
local function lua_graphs()
  local out = {}
  local x = torch.randn(3, { requires_grad = true })
  out.chain = tree(((x * 2 + 1) * x):sum().grad_fn)

  local w = torch.randn(3, { requires_grad = true })
  local c = torch.randn(3)
  out.no_grad_input = tree((x * c + w:exp() - x * w):mean().grad_fn)

  local lin = torch.nn.Linear(4, 3)
  local inp, target = torch.randn(2, 4), torch.randn(2, 3)
  out.linear_relu_mse = tree(F.mse_loss(F.relu(lin(inp)), target).grad_fn)

  local h = x:sin()
  out.shared_branch = tree((h * h + h):sum().grad_fn)

  local m = torch.randn(2, 3, { requires_grad = true })
  local parts = m:unbind(0)
  out.multi_output = tree((parts[1] * 2 + parts[2]):sum().grad_fn)
  return out
end

local PY = [[
def tree(fn):
    lines, seen = [], []
    def walk(node, nr, depth):
        pad = "  " * depth
        if node is None:
            lines.append(pad + "None " + str(nr))
            return
        text = pad + node.name() + " " + str(nr)
        if type(node).__name__ == "AccumulateGrad":
            text += " shape=[" + ",".join(str(d) for d in node.variable.shape) + "]"
        if any(s is node for s in seen):
            lines.append(text + " (seen)")
            return
        seen.append(node)
        lines.append(text)
        for n, i in node.next_functions:
            walk(n, i, depth + 1)
    walk(fn, 0, 0)
    return "\n".join(lines)

F = torch.nn.functional
out = {}
x = torch.randn(3, requires_grad=True)
out["chain"] = tree(((x * 2 + 1) * x).sum().grad_fn)
w = torch.randn(3, requires_grad=True)
c = torch.randn(3)
out["no_grad_input"] = tree((x * c + w.exp() - x * w).mean().grad_fn)
lin = torch.nn.Linear(4, 3)
inp, target = torch.randn(2, 4), torch.randn(2, 3)
out["linear_relu_mse"] = tree(F.mse_loss(F.relu(lin(inp)), target).grad_fn)
h = x.sin()
out["shared_branch"] = tree((h * h + h).sum().grad_fn)
m = torch.randn(2, 3, requires_grad=True)
parts = m.unbind(0)
out["multi_output"] = tree((parts[0] * 2 + parts[1]).sum().grad_fn)
print(json.dumps(out))
]]

describe("x.grad_fn as an autograd node", function()
  it("is nil on leaves and names the op otherwise, as before", function()
    local x = torch.ones(2, { requires_grad = true })
    assert.is_nil(x.grad_fn)
    assert.is_nil(torch.ones(2).grad_fn)
    local y = x * x
    assert.equal("MulBackward0", y.grad_fn:name())
    assert.equal("<MulBackward0>", tostring(y.grad_fn))
    assert.equal("MulBackward0", y:grad_fn_name())
  end)

  it("lists next_functions as {node, input_nr} pairs, nil for inputs that need no grad", function()
    local x = torch.ones(2, { requires_grad = true })
    local c = torch.ones(2)
    local y = x * c
    local nf = y.grad_fn.next_functions
    assert.equal(2, #nf)
    -- name() is the C++ node's name, as PyTorch's; tostring gives the short one, as its repr
    assert.equal("torch::autograd::AccumulateGrad", nf[1][1]:name())
    assert.equal("<AccumulateGrad>", tostring(nf[1][1]))
    assert.equal(0, nf[1][2])
    assert.is_nil(nf[2][1])
    assert.equal(0, nf[2][2])
    -- the leaf's node has no inputs
    assert.same({}, nf[1][1].next_functions)
  end)

  it("gives AccumulateGrad's leaf as .variable, the same tensor", function()
    local x = torch.ones(2, 2, { requires_grad = true })
    local acc = (x * 2).grad_fn.next_functions[1][1]
    local v = acc.variable
    assert.truthy(v:is_same(x))
    assert.same({ 2, 2 }, v.shape)
    assert.is_true(v.requires_grad)
    assert.is_nil((x * 2).grad_fn.variable)
  end)

  it("compares equal for the same node, however it was reached", function()
    local x = torch.ones(2, { requires_grad = true })
    local h = x:exp()
    local y = h * h
    local nf = y.grad_fn.next_functions
    assert.truthy(nf[1][1] == nf[2][1])
    assert.truthy(nf[1][1] == h.grad_fn)
    assert.truthy(h.grad_fn == h.grad_fn)
    assert.falsy(y.grad_fn == h.grad_fn)
    assert.equal(h.grad_fn:id(), nf[2][1]:id())
    -- both of x*x's edges reach x's one AccumulateGrad
    local z = x * x
    assert.truthy(z.grad_fn.next_functions[1][1] == z.grad_fn.next_functions[2][1])
  end)

  it("gives a multi-output op's outputs their input_nr", function()
    local m = torch.ones(2, 3, { requires_grad = true })
    local parts = m:unbind(0)
    local nf = (parts[1] + parts[2]).grad_fn.next_functions
    assert.equal("UnbindBackward0", nf[1][1]:name())
    assert.equal(0, nf[1][2])
    assert.equal(1, nf[2][2])
    assert.truthy(nf[1][1] == nf[2][1])
  end)

  it("keeps the graph above it alive after the tensors are gone", function()
    local fn
    do
      local x = torch.ones(3, { requires_grad = true })
      fn = ((x + 1) * 3):sum().grad_fn
    end
    collectgarbage()
    collectgarbage()
    assert.equal(table.concat({
      "SumBackward0 0",
      "  MulBackward0 0",
      "    AddBackward0 0",
      "      torch::autograd::AccumulateGrad 0 shape=[3]",
      "      None 0",
      "    None 0",
    }, "\n"), tree(fn))
  end)

  it("walks the same graphs as PyTorch (names, input_nr, shared nodes, leaves)", function()
    if not pytorch.available() then
      pending("PyTorch is not installed (bash scripts/setup.sh puts it in .venv)")
      return
    end
    local want = pytorch.run(PY)
    local got = lua_graphs()
    for _, k in ipairs({ "chain", "no_grad_input", "linear_relu_mse", "shared_branch", "multi_output" }) do
      assert.equal(want[k], got[k], k)
    end
    -- the graphs are not trivial: a shared node and a None edge were seen
    assert.truthy(got.shared_branch:find("(seen)", 1, true), got.shared_branch)
    assert.truthy(got.linear_relu_mse:find("None", 1, true), got.linear_relu_mse)
  end)
end)
