-- debugger_spec.lua — the post-mortem debugger as a daily tool, with piped input: it opens in
-- the user's own frame (library frames folded), shows the failing line in context, :locals
-- gives one line per local, :p one value in full, :graph a tensor's autograd facts.
--
-- Why: `ltorch --debug script.lua` used to stop in `_C.lua:85 'check'`, and `:locals` dumped
-- the whole torch table and crashed on a builtin; these are what a user sees first.
--
-- What: a script whose matmul fails inside the library (torch._C's check, two frames below
-- the user's `step`), run under `ltorch --debug` with commands on stdin; stdout is compared.
-- spec/repl/terminal_spec.lua drives the same on a terminal.
--
-- How (from the repo root):  build/ltorch /usr/bin/busted spec/repl/debugger_spec.lua
-- The binary is $LTORCH_BIN, default build/ltorch.

local R = require "spec.support.repl_run"
local q, tmpfile, run = R.q, R.tmpfile, R.run

local function has(s, text) assert.truthy(s:find(text, 1, true), s) end

teardown(R.cleanup)

local SCRIPT = [[
local torch = require "torch"
local function step(model, x)
  local w = torch.ones(3, 4)
  local cfg = { lr = 0.1 }
  local big = {}
  for i = 1, 500 do big[i] = i end
  local show = print
  local h = model(x)
  local y = h:matmul(w)
  return y
end
local model = torch.nn.Linear(2, 2)
step(model, torch.tensor({ { 1, 0 / 0 }, { 3, 4 } }))
]]

describe("post-mortem debugger", function()
  local script = tmpfile(SCRIPT)

  it("opens in the user's frame with the failing line in context", function()
    local out, err, rc = run("--debug " .. q(script), ":bt\n:c\n")
    assert.are.equal(1, rc, err)
    assert.truthy(out:find("post%-mortem at [^\n]*:9 in function 'step'"), out)
    has(out, "(2 library frames folded: :frames all shows them)")
    has(out, "     8    local h = model(x)\n->   9    local y = h:matmul(w)\n    10    return y\n")
    assert.truthy(out:find("  ... 2 library frames %(:frames all%)\n> #3 [^\n]*:9 in function 'step'\n  #4 [^\n]*:13 in main chunk"), out)
    assert.falsy(out:find("_C.lua", 1, true), out)
    has(err, "mat1 and mat2 shapes cannot be multiplied")
  end)

  it(":locals prints one line per local, tensors and modules summarised", function()
    local out, err = run("--debug " .. q(script), ":locals\n:c\n")
    has(out, "\nmodel = Linear (nn module): 6 parameters in 2 tensors\n")
    has(out, "\nx = Tensor[2, 2] float32 cpu min=1 max=4 mean=2.667 nan=1 inf=0\n")
    has(out, "\nw = Tensor[3, 4] float32 cpu min=1 max=1 mean=1 nan=0 inf=0\n")
    has(out, "\ncfg = { lr = 0.1 }\n")
    has(out, "\nbig = table, 500 fields\n")
    has(out, "\nshow = builtin: print\n")
    has(out, "\ntorch (upvalue) = module \"torch\" (table, ")
    assert.falsy(out:find("(REPL)", 1, true), out)
    assert.falsy(err:find("(REPL)", 1, true), err)
    assert.falsy(out:find("tensor([[", 1, true), out)
  end)

  it(":p prints one value in full; :graph and :where expr give autograd facts", function()
    local out = run("--debug " .. q(script), ":p w\n:p big\n:graph h\n:where model\n:c\n")
    has(out, "tensor([[1., 1., 1., 1.],")
    has(out, "Tensor shape=[3, 4] dtype=torch.float32 device=cpu")
    has(out, "\n  499,\n  500\n}\n")
    has(out, "h: Tensor[2, 2] float32 cpu requires_grad grad_fn=<AddmmBackward0>")
    has(out, "  made by <AddmmBackward0>")
    has(out, "model.weight: Tensor[2, 2] float32 cpu requires_grad")
    has(out, "  a leaf that requires grad: backward() accumulates into its .grad = nil")
  end)

  it(":up/:down skip library frames until :frames all", function()
    local out, err = run("--debug " .. q(script), ":down\n:up\n:down\n:frames all\n:down\n:locals\n:frames user\n:frame 1\n:c\n")
    has(err, "already at the innermost frame")
    assert.truthy(out:find("\n#4 [^\n]*:13 in main chunk\n"), out)
    has(out, "showing all frames\n")
    assert.truthy(out:find("\n  #1 [^\n]*_C.lua:%d+ in function 'check'\n"), out)
    assert.truthy(out:find("\n#2 [^\n]* in function 'matmul'\n"), out)
    has(out, "library frames folded\n")
    assert.truthy(out:find("\n#1 [^\n]*_C.lua:%d+ in function 'check'\n"), out)
  end)

  it("evaluates code in the selected frame after folding", function()
    local out = run("--debug " .. q(script), "cfg.lr * 10\nx:sum()\n:c\n")
    has(out, "\n1\n")
    has(out, "tensor(nan)")
  end)
end)
